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
//! checks (`checks`) and its connections through [`Recorder`], which the engine implements.

mod builder;
mod checks;
mod connect_to;
mod connection;
mod cookies;
mod counters;
mod ctx;
mod failures;
mod feed;
mod h1;
mod json;
mod last_request;
mod names;
pub(crate) mod read_delay;
mod recorder;
mod redirects;
pub(crate) mod request_timer;
mod response;
mod session;
mod shared;
mod steps;
mod stream;
mod target;
mod tls;

pub use builder::RequestBuilder;
pub use connect_to::{ClientOptions, ConnectTo, DEFAULT_MAX_HEADER_LIST_SIZE};
pub use cookies::Cookies;
pub(crate) use counters::HttpCounters;
pub use ctx::Ctx;
pub(crate) use recorder::Recorder;
pub use response::Response;
pub(crate) use session::SessionOptions;
pub(crate) use shared::Lane;
pub use target::{Target, TargetError};
pub(crate) use tls::TlsClient;
pub use tls::{TlsOptions, TlsSetupError};

#[cfg(test)]
mod tests;
