//! How an HTTP/3 connection or request fails, by kind: QUIC's own ways (a handshake or an idle
//! timeout, a close with an application error) have kinds of their own, a reset stream is
//! `stream_reset` as over HTTP/2, a refused certificate `tls` as over TCP.
//!
//! What the server cannot have processed may be sent again on a new connection: a request
//! never sent (the connection was closing or closed), one the server refused with
//! `H3_REQUEST_REJECTED`, one above its `GOAWAY`, or one in 0-RTT early data it refused.

use std::net::SocketAddr;

use h3::error::{Code, ConnectionError, StreamError};
use h3::quic::ConnectionErrorIncoming;

use super::Failure;
use super::frames::FrameTooLarge;
use crate::error::{Error, ErrorKind};
use crate::http::wire::counters::HttpCounters;

/// QUIC's error codes for a TLS alert: `0x100` plus the alert (RFC 9001 § 4.8).
const CRYPTO_ERRORS: std::ops::RangeInclusive<u64> = 0x100..=0x1ff;

/// A connection whose handshake failed.
pub(super) struct Opening;

impl Opening {
    /// The error of a QUIC handshake with `addr` that failed with `err`; a certificate refused
    /// is counted as unverified, as over TCP.
    #[cold]
    pub(super) fn failed(err: quinn::ConnectionError, addr: SocketAddr, counters: &mut HttpCounters) -> Error {
        use quinn::ConnectionError as Quic;
        let tls = |reason: String, counters: &mut HttpCounters| {
            if reason.contains("certificate") {
                counters.tls.unverified += 1;
            }
            Error::new(ErrorKind::Tls, format!("TLS handshake with {addr} failed: {reason}"))
        };
        match err {
            Quic::TimedOut => Error::new(
                ErrorKind::QuicHandshakeTimeout,
                format!("the QUIC handshake with {addr} timed out: no answer within QUIC's idle timeout"),
            ),
            Quic::TransportError(e) if CRYPTO_ERRORS.contains(&u64::from(e.code)) => tls(e.reason.clone(), counters),
            Quic::ConnectionClosed(close) if CRYPTO_ERRORS.contains(&u64::from(close.error_code)) => {
                tls(format!("the server refused it ({close})"), counters)
            }
            Quic::ApplicationClosed(close) => Error::new(
                ErrorKind::QuicApplicationClose,
                format!(
                    "the server closed the QUIC connection during its handshake with {}",
                    Code::from(close.error_code.into_inner())
                ),
            ),
            other => Error::with_source(ErrorKind::Connect, format!("cannot connect to {addr} over QUIC"), other),
        }
    }
}

/// How far a failed request's connection got with its handshake.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Handshake {
    /// Completed: every 1-RTT connection, and a 0-RTT one the server answered.
    Complete,
    /// A 0-RTT connection the server has not answered, or whose handshake failed.
    Unfinished,
    /// Unfinished, and closed by the lane at a request's deadline.
    GivenUp,
}

/// The failure of a request whose stream failed with `err`, on a connection whose handshake
/// got as far as `handshake`; `sent` once its head went out.
#[cold]
pub(super) fn stream_failed(err: StreamError, sent: bool, handshake: Handshake, addr: SocketAddr) -> Failure {
    match err {
        StreamError::RemoteTerminate { code, .. } if code == Code::H3_REQUEST_REJECTED => Failure::new(
            Error::new(ErrorKind::StreamReset, format!("the server refused the request unprocessed ({code})")),
            true,
        ),
        StreamError::RemoteTerminate { code, .. } => Failure::new(
            Error::new(ErrorKind::StreamReset, format!("the server reset the request's stream ({code})")),
            false,
        ),
        StreamError::RemoteClosing { .. } => {
            Failure::unsent(Error::new(ErrorKind::Io, format!("{addr} is closing the connection (GOAWAY)")))
        }
        StreamError::ConnectionError { 0: e, .. } => connection_failed(&e, sent, handshake, addr),
        StreamError::HeaderTooBig { actual_size, max_size, .. } => Failure::new(
            Error::new(
                ErrorKind::Protocol,
                format!("a response's header section of {actual_size} bytes, over the limit of {max_size}"),
            ),
            false,
        ),
        StreamError::StreamError { code, reason, .. } => {
            Failure::new(Error::new(ErrorKind::Protocol, format!("HTTP/3 error {code}: {reason}")), false)
        }
        // quinn's word for a stream opened in 0-RTT whose early data the server refused (it
        // never saw the request), and for one on a connection given up before any answer (it
        // may have, and its handshake timed out).
        StreamError::Undefined { 0: e, .. } if zero_rtt_rejected(&*e) => match handshake {
            Handshake::GivenUp => Failure::new(handshake_unanswered(addr), false),
            Handshake::Complete | Handshake::Unfinished => Failure::unsent(Error::new(
                ErrorKind::Io,
                format!("{addr} refused the 0-RTT early data the request went out in, unprocessed"),
            )),
        },
        StreamError::Undefined { 0: e, .. } if e.is::<FrameTooLarge>() => {
            Failure::new(Error::new(ErrorKind::Protocol, e.to_string()), false)
        }
        other => unprocessed_if(!sent, Error::with_source(ErrorKind::Io, "the request's stream failed", other)),
    }
}

