//! The client side of a virtual user: its [`Ctx`], one keep-alive HTTP/1.1 connection of its own
//! (`connection`, wire format in `h1`), the request timer, the last request and the [`Target`]
//! URL. TLS and HTTP/2 join here.
//!
//! What a server sends cannot cost more than bounded memory and time: heads are capped (64 KiB),
//! 1xx heads and chunk framing are consumed as they arrive, a kept body is capped (`max_body`)
//! and a discarded one is counted and dropped in 64 KiB reads; the request timer holds each
//! request to its deadline however busy the connection keeps it. An idempotent request that
//! meets a keep-alive connection the server has just closed is retried once (`Ctx`).
//!
//! Uses only the ground floor (`error`): the engine above creates each user's `Ctx` and
//! receives its named steps through [`StepSink`], which the engine implements.

mod connection;
mod ctx;
mod h1;
mod last_request;
mod request_timer;
mod steps;
mod target;

pub(crate) use ctx::HttpCounters;
pub use ctx::{Ctx, RequestBuilder, Response};
pub(crate) use steps::StepSink;
pub use target::{Target, TargetError};

#[cfg(test)]
mod tests;
