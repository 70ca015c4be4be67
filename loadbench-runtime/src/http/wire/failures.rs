//! How the client's exchanges fail, in one place for a user's own connection (`client/ctx.rs`) and the
//! shared ones (`shared/`): a connection just opened is counted (or its failure made an error of
//! the right kind), a failed exchange, a TLS handshake and a timeout become the request's error.

use std::net::SocketAddr;
use std::time::Duration;

use super::connection::ExchangeError;
use super::counters::HttpCounters;
use super::stream::{OpenError, Opened, Stream};
use super::tls::{Cause, Unverified};
use crate::error::{Error, ErrorKind, Result};
use crate::http::Recorder;

/// Counts a connection just opened (or whose TLS handshake failed after its TCP connect) and
/// returns it. Out of line, as every connection's rare path, so that the request's own future
/// stays small.
#[cold]
#[inline(never)]
pub(in crate::http) fn connected(
    opened: Result<(Stream, Opened), OpenError>,
    addr: SocketAddr,
    counters: &mut HttpCounters,
    recorder: Option<&dyn Recorder>,
) -> Result<Stream> {
    let (stream, opened) = match opened {
        Ok(opened) => opened,
        Err(OpenError::Connect(e)) => {
            return Err(Error::with_source(ErrorKind::Connect, format!("cannot connect to {addr}"), e));
        }
        Err(OpenError::Tls(cause, connect)) => {
            // The TCP connection was opened (the server saw it): counted as one.
            counters.connections += 1;
            if let Some(recorder) = recorder {
                recorder.record_connection(Some(connect), None);
            }
            return Err(tls_failed(counters, addr, &cause));
        }
    };
    counters.connections += 1;
    if let Some(handshake) = opened.tls {
        counters.tls.handshakes += 1;
        counters.tls.resumed += u64::from(handshake.resumed);
        counters.tls.tls13 += u64::from(handshake.tls13);
    }
    if let Some(recorder) = recorder {
        recorder.record_connection(Some(opened.connect), opened.tls.map(|h| h.elapsed));
    }
    Ok(stream)
}

/// The error of an exchange that failed and is not retried.
#[cold]
#[inline(never)]
pub(in crate::http) fn exchange_failed(err: ExchangeError, addr: SocketAddr, counters: &mut HttpCounters) -> Error {
    // A TLS 1.3 server refuses a client certificate after the client's side of the handshake is
    // done: its alert arrives with the first response.
    if let Some(cause) = err.io_error().and_then(Cause::of_session) {
        return tls_failed(counters, addr, &cause);
    }
    let kind = match err {
        ExchangeError::BodyTooLarge { .. } => ErrorKind::BodyTooLarge,
        // A head that does not parse, is too large or has too many headers, a bad
        // `Content-Length`, a malformed chunked body: the server broke HTTP/1.1.
        ExchangeError::Protocol(_) => ErrorKind::Protocol,
        ExchangeError::Write(_) | ExchangeError::Read(_) | ExchangeError::Closed => ErrorKind::Io,
    };
    Error::with_source(kind, "request failed", err)
}

/// The error of a failed TLS handshake, counted as unverified when the certificate was the cause,
/// and by how, for the hint that follows the table.
fn tls_failed(counters: &mut HttpCounters, addr: SocketAddr, cause: &Cause) -> Error {
    if let Some(how) = cause.certificate {
        counters.tls.unverified += 1;
        counters.tls.wrong_name += u64::from(how == Unverified::WrongName);
        counters.tls.ca_as_server += u64::from(how == Unverified::CaAsServer);
    }
    Error::new(ErrorKind::Tls, format!("TLS handshake with {addr} failed: {}", cause.text))
}

/// The error of a request whose QUIC connection did not complete its handshake within the
/// request's timeout.
pub(in crate::http) fn quic_handshake_timed_out(timeout: Duration) -> Error {
    Error::new(
        ErrorKind::QuicHandshakeTimeout,
        format!("the QUIC handshake did not complete within {}", humantime::format_duration(timeout)),
    )
}

pub(in crate::http) fn timed_out(timeout: Duration) -> Error {
    Error::new(ErrorKind::Timeout, format!("no complete response within {}", humantime::format_duration(timeout)))
}
