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
    /// ```
    pub fn resolve(url: &str) -> Result<Target, TargetError> {
        let (uri, host_header) = Self::parse(url)?;
        let authority = uri
            .authority()
            .ok_or_else(|| TargetError::Invalid { url: url.to_owned(), reason: "it has no host".into() })?;
        let host = authority.host();
        let port = authority.port_u16().unwrap_or(80);
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
        if authority.as_str().contains('@') {
            return Err(invalid("user info in the URL is not supported"));
        }
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
