//! The server a scenario talks to: its base URL, parsed and resolved once before the run.

use std::net::SocketAddr;

use http::HeaderValue;
use http::uri::{Authority, Scheme, Uri};

/// A base URL such as `http://127.0.0.1:8080/api`, resolved to one socket address.
///
/// Resolution happens once, up front: resolving per connection would put DNS on the hot path and
/// spread the load over several addresses the user did not choose.
#[derive(Debug, Clone)]
pub struct Target {
    url: String,
    addr: SocketAddr,
    host_header: HeaderValue,
    /// Path prefix without a trailing slash (empty for the root).
    base_path: String,
}

/// Why a target URL cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    /// Not a URL at all.
    #[error("target `{url}` is not a valid URL: {reason}")]
    Invalid {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A scheme other than `http`.
    #[error("target `{url}`: only http:// is supported so far (TLS is not built in yet)")]
    UnsupportedScheme {
        /// The URL as given.
        url: String,
    },
    /// The host name did not resolve.
    #[error("target `{url}`: cannot resolve `{host}`: {reason}")]
    Resolve {
        /// The URL as given.
        url: String,
        /// The host part.
        host: String,
        /// The resolver's answer.
        reason: String,
    },
}

impl Target {
    /// Parses `url` and resolves its host.
    ///
    /// ```
    /// let t = loadbench::http::Target::resolve("http://127.0.0.1:9090/api/").unwrap();
    /// assert_eq!(t.addr().port(), 9090);
    /// assert_eq!(t.join("/items"), "/api/items");
    /// assert!(loadbench::http::Target::resolve("http://127.0.0.1:99999/").is_err());
    /// ```
    pub fn resolve(url: &str) -> Result<Target, TargetError> {
        let (uri, host_header) = Self::parse(url)?;
        let authority = uri
            .authority()
            .ok_or_else(|| TargetError::Invalid { url: url.to_owned(), reason: "it has no host".into() })?;
        let host = authority.host();
        let port =
            Self::check_authority(authority).map_err(|reason| TargetError::Invalid { url: url.to_owned(), reason })?;
        // `[::1]` arrives with its brackets; the resolver wants the bare address.
        let bare_host = host.trim_start_matches('[').trim_end_matches(']');
        let addr = std::net::ToSocketAddrs::to_socket_addrs(&(bare_host, port))
            .map_err(|e| TargetError::Resolve { url: url.to_owned(), host: host.to_owned(), reason: e.to_string() })?
            .next()
            .ok_or_else(|| TargetError::Resolve {
                url: url.to_owned(),
                host: host.to_owned(),
                reason: "no addresses".to_owned(),
            })?;
        let base_path = uri.path().trim_end_matches('/').to_owned();
        Ok(Target { url: url.to_owned(), addr, host_header, base_path })
    }

    /// Checks the host and port of an `http://` URL and returns the port to connect to (80 when
    /// none is given). `http::Uri` accepts any digits as a port and `port_u16` turns one out of range
    /// into "no port", which would send the load to port 80 of the wrong server; so the port's text
    /// is read here, and 0 (no server listens there) is refused too.
    ///
    /// ```
    /// let port = |url: &str| {
    ///     let uri: http::Uri = url.parse().unwrap();
    ///     loadbench::http::Target::check_authority(uri.authority().unwrap())
    /// };
    /// assert_eq!(port("http://127.0.0.1:8080/"), Ok(8080));
    /// assert_eq!(port("http://[::1]/"), Ok(80));
    /// assert!(port("http://127.0.0.1:99999/").unwrap_err().contains("99999"));
    /// assert!(port("http://127.0.0.1:0/").is_err());
    /// assert!(port("http://:8080/").is_err());
    /// ```
    pub fn check_authority(authority: &Authority) -> Result<u16, String> {
        let text = authority.as_str();
        if text.contains('@') {
            return Err("user info in the URL is not supported".to_owned());
        }
        if authority.host().is_empty() {
            return Err("it has no host".to_owned());
        }
        // After an IPv6 literal's `]`, or anywhere in a name or IPv4 address: the last `:`.
        let after_host = &text[text.rfind(']').map_or(0, |end| end + 1)..];
        match after_host.rsplit_once(':') {
            // `http://host:/` is `http://host/`, as URLs define an empty port.
            None | Some((_, "")) => Ok(80),
            Some((_, port)) => match port.parse::<u16>() {
                Ok(0) => Err("port 0 is not a port a server listens on; give one from 1 to 65535".to_owned()),
                Ok(port) => Ok(port),
                Err(_) => Err(format!("port {port} is out of range; give one from 1 to 65535")),
            },
        }
    }

