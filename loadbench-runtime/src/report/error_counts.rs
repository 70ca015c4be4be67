//! [`ErrorCounts`]: a run's failed iterations, by kind.

use serde::{Deserialize, Serialize};

use crate::error::ErrorKind;

/// Failed iterations, by what went wrong.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorCounts {
    /// The TCP connection could not be opened (refused, unreachable).
    pub connect: u64,
    /// A request did not complete within the timeout.
    pub timeout: u64,
    /// A response had a status the scenario rejected (`expect_status`).
    pub status: u64,
    /// The connection failed mid-exchange (reset, closed before the response was complete).
    pub io: u64,
    /// The scenario body returned an error of its own.
    pub scenario: u64,
    /// A response body was longer than the request keeps (`max_body`).
    #[serde(default)]
    pub body_too_large: u64,
    /// The TLS handshake failed (certificate not verified, nothing in common, client
    /// certificate required or refused).
    #[serde(default)]
    pub tls: u64,
    /// The scenario body panicked (the virtual user went on).
    #[serde(default)]
    pub panic: u64,
    /// The server reset the request's stream (HTTP/2's `RST_STREAM`, an HTTP/3 request stream).
    #[serde(default)]
    pub stream_reset: u64,
    /// The server broke the protocol: a malformed response or frame, a header list past the
    /// limit, a flood of control frames.
    #[serde(default)]
    pub protocol: u64,
    /// The QUIC handshake did not complete within the request's timeout, or QUIC's idle timer
    /// ended the connection before it did.
    #[serde(default)]
    pub quic_handshake_timeout: u64,
    /// An established QUIC connection's idle timeout passed with no packet from the server
    /// while a request waited.
    #[serde(default)]
    pub quic_idle_timeout: u64,
    /// The server closed the QUIC connection with an application error code other than
    /// `H3_NO_ERROR` while a request waited.
    #[serde(default)]
    pub quic_application_close: u64,
    /// An operation measured with `ctx.measure` failed with an error of its own.
    #[serde(default)]
    pub custom: u64,
}

impl ErrorCounts {
    /// The total over all kinds.
    pub fn total(&self) -> u64 {
        self.connect
            + self.timeout
            + self.status
            + self.io
            + self.scenario
            + self.body_too_large
            + self.tls
            + self.panic
            + self.stream_reset
            + self.protocol
            + self.quic_handshake_timeout
            + self.quic_idle_timeout
            + self.quic_application_close
            + self.custom
    }

    /// The count of `kind`.
    pub(crate) fn slot(&mut self, kind: ErrorKind) -> &mut u64 {
        match kind {
            ErrorKind::Connect => &mut self.connect,
            ErrorKind::Timeout => &mut self.timeout,
            ErrorKind::Status => &mut self.status,
            ErrorKind::Io => &mut self.io,
            ErrorKind::Scenario => &mut self.scenario,
            ErrorKind::BodyTooLarge => &mut self.body_too_large,
            ErrorKind::Tls => &mut self.tls,
            ErrorKind::Panic => &mut self.panic,
            ErrorKind::StreamReset => &mut self.stream_reset,
            ErrorKind::Protocol => &mut self.protocol,
            ErrorKind::QuicHandshakeTimeout => &mut self.quic_handshake_timeout,
            ErrorKind::QuicIdleTimeout => &mut self.quic_idle_timeout,
            ErrorKind::QuicApplicationClose => &mut self.quic_application_close,
            ErrorKind::Custom => &mut self.custom,
        }
    }

    /// Adds another set of counts to this one.
    pub fn add(&mut self, other: &ErrorCounts) {
        self.connect += other.connect;
        self.timeout += other.timeout;
        self.status += other.status;
        self.io += other.io;
        self.scenario += other.scenario;
        self.body_too_large += other.body_too_large;
        self.tls += other.tls;
        self.panic += other.panic;
        self.stream_reset += other.stream_reset;
        self.protocol += other.protocol;
        self.quic_handshake_timeout += other.quic_handshake_timeout;
        self.quic_idle_timeout += other.quic_idle_timeout;
        self.quic_application_close += other.quic_application_close;
        self.custom += other.custom;
    }
}

#[cfg(test)]
mod tests {
    use super::ErrorCounts;

    /// Files written before the QUIC kinds existed still read, with 0 for each.
    #[test]
    fn quic_kinds_read_as_zero_from_older_files() {
        let old = r#"{"connect":0,"timeout":1,"status":0,"io":0,"scenario":0}"#;
        let counts: ErrorCounts = serde_json::from_str(old).unwrap_or_else(|e| panic!("{e}"));
        let quic = (counts.quic_handshake_timeout, counts.quic_idle_timeout, counts.quic_application_close);
        assert_eq!((quic, counts.total()), ((0, 0, 0), 1));
    }
}
