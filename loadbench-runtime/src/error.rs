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
    /// The connection failed mid-exchange: reset, or closed before the response was complete.
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
    /// The server reset the request's stream: HTTP/2's `RST_STREAM` (or `GOAWAY` after the
    /// stream had been processed), or an HTTP/3 request stream reset by the server. The
    /// connection lives on, the request failed. A stream the server refused unprocessed
    /// (HTTP/2's `REFUSED_STREAM` or a stream above a `GOAWAY`'s last one, HTTP/3's
    /// `H3_REQUEST_REJECTED`) is sent again instead.
    StreamReset,
    /// The server broke the protocol: a malformed response or frame (an HTTP/1.1 head that
    /// does not parse, is larger than 64 KiB or has more than 100 headers; an HTTP/2 response
    /// RFC 9113 calls malformed), a header list past the limit (`max_header_list_size`), a
    /// flood of control frames. The request is never counted ok.
    Protocol,
    /// The QUIC handshake of an HTTP/3 connection did not complete within the request's
    /// timeout, or QUIC's own idle timer ended the connection before it did.
    QuicHandshakeTimeout,
    /// An established QUIC connection's idle timeout passed with no packet from the server
    /// while a request waited on it.
    QuicIdleTimeout,
    /// The server closed the QUIC connection with an application error code other than
    /// `H3_NO_ERROR` while a request waited on it; the message names the code.
    QuicApplicationClose,
    /// An operation measured with [`Ctx::measure`](crate::Ctx::measure) failed with an error of
    /// its own (a WebSocket's, a gRPC client's, any `std::error::Error`), not loadbench's.
    Custom,
}

impl ErrorKind {
    /// The kind's name in the results (`errors`, `causes[].kind`): `"connect"`, `"timeout"`,
    /// `"status"`, `"io"`, `"scenario"`, `"body_too_large"`, `"tls"`, `"panic"`, `"stream_reset"`, `"protocol"`,
    /// `"quic_handshake_timeout"`, `"quic_idle_timeout"`, `"quic_application_close"` or `"custom"`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            ErrorKind::Connect => "connect",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Status => "status",
            ErrorKind::Io => "io",
            ErrorKind::Scenario => "scenario",
            ErrorKind::BodyTooLarge => "body_too_large",
            ErrorKind::Tls => "tls",
            ErrorKind::Panic => "panic",
            ErrorKind::StreamReset => "stream_reset",
            ErrorKind::Protocol => "protocol",
            ErrorKind::QuicHandshakeTimeout => "quic_handshake_timeout",
            ErrorKind::QuicIdleTimeout => "quic_idle_timeout",
            ErrorKind::QuicApplicationClose => "quic_application_close",
            ErrorKind::Custom => "custom",
        }
    }
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
// One pointer wide, as `anyhow::Error` is: a `Result<(), Error>` is then a register, not bytes
// that every level of a request's future copies on its way back to the user's loop, piece by piece
// with loads that straddle the stores before them (the processor then waits for those stores to
// land before it can load: bench/RESULTS.md § Layouts on the request path). A failure pays one
// allocation more.
pub struct Error(Box<Inner>);

struct Inner {
    kind: ErrorKind,
    message: String,
    source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
}

/// `Result<T, loadbench::Error>`, the return type of scenario bodies.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A new error of the given kind.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error(Box::new(Inner { kind, message: message.into(), source: None }))
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

    /// This error as an operation of `ctx.measure` failed with it: one that `?` converted from
    /// another library's error (kind `scenario`, no words of its own) is that library's, so
    /// `custom`; one made with a kind or a message of its own keeps its kind.
    pub(crate) fn foreign_as_custom(mut self) -> Self {
        if self.0.kind == ErrorKind::Scenario && self.0.message.is_empty() && self.0.source.is_some() {
            self.0.kind = ErrorKind::Custom;
        }
        self
    }

    pub(crate) fn with_source(
        kind: ErrorKind,
        message: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Error(Box::new(Inner { kind, message: message.into(), source: Some(Box::new(source)) }))
    }

    /// How this error is counted.
    pub fn kind(&self) -> ErrorKind {
        self.0.kind
    }

    /// Whether this is a connection refused (`ECONNREFUSED`): nothing listens at the address.
    /// Not a timeout, an unreachable host or a failed TLS handshake, which say something else.
    pub(crate) fn is_refused(&self) -> bool {
        self.0.kind == ErrorKind::Connect
            && self
                .0
                .source
                .as_deref()
                .and_then(|source| source.downcast_ref::<std::io::Error>())
                .is_some_and(|e| e.kind() == std::io::ErrorKind::ConnectionRefused)
    }
}

