//! The client side of a virtual user: its [`Ctx`], one keep-alive HTTP/1.1 connection of its own
//! (`connection`, wire format in `h1`, socket in `stream`), the request timer, the last request
//! and the [`Target`] URL. HTTP/2 joins here.
//!
//! What a server sends cannot cost more than bounded memory and time: heads are capped (64 KiB),
//! 1xx heads and chunk framing are consumed as they arrive, a kept body is capped (`max_body`)
//! and a discarded one is counted and dropped in 64 KiB reads; the request timer holds each
//! request to its deadline however busy the connection keeps it. An idempotent request that
//! meets a keep-alive connection the server has just closed is retried once (`Ctx`).
//!
//! Sessions: each user has a cookie jar (`cookies`, on by default, RFC 6265's rules through the
//! `cookie_store` crate) and follows redirects within its origin when asked (`redirects`, off by
//! default); JSON bodies go through serde (`json`). A user that sets no cookie and follows no
//! redirect pays a branch per request for them.
//!
//! `https://` targets go through rustls (`tls`): each user keeps its TLS connection alive and
//! resumes its own session when it reconnects; a failed handshake is an error of its own kind,
//! described in plain words. `--connect-to` rules (`connect_to`) send connections to another
//! address under the URL's name.
//!
//! Uses only the ground floor (`error`, and `report` for what the options record): the engine
//! above creates each user's `Ctx` and receives its named steps, named requests (`names`),
//! checks (`checks`) and its connections through `Recorder`, which the engine implements.

pub(crate) mod client;
mod recorder;
pub(crate) mod wire;

// The paths the rest of the crate uses for the wire's parts.
pub(crate) use wire::{read_delay, request_timer};

pub use client::builder::RequestBuilder;
pub use client::cookies::Cookies;
pub use client::ctx::Ctx;
pub(crate) use client::measure::Arrival;
pub use client::measure::MeasuredError;
pub(crate) use client::session::SessionOptions;
pub(crate) use recorder::{QuicTiming, Recorder};
pub use response::Response;
pub use wire::connect_to::{ClientOptions, ConnectTo, DEFAULT_MAX_HEADER_LIST_SIZE};
pub(crate) use wire::counters::HttpCounters;
pub(crate) use wire::response;
pub(crate) use wire::shared::{Lane, QuicEndpoints};
pub use wire::target::{Target, TargetError};
pub(crate) use wire::tls::TlsClient;
pub use wire::tls::{TlsOptions, TlsSetupError};

#[cfg(test)]
mod tests;
