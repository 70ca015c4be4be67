//! The socket under an HTTP/2 connection, watched for the TLS alert that ends a session: h2
//! turns an I/O error into its text, and the alert's cause (a TLS 1.3 server refusing the
//! client's certificate after the handshake) would be lost with its type.

use std::io;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::Shared;
use crate::http::stream::Stream;
use crate::http::tls::Cause;

/// A connection's socket that keeps the cause of a failed TLS session in its `Shared`.
#[derive(Debug)]
pub(super) struct Watched {
    stream: Stream,
    shared: Rc<Shared>,
}

impl Watched {
    pub(super) fn new(stream: Stream, shared: Rc<Shared>) -> Watched {
        Watched { stream, shared }
    }

    /// Passes `result` on, keeping the TLS cause of its error, if it has one.
    fn watch<T>(&self, result: Poll<io::Result<T>>) -> Poll<io::Result<T>> {
        if let Poll::Ready(Err(e)) = &result
            && let Some(cause) = Cause::of_session(e)
        {
            *self.shared.alert.borrow_mut() = Some(cause);
        }
        result
    }
}

impl AsyncRead for Watched {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let result = Pin::new(&mut this.stream).poll_read(cx, buf);
        this.watch(result)
    }
}

impl AsyncWrite for Watched {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let result = Pin::new(&mut this.stream).poll_write(cx, buf);
        this.watch(result)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let result = Pin::new(&mut this.stream).poll_flush(cx);
        this.watch(result)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}
