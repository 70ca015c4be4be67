//! What a virtual user's client reports to the engine as it happens: its named steps, named
//! requests and checks, and the connections it opens. Implemented by the engine's worker, so that the client does not depend on
//! the engine.

use std::time::Duration;

use crate::error::Error;

/// Where the measurements of a worker's virtual users go, beside their iterations.
pub(crate) trait Recorder: std::fmt::Debug {
    /// Records one run of step `name` that took `elapsed` and failed with `error`, if any (its
    /// kind and its message are counted).
    fn record_step(&self, name: &str, error: Option<&Error>, elapsed: Duration);

    /// Records one request named `name` (`.name(…)`) that took `elapsed`, from `send` to its
    /// complete response, and failed with `error`, if any.
    fn record_request(&self, name: &str, error: Option<&Error>, elapsed: Duration);

    /// Records one evaluation of the check `name` (`ctx.check`).
    fn record_check(&self, name: &str, passed: bool);

    /// Records a connection opened: its TCP connect time (none over QUIC, where the connect is
    /// part of the handshake) and, for TLS, its handshake's.
    fn record_connection(&self, connect: Option<Duration>, handshake: Option<Duration>);

    /// Records what HTTP/3 measures beyond the request's latency.
    #[cfg_attr(not(feature = "http3"), allow(dead_code))]
    fn record_quic(&self, timing: QuicTiming) {
        let _ = timing;
    }
}

/// A time HTTP/3 measures beyond the request's latency.
#[derive(Debug, Clone, Copy)]
#[cfg_attr(not(feature = "http3"), allow(dead_code))]
pub(crate) enum QuicTiming {
    /// From a request's send to its response's head.
    FirstByte(Duration),
    /// From a 0-RTT connection's start to the server's answer on its early data, and whether
    /// it took it.
    ZeroRtt { elapsed: Duration, accepted: bool },
}
