//! HTTP/1.1 on a shared connection: the requests of the users on one lane, pipelined up to the
//! scenario's depth and answered in order.

use super::{Failure, Outgoing, Reply};
use crate::error::{Error, ErrorKind};
use crate::http::stream::Stream;

/// One shared HTTP/1.1 connection.
#[derive(Debug)]
pub(crate) struct Pipeline {
    _stream: Stream,
    _depth: u32,
}

impl Pipeline {
    /// Starts pipelining on `stream`, at most `depth` requests in flight.
    pub(crate) fn start(stream: Stream, depth: u32) -> Pipeline {
        Pipeline { _stream: stream, _depth: depth }
    }

    /// Whether the connection takes new requests.
    pub(crate) fn is_open(&self) -> bool {
        false
    }

    /// Sends `request` behind those already on the connection and reads its response.
    pub(crate) async fn exchange(&self, _request: &Outgoing<'_>) -> Result<Reply, Failure> {
        Err(Failure { error: Error::new(ErrorKind::Io, "pipelining is not built yet"), retry: false })
    }
}
