//! The server a scenario talks to: its base URL, parsed and resolved once before the run, with
//! its TLS client when it is `https://`.

use std::net::SocketAddr;
use std::sync::Arc;

use http::HeaderValue;
use http::uri::{Authority, Scheme, Uri};

use super::connect_to::ConnectTo;
use super::tls::{ServerName, TlsClient, TlsOptions, TlsSetupError};

/// A base URL such as `http://127.0.0.1:8080/api` or `https://api.example.com/v1`, resolved to
/// one socket address.
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
    /// For `https://`: the run's TLS client and the name the server must prove (also the SNI).
    tls: Option<(Arc<TlsClient>, ServerName)>,
    /// The `--connect-to` rule that sent connections elsewhere, if one did.
    redirected: bool,
    /// The URL as the `url` crate reads it: the origin (scheme, host, port) that cookies are
    /// matched against and that a redirect must stay within.
    origin: url::Url,
    /// The most an HTTP/2 response's header list may cost (`ClientOptions::max_header_list_size`).
    max_header_list_size: u32,
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
    /// A scheme other than `http` and `https`.
    #[error("target `{url}`: the scheme must be http:// or https://")]
    UnsupportedScheme {
        /// The URL as given.
        url: String,
    },
    /// The TLS client cannot be set up (a `--cacert`, `--cert` or `--key` file).
    #[error(transparent)]
    Tls(#[from] TlsSetupError),
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
    /// Parses `url` and resolves its host; an `https://` URL gets a TLS client that verifies the
    /// server against the machine's trust store (and is refused without the `tls` feature).
    ///
    /// ```
    /// let t = loadbench::http::Target::resolve("http://127.0.0.1:9090/api/").unwrap();
    /// assert_eq!(t.addr().port(), 9090);
    /// assert_eq!(t.join("/items"), "/api/items");
    /// assert!(loadbench::http::Target::resolve("http://127.0.0.1:99999/").is_err());
    /// ```
    pub fn resolve(url: &str) -> Result<Target, TargetError> {
        let tls = match Self::parse(url)?.0.scheme() {
            Some(s) if *s == Scheme::HTTPS => Some(Arc::new(TlsClient::new(&TlsOptions::default())?)),
            _ => None,
        };
        Self::resolve_with(url, &[], tls.as_ref())
    }

    /// [`Target::resolve`] under the run's `--connect-to` rules, with the run's TLS client (one per
    /// run: it holds the parsed trust store). An `https://` URL without one gets the default.
    pub(crate) fn resolve_with(
        url: &str,
        connect_to: &[ConnectTo],
        tls: Option<&Arc<TlsClient>>,
    ) -> Result<Target, TargetError> {
        let (uri, host_header) = Self::parse(url)?;
        let authority = uri
            .authority()
            .ok_or_else(|| TargetError::Invalid { url: url.to_owned(), reason: "it has no host".into() })?;
        let host = authority.host();
        let https = uri.scheme() == Some(&Scheme::HTTPS);
        let port = Self::check_authority(authority)
            .map_err(|reason| TargetError::Invalid { url: url.to_owned(), reason })?
            .unwrap_or(if https { 443 } else { 80 });
        // `[::1]` arrives with its brackets; the resolver and the TLS name want the bare address.
        let bare_host = host.trim_start_matches('[').trim_end_matches(']');
        let redirect = connect_to.iter().find_map(|rule| rule.redirect(bare_host, port));
        let redirected = redirect.is_some();
        let (connect_host, connect_port) = redirect.unwrap_or_else(|| (bare_host.to_owned(), port));
        let resolve_error =
            |reason: String| TargetError::Resolve { url: url.to_owned(), host: connect_host.clone(), reason };
        let addr = std::net::ToSocketAddrs::to_socket_addrs(&(connect_host.as_str(), connect_port))
            .map_err(|e| resolve_error(e.to_string()))?
            .next()
            .ok_or_else(|| resolve_error("no addresses".to_owned()))?;
        let tls = if https {
            let client = match tls {
                Some(client) => Arc::clone(client),
                None => Arc::new(TlsClient::new(&TlsOptions::default())?),
            };
            let name = client.server_name(bare_host).map_err(|e| TargetError::Invalid {
                url: url.to_owned(),
                reason: format!("`{bare_host}` is not a valid TLS server name: {e}"),
            })?;
            Some((client, name))
        } else {
            None
        };
        let base_path = uri.path().trim_end_matches('/').to_owned();
        let origin =
            url::Url::parse(url).map_err(|e| TargetError::Invalid { url: url.to_owned(), reason: e.to_string() })?;
        Ok(Target {
            url: url.to_owned(),
            addr,
            host_header,
            base_path,
            tls,
            redirected,
            origin,
            max_header_list_size: super::connect_to::DEFAULT_MAX_HEADER_LIST_SIZE,
        })
    }

    /// Checks the host and port of an `http://` or `https://` URL and returns the port given, if
    /// any (the scheme's default applies otherwise). `http::Uri` accepts any digits as a port and `port_u16` turns one out of range
    /// into "no port", which would send the load to port 80 of the wrong server; so the port's text
    /// is read here, and 0 (no server listens there) is refused too.
    ///
    /// ```
    /// let port = |url: &str| {
    ///     let uri: http::Uri = url.parse().unwrap();
    ///     loadbench::http::Target::check_authority(uri.authority().unwrap())
    /// };
    /// assert_eq!(port("http://127.0.0.1:8080/"), Ok(Some(8080)));
    /// assert_eq!(port("http://[::1]/"), Ok(None));
    /// assert!(port("http://127.0.0.1:99999/").unwrap_err().contains("99999"));
    /// assert!(port("http://127.0.0.1:0/").is_err());
    /// assert!(port("http://:8080/").is_err());
    /// ```
    pub fn check_authority(authority: &Authority) -> Result<Option<u16>, String> {
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
            None | Some((_, "")) => Ok(None),
            Some((_, port)) => match port.parse::<u16>() {
                Ok(0) => Err("port 0 is not a port a server listens on; give one from 1 to 65535".to_owned()),
                Ok(port) => Ok(Some(port)),
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
            Some(s) if *s == Scheme::HTTP || *s == Scheme::HTTPS => {}
            Some(_) => return Err(TargetError::UnsupportedScheme { url: url.to_owned() }),
            None => {
                return Err(invalid(
                    "it needs a scheme and a host, as in http://127.0.0.1:8080 or https://example.com",
                ));
            }
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

    /// The most an HTTP/2 response's header list may cost.
    pub(crate) fn max_header_list_size(&self) -> u32 {
        self.max_header_list_size
    }

    /// This target with the run's limit on HTTP/2 response header lists.
    pub(crate) fn with_max_header_list_size(mut self, bytes: u32) -> Target {
        self.max_header_list_size = bytes;
        self
    }

    pub(crate) fn host_header(&self) -> &HeaderValue {
        &self.host_header
    }

    /// For `https://`: the run's TLS client and the server's name.
    pub(crate) fn tls(&self) -> Option<&(Arc<TlsClient>, ServerName)> {
        self.tls.as_ref()
    }

    /// The address connections go to, when a `--connect-to` rule chose it.
    pub(crate) fn redirected_to(&self) -> Option<SocketAddr> {
        self.redirected.then_some(self.addr)
    }

    /// The absolute URL of a request to `path` (path and query, as sent) on this target's origin,
    /// for the cookie jar and redirects; built only when one of them needs it.
    pub(crate) fn url_for(&self, path: &str) -> Option<url::Url> {
        let (path, query) = match path.split_once('?') {
            Some((path, query)) => (path, Some(query)),
            None => (path, None),
        };
        let mut url = self.origin.clone();
        // Set rather than joined: a path such as `//host/x` must stay a path on this origin.
        url.set_path(path);
        url.set_query(query);
        url.has_host().then_some(url)
    }

    /// Whether `url` has this target's scheme, host and port: the redirects a user can follow
    /// on its own connection.
    pub(crate) fn same_origin(&self, url: &url::Url) -> bool {
        url.origin() == self.origin.origin()
    }

    /// Where a `Location` header points, resolved against the request's `path` on this target.
    pub(crate) fn resolve_location(&self, path: &str, location: &str) -> Option<url::Url> {
        self.url_for(path)?.join(location).ok()
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
        assert!(refused("ftp://127.0.0.1/").contains("http:// or https://"));
        assert!(refused("127.0.0.1:8080").contains("is not a valid URL"));
        for url in ["http://127.0.0.1:65535", "http://h:1/api", "http://[::1]:8080/", "http://h:/", "https://h/"] {
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
        if cfg!(feature = "tls") {
            assert_eq!(port("https://127.0.0.1/"), Ok(443));
        }
    }

    // What a user's bench gets by default; `.ci/run` runs these tests without the workspace's
    // features.
    #[cfg(not(feature = "tls"))]
    #[test]
    fn without_tls_an_https_target_is_refused_naming_the_feature() {
        let refused = Target::resolve("https://127.0.0.1:8443/").map(drop);
        assert!(matches!(refused, Err(TargetError::Tls(TlsSetupError::NotBuilt))), "{refused:?}");
        let said = refused.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(said.contains("`tls` feature") && said.contains(r#"features = ["tls"]"#), "{said}");
        assert!(Target::resolve("http://127.0.0.1:8080/").is_ok_and(|t| t.tls().is_none()));
        // A TLS option is refused too, whatever the target.
        assert!(matches!(TlsOptions::default().insecure(true).check(), Err(TlsSetupError::NotBuilt)));
    }

    #[cfg(feature = "tls")]
    #[test]
    fn connect_to_sends_connections_elsewhere_and_keeps_the_name() {
        let rules: Vec<ConnectTo> = vec!["api.example.test:443:127.0.0.1:8443".parse().unwrap()];
        let t = Target::resolve_with("https://api.example.test/v1", &rules, None).unwrap();
        assert_eq!(t.addr(), "127.0.0.1:8443".parse().unwrap());
        assert_eq!(t.redirected_to(), Some(t.addr()));
        assert_eq!(t.host_header(), "api.example.test");
        assert_eq!(t.tls().map(|(_, name)| name.to_str().into_owned()), Some("api.example.test".to_owned()));
        let t = Target::resolve_with("http://127.0.0.1:9/", &rules, None).unwrap();
        assert_eq!((t.redirected_to(), t.tls().is_none()), (None, true));
    }
}
