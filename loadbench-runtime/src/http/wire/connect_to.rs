//! `--connect-to HOST:PORT:ADDR:PORT`, as curl spells it: connections for one host and port go to
//! another address, while the URL's host still names the server (the `Host` header, the TLS
//! server name, the certificate checked). How a production host name and its certificate are
//! tested against one chosen machine, behind or before its load balancer.

use std::fmt;
use std::str::FromStr;

use super::tls::TlsOptions;

/// How a run's connections are made: TLS settings, address overrides and the limits a server is
/// held to. The default verifies certificates against the machine's trust store, connects where
/// the URL's host resolves and allows an HTTP/2 response header list of 64 KiB.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// TLS settings, for `https://` targets.
    pub tls: TlsOptions,
    /// Address overrides, tried in order; the first that matches a target decides.
    pub connect_to: Vec<ConnectTo>,
    /// `--follow-redirects N`: the redirects a request follows, over every scenario's
    /// `follow_redirects`; `None` keeps each scenario's.
    pub follow_redirects: Option<u32>,
    /// `--connections N`: the connections every scenario's users share, over its
    /// `connections`; `None` keeps each scenario's.
    pub connections: Option<u32>,
    /// `--pipeline D`: HTTP/1.1 requests in flight per shared connection, over each
    /// scenario's `pipeline`.
    pub pipeline: Option<u32>,
    /// `--http2`: speak HTTP/2 to every scenario's target, whatever its `http2`.
    pub http2: bool,
    /// `--http3`: speak HTTP/3 to every scenario's target, whatever its `http2` or `http3`.
    pub http3: bool,
    /// The most an HTTP/2 response's header list may cost, in bytes, counted as RFC 9113 counts
    /// it: each field's name and value and 32 bytes. Advertised to the server in
    /// `SETTINGS_MAX_HEADER_LIST_SIZE` and enforced while the header block is decoded: a
    /// response past it fails its request as a `protocol` error (the connection goes on), and
    /// no header block is buffered beyond it. 65,536 (64 KiB) by default, as HTTP/1.1's limit
    /// on a response head.
    pub max_header_list_size: u32,
}

/// The default [`ClientOptions::max_header_list_size`]: 64 KiB, as HTTP/1.1's largest head.
pub const DEFAULT_MAX_HEADER_LIST_SIZE: u32 = 64 * 1024;

// Both protocols hold a server to one limit on what a response's head may cost.
const _: () = assert!(DEFAULT_MAX_HEADER_LIST_SIZE as usize == super::h1::MAX_HEAD_BYTES);

impl Default for ClientOptions {
    fn default() -> ClientOptions {
        ClientOptions {
            tls: TlsOptions::default(),
            connect_to: Vec::new(),
            follow_redirects: None,
            connections: None,
            pipeline: None,
            http2: false,
            http3: false,
            max_header_list_size: DEFAULT_MAX_HEADER_LIST_SIZE,
        }
    }
}

impl ClientOptions {
    /// `transport` with these options' overrides applied.
    pub(crate) fn transport(&self, mut transport: crate::config::Transport) -> crate::config::Transport {
        if self.connections.is_some() {
            transport.connections = self.connections;
        }
        if self.pipeline.is_some() {
            transport.pipeline = self.pipeline;
        }
        if self.http2 {
            transport.protocol = crate::config::Protocol::Http2;
        }
        if self.http3 {
            transport.protocol = crate::config::Protocol::Http3;
        }
        transport
    }
}

/// One `--connect-to` rule: `HOST:PORT:ADDR:PORT`. An empty `HOST` or `PORT` matches any; an
/// empty second `PORT` keeps the URL's. IPv6 addresses go in brackets.
///
/// ```
/// use loadbench::http::ConnectTo;
/// let rule: ConnectTo = "api.example.com:443:127.0.0.1:8443".parse().unwrap();
/// assert_eq!(rule.redirect("api.example.com", 443), Some(("127.0.0.1".to_owned(), 8443)));
/// assert_eq!(rule.redirect("other.example.com", 443), None);
/// let any: ConnectTo = "::[::1]:".parse().unwrap();
/// assert_eq!(any.redirect("api.example.com", 443), Some(("::1".to_owned(), 443)));
/// assert!("api.example.com:443".parse::<ConnectTo>().is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectTo {
    host: Option<String>,
    port: Option<u16>,
    to_host: String,
    to_port: Option<u16>,
    text: String,
}

impl ConnectTo {
    /// Where a connection for `host:port` goes instead, if this rule matches it: a host (an
    /// address or a name to resolve, without brackets) and a port.
    pub fn redirect(&self, host: &str, port: u16) -> Option<(String, u16)> {
        let bare = |h: &str| h.trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase();
        let host_matches = self.host.as_deref().is_none_or(|h| bare(h) == bare(host));
        let port_matches = self.port.is_none_or(|p| p == port);
        (host_matches && port_matches).then(|| (self.to_host.clone(), self.to_port.unwrap_or(port)))
    }
}

impl fmt::Display for ConnectTo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl FromStr for ConnectTo {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let usage = || format!("`{text}` is not HOST:PORT:ADDR:PORT (as in api.example.com:443:127.0.0.1:8443)");
        let mut rest = text;
        let mut fields = Vec::with_capacity(4);
        for index in 0..4 {
            // A bracketed IPv6 address holds colons of its own.
            let end = if rest.starts_with('[') {
                let close = rest.find(']').ok_or_else(usage)?;
                close + 1
            } else if index == 3 {
                rest.len()
            } else {
                rest.find(':').ok_or_else(usage)?
            };
            let (field, after) = rest.split_at(end);
            fields.push(field);
            rest = match (index, after.strip_prefix(':')) {
                (3, _) if after.is_empty() => "",
                (3, _) => return Err(usage()),
                (_, Some(after)) => after,
                (_, None) => return Err(usage()),
            };
        }
        let port = |field: &str| -> Result<Option<u16>, String> {
            match field {
                "" => Ok(None),
                digits => match digits.parse::<u16>() {
                    Ok(0) | Err(_) => Err(format!("`{text}`: `{digits}` is not a port from 1 to 65535")),
                    Ok(port) => Ok(Some(port)),
                },
            }
        };
        let bare = |h: &str| h.trim_start_matches('[').trim_end_matches(']').to_owned();
        if fields[2].is_empty() {
            return Err(format!("`{text}`: the address to connect to (the third field) is empty"));
        }
        Ok(ConnectTo {
            host: Some(fields[0]).filter(|h| !h.is_empty()).map(bare),
            port: port(fields[1])?,
            to_host: bare(fields[2]),
            to_port: port(fields[3])?,
            text: text.to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_parse_as_curl_writes_them() {
        let rule = |text: &str| text.parse::<ConnectTo>();
        assert_eq!(rule("h:443:127.0.0.1:8443").unwrap().redirect("H", 443), Some(("127.0.0.1".into(), 8443)));
        assert_eq!(rule(":443:10.0.0.1:").unwrap().redirect("any", 443), Some(("10.0.0.1".into(), 443)));
        assert_eq!(rule(":443:10.0.0.1:").unwrap().redirect("any", 80), None);
        assert_eq!(rule("[::1]:8443:[::1]:9443").unwrap().redirect("[::1]", 8443), Some(("::1".into(), 9443)));
        for bad in ["h:443:127.0.0.1", "h:443::8443", "h:99999:a:1", "h:443:a:0", "h:443:[::1:1", "a:b:c:d"] {
            assert!(rule(bad).is_err(), "{bad}");
        }
    }
}
