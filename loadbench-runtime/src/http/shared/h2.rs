//! HTTP/2 on a lane: the requests of its users as concurrent streams on one connection.

use std::sync::Arc;

use super::{Failure, Outgoing, Reply};
use crate::config::Transport;
use crate::error::{Error, ErrorKind};
use crate::http::TlsClient;
use crate::http::stream::Stream;
use crate::http::target::Target;

/// A lane's TLS configuration: the run's, with a session cache of its own.
pub(crate) fn tls_config(client: &TlsClient, _transport: Transport) -> Arc<rustls::ClientConfig> {
    client.for_user()
}

/// Whether a connection just opened speaks HTTP/2.
pub(crate) fn speaks_h2(_stream: &Stream, transport: Transport) -> bool {
    transport.http2
}

/// One HTTP/2 connection.
#[derive(Debug)]
pub(crate) struct Http2 {}

impl Http2 {
    /// The connection preface and settings exchange.
    pub(crate) async fn handshake(_stream: Stream) -> Result<Http2, Failure> {
        Err(Failure { error: Error::new(ErrorKind::Io, "HTTP/2 is not built yet"), retry: false })
    }

    /// Whether the connection takes new streams.
    pub(crate) fn is_open(&self) -> bool {
        false
    }

    /// Sends `request` on a new stream and reads its response.
    pub(crate) async fn exchange(&self, _request: &Outgoing<'_>, _target: &Target) -> Result<Reply, Failure> {
        Err(Failure { error: Error::new(ErrorKind::Io, "HTTP/2 is not built yet"), retry: false })
    }
}