/// Whether `err` is quinn's refusal of the 0-RTT early data a stream was opened in.
fn zero_rtt_rejected(err: &(dyn std::error::Error + 'static)) -> bool {
    matches!(err.downcast_ref(), Some(quinn::ReadError::ZeroRttRejected))
        || matches!(err.downcast_ref(), Some(quinn::WriteError::ZeroRttRejected))
}

/// The error of HTTP/3's start on a connection just made to `addr`, which failed with `err`.
#[cold]
pub(super) fn start_failed(err: ConnectionError, addr: SocketAddr) -> Error {
    match refused_by_tls(&err, addr) {
        Some(refused) => refused,
        None => Error::with_source(ErrorKind::Protocol, format!("HTTP/3 did not start on {addr}"), err),
    }
}

/// A connection the server closed with a TLS alert once the client's side of the handshake was
/// done (TLS 1.3 lets it refuse a client certificate then): a `tls` failure, as over TCP.
fn refused_by_tls(err: &ConnectionError, addr: SocketAddr) -> Option<Error> {
    let ConnectionError::Remote { 0: ConnectionErrorIncoming::Undefined(quic), .. } = err else { return None };
    match quic.downcast_ref::<quinn::ConnectionError>()? {
        quinn::ConnectionError::ConnectionClosed(close) if CRYPTO_ERRORS.contains(&u64::from(close.error_code)) => {
            Some(Error::new(
                ErrorKind::Tls,
                format!("TLS handshake with {addr} failed: the server refused it ({close})"),
            ))
        }
        _ => None,
    }
}

/// A 0-RTT handshake with `addr` the lane gave up at a request's deadline, unanswered.
fn handshake_unanswered(addr: SocketAddr) -> Error {
    Error::new(
        ErrorKind::QuicHandshakeTimeout,
        format!("the QUIC handshake with {addr} did not complete within a request's timeout"),
    )
}

/// The failure of a request on a connection that ended with `err`. QUIC's idle timer ends an
/// unfinished handshake as it does a 1-RTT one: a handshake's timeout, not an idle one.
fn connection_failed(err: &ConnectionError, sent: bool, handshake: Handshake, addr: SocketAddr) -> Failure {
    if let Some(refused) = refused_by_tls(err, addr) {
        return Failure::new(refused, false);
    }
    let error = match err {
        ConnectionError::Timeout { .. } | ConnectionError::Remote { 0: ConnectionErrorIncoming::Timeout, .. }
            if handshake != Handshake::Complete =>
        {
            Error::new(
                ErrorKind::QuicHandshakeTimeout,
                format!("the QUIC handshake with {addr} timed out: no answer within QUIC's idle timeout"),
            )
        }
        ConnectionError::Timeout { .. } | ConnectionError::Remote { 0: ConnectionErrorIncoming::Timeout, .. } => {
            Error::new(
                ErrorKind::QuicIdleTimeout,
                format!("the QUIC connection to {addr} timed out: no packet from the server within its idle timeout"),
            )
        }
        ConnectionError::Remote { 0: ConnectionErrorIncoming::ApplicationClose { error_code }, .. } => {
            let code = Code::from(*error_code);
            if code == Code::H3_NO_ERROR {
                Error::new(ErrorKind::Io, format!("{addr} closed the connection before the response ({code})"))
            } else {
                Error::new(ErrorKind::QuicApplicationClose, format!("{addr} closed the QUIC connection with {code}"))
            }
        }
        ConnectionError::Remote { 0: ConnectionErrorIncoming::Undefined(quic), .. } => {
            Error::new(ErrorKind::Io, format!("the QUIC connection to {addr} ended: {quic}"))
        }
        other => Error::new(ErrorKind::Protocol, format!("the HTTP/3 connection to {addr} failed: {other}")),
    };
    unprocessed_if(!sent, error)
}

/// A request never sent may go again on a new connection; one sent may not.
fn unprocessed_if(unsent: bool, error: Error) -> Failure {
    if unsent { Failure::unsent(error) } else { Failure::new(error, false) }
}
