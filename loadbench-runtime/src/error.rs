//! The error a scenario body returns, classified by what went wrong.

use std::fmt;

/// What kind of failure an iteration ended with; each kind is counted separately in the results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The TCP connection could not be opened.
    Connect,
    /// A request did not complete within the scenario's timeout.
    Timeout,
    /// A response had a status the scenario did not accept.
    Status,
    /// The connection failed mid-exchange: reset, closed early, or a malformed response.
    Io,
    /// The scenario body failed for a reason of its own.
    Scenario,
    /// A response body was longer than the most a request keeps (`max_body`, 16 MiB by
    /// default); a body the request discards is never too large.
    BodyTooLarge,
    /// The TLS handshake of an `https://` connection failed: the server's certificate could not
    /// be verified, no version or cipher in common, a client certificate required or refused.
    Tls,
    /// The scenario body panicked. The iteration failed; the virtual user goes on with the next.
    Panic,
}

/// The error type of scenario bodies.
///
/// Errors from loadbench's HTTP client carry their [`ErrorKind`]; any other error converts with
/// `?` and counts as [`ErrorKind::Scenario`]:
///
/// ```
/// async fn body(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
///     let response = ctx.get("/items/1").send().await?.expect_status(200)?;
///     let _n: u64 = response.text()?.trim().parse()?; // a ParseIntError counts as a scenario error
///     Ok(())
/// }
/// ```
///
/// Like `anyhow::Error`, this type does not implement `std::error::Error` itself, which is what
/// lets every standard error convert into it.
pub struct Error {
    kind: ErrorKind,
    message: String,
    source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
}

/// `Result<T, loadbench::Error>`, the return type of scenario bodies.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A new error of the given kind.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error { kind, message: message.into(), source: None }
    }

    /// A scenario error with a message, for checks the body makes itself.
    ///
    /// ```
    /// let err = loadbench::Error::msg("cart was empty");
    /// assert_eq!(err.kind(), loadbench::ErrorKind::Scenario);
    /// ```
    pub fn msg(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Scenario, message)
    }

    pub(crate) fn with_source(
        kind: ErrorKind,
        message: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Error { kind, message: message.into(), source: Some(Box::new(source)) }
    }

    /// How this error is counted.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        // The whole chain, as anyhow's `{:#}` prints it: the OS cause of an `io` error ("Connection
        // reset by peer (os error 104)") is usually the innermost source, and the one that says
        // what happened.
        let mut next: Option<&(dyn std::error::Error + 'static)> = match &self.source {
            Some(source) => Some(source.as_ref()),
            None => None,
        };
        while let Some(source) = next {
            write!(f, ": {source}")?;
            next = source.source();
        }
        Ok(())
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}: {self}", self.kind)
    }
}

impl<E> From<E> for Error
where
    E: std::error::Error + Send + Sync + 'static,
{
    fn from(source: E) -> Self {
        Error { kind: ErrorKind::Scenario, message: String::from("scenario error"), source: Some(Box::new(source)) }
    }
}
