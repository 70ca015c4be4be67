//! The wire: what goes over a socket and what comes back. A user's own HTTP/1.1 connection
//! (`connection`, its format in `h1`, its socket in `stream`, TLS in `tls`), the connections
//! users share (`shared`: pipelined HTTP/1.1 and HTTP/2 lanes), where connections go
//! (`target`, `connect_to`), how exchanges fail (`failures`), the request timer, and what an
//! exchange produces (`response`, `counters`). Knows nothing of the author's client above it;
//! records what it opens through `http::Recorder`.

pub(crate) mod connect_to;
pub(crate) mod connection;
pub(crate) mod counters;
pub(crate) mod failures;
pub(crate) mod h1;
pub(crate) mod read_delay;
pub(crate) mod request_timer;
pub(crate) mod response;
pub(crate) mod shared;
pub(crate) mod stream;
pub(crate) mod target;
pub(crate) mod tls;