    /// Checks that `url` is a usable base URL, without resolving its host.
    pub fn check_syntax(url: &str) -> Result<(), TargetError> {
        Self::parse(url).map(|_| ())
    }

    fn parse(url: &str) -> Result<(Uri, HeaderValue), TargetError> {
        let invalid = |reason: &str| TargetError::Invalid { url: url.to_owned(), reason: reason.to_owned() };
        let uri: Uri = url.parse().map_err(|e: http::uri::InvalidUri| invalid(&e.to_string()))?;
        match uri.scheme() {
            Some(s) if *s == Scheme::HTTP => {}
            Some(_) => return Err(TargetError::UnsupportedScheme { url: url.to_owned() }),
            None => return Err(invalid("it needs a scheme and a host, as in http://127.0.0.1:8080")),
        }
        let authority: &Authority = uri.authority().ok_or_else(|| invalid("it has no host"))?;
        Self::check_authority(authority).map_err(|reason| invalid(&reason))?;
        let host_header = HeaderValue::from_str(authority.as_str()).map_err(|e| invalid(&e.to_string()))?;
        if uri.query().is_some() {
            return Err(invalid("a base URL cannot have a query; put it in the request path"));
        }
        Ok((uri, host_header))
    }

    /// The URL as given.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The address connections go to.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub(crate) fn host_header(&self) -> &HeaderValue {
        &self.host_header
    }

    /// The request target for `path` under this base URL.
    pub fn join(&self, path: &str) -> String {
        let mut joined = String::with_capacity(self.base_path.len() + path.len() + 1);
        joined.push_str(&self.base_path);
        if !path.starts_with('/') {
            joined.push('/');
        }
        joined.push_str(path);
        joined
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(url: &str) -> String {
        match Target::check_syntax(url) {
            Ok(()) => panic!("{url} was accepted"),
            Err(err) => err.to_string(),
        }
    }

    #[test]
    fn ports_out_of_range_hosts_and_schemes_are_refused_by_name() {
        assert_eq!(
            refused("http://127.0.0.1:99999/"),
            "target `http://127.0.0.1:99999/` is not a valid URL: port 99999 is out of range; give one from 1 to 65535"
        );
        assert!(refused("http://127.0.0.1:65536").contains("port 65536 is out of range"));
        assert!(refused("http://127.0.0.1:0/").contains("port 0 is not a port"));
        assert!(refused("http://[::1]:70000/").contains("port 70000"));
        assert!(refused("http://:8080/").contains("it has no host"));
        assert!(refused("http://user@h:1/").contains("user info"));
        assert!(refused("https://127.0.0.1/").contains("only http://"));
        assert!(refused("127.0.0.1:8080").contains("is not a valid URL"));
        for url in ["http://127.0.0.1:65535", "http://h:1/api", "http://[::1]:8080/", "http://h:/"] {
            assert!(Target::check_syntax(url).is_ok(), "{url}");
        }
    }

    #[test]
    fn the_port_given_is_the_port_used() {
        let port = |url: &str| Target::resolve(url).map(|t| t.addr().port()).map_err(|e| e.to_string());
        assert_eq!(port("http://127.0.0.1:65535/"), Ok(65535));
        assert_eq!(port("http://127.0.0.1/"), Ok(80));
        assert_eq!(port("http://127.0.0.1:/"), Ok(80));
        assert!(port("http://127.0.0.1:99999/").is_err_and(|e| e.contains("port 99999")));
    }
}
