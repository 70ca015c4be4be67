//! What a virtual user's client reports to the engine as it happens: its named steps and the
//! connections it opens. Implemented by the engine's worker, so that the client does not depend on
//! the engine.

use std::time::Duration;

use crate::error::ErrorKind;

/// Where the measurements of a worker's virtual users go, beside their iterations.
pub(crate) trait Recorder: std::fmt::Debug {
    /// Records one run of step `name` that took `elapsed` and failed with `error`, if any.
    fn record_step(&self, name: &str, error: Option<ErrorKind>, elapsed: Duration);

    /// Records a connection opened: its TCP connect time and, for TLS, its handshake's.
    fn record_connection(&self, connect: Duration, handshake: Option<Duration>);
}