impl fmt::Display for Error {
    /// The message and its whole chain of causes, as anyhow's `{:#}` prints it: the OS cause of
    /// an `io` error ("Connection reset by peer (os error 104)") is usually the innermost source,
    /// and the one that says what happened. Each part is said once: an error converted with `?`
    /// has no message of its own (its kind is said apart from it), and a source whose text its
    /// parent's already contains (`#[error("cannot read: {0}")]` over the same error) is left out.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Inner { message, source, .. } = &*self.0;
        let Some(source) = source else {
            return f.write_str(message);
        };
        // Only a failure formats this, so the parts may be strings of their own.
        let mut previous = message.clone();
        let mut first = previous.is_empty();
        f.write_str(&previous)?;
        let mut next: Option<&(dyn std::error::Error + 'static)> = Some(source.as_ref());
        while let Some(source) = next {
            let text = source.to_string();
            if !text.is_empty() && !previous.contains(&text) {
                if !first {
                    f.write_str(": ")?;
                }
                f.write_str(&text)?;
                first = false;
                previous = text;
            }
            next = source.source();
        }
        Ok(())
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}: {self}", self.0.kind)
    }
}

impl<E> From<E> for Error
where
    E: std::error::Error + Send + Sync + 'static,
{
    /// The error's own words are the message: no prefix, the kind ([`ErrorKind::Scenario`]) is
    /// said apart from it.
    fn from(source: E) -> Self {
        Error(Box::new(Inner { kind: ErrorKind::Scenario, message: String::new(), source: Some(Box::new(source)) }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An error whose text repeats its source's, as `#[error("cannot read: {0}")]` with
    /// `#[source]` on the same field does.
    #[derive(Debug)]
    struct Wrapping(std::io::Error);

    impl fmt::Display for Wrapping {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "cannot read items.csv: {}", self.0)
        }
    }

    impl std::error::Error for Wrapping {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    fn missing() -> std::io::Error {
        std::io::Error::from(std::io::ErrorKind::NotFound)
    }

    #[test]
    fn a_converted_error_is_its_own_words_said_once() {
        let converted = Error::from(missing());
        assert_eq!(converted.kind(), ErrorKind::Scenario);
        assert_eq!(converted.to_string(), missing().to_string(), "no `scenario error` prefix");
        let parsed = match "x".parse::<u64>() {
            Err(e) => Error::from(e),
            Ok(n) => Error::msg(format!("parsed {n}")),
        };
        assert_eq!(parsed.to_string(), "invalid digit found in string");
        let wrapped = Error::from(Wrapping(missing()));
        assert_eq!(wrapped.to_string(), format!("cannot read items.csv: {}", missing()), "the source is not repeated");
        let chained = Error::with_source(ErrorKind::Io, "request failed", Wrapping(missing()));
        assert_eq!(chained.to_string(), format!("request failed: cannot read items.csv: {}", missing()));
        assert_eq!(format!("{chained:?}"), format!("Io: {chained}"));
    }

    /// What every level of a request's future hands up: a body's `Ok(())` and a response's
    /// `Result` stay a register or two wide (see `Error` and `Response`).
    #[test]
    fn results_on_the_request_path_stay_a_register_or_two_wide() {
        use std::mem::size_of;
        assert_eq!(size_of::<Error>(), size_of::<usize>());
        assert_eq!(size_of::<crate::Response>(), size_of::<usize>());
        assert_eq!(size_of::<Result<()>>(), size_of::<usize>());
        assert_eq!(size_of::<Result<crate::Response>>(), 2 * size_of::<usize>());
    }
}
