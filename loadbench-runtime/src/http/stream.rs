//! A virtual user's socket: plain TCP, or TLS over it. One enum rather than a generic
//! connection, so that `Ctx` keeps one type and an `http://` request pays one predictable branch
//! per read or write, nothing more.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use rustls::ClientConfig;
use rustls::pki_types::ServerName;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;

use super::tls::{self, Cause, Handshake};

/// An open connection's byte stream.
#[derive(Debug)]
pub(crate) enum Stream {
    Plain(TcpStream),
    /// Boxed: a TLS session is a few hundred bytes that an `http://` user should not carry.
    Tls(Box<TlsStream<TcpStream>>),
}

/// How long opening a connection took, for the report.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Opened {
    /// From `connect` to the TCP connection established.
    pub(crate) connect: Duration,
    /// The TLS handshake after it, for `https://`.
    pub(crate) tls: Option<Handshake>,
}

/// Why a connection could not be opened.
#[derive(Debug)]
pub(crate) enum OpenError {
    /// The TCP connection was refused or failed.
    Connect(io::Error),
    /// The TLS handshake failed.
    Tls(Cause),
}

impl Stream {
    /// Connects to `addr`, then makes the TLS handshake when `tls` gives a user's configuration
    /// and the server's name.
    pub(crate) async fn open(
        addr: SocketAddr,
        tls: Option<(&Arc<ClientConfig>, &ServerName<'static>)>,
    ) -> Result<(Stream, Opened), OpenError> {
        let start = Instant::now();
        let tcp = TcpStream::connect(addr).await.map_err(OpenError::Connect)?;
        // Requests are small and latency-bound; Nagle would hold them back.
        tcp.set_nodelay(true).map_err(OpenError::Connect)?;
        let connect = start.elapsed();
        match tls {
            None => Ok((Stream::Plain(tcp), Opened { connect, tls: None })),
            Some((config, name)) => {
                let (stream, handshake) = tls::handshake(config, name, tcp).await.map_err(OpenError::Tls)?;
                Ok((Stream::Tls(Box::new(stream)), Opened { connect, tls: Some(handshake) }))
            }
        }
    }

    /// Whether an idle connection is still open and quiet: the server has neither closed it nor
    /// sent anything unasked. Costs no system call unless the socket was flagged readable while
    /// idle, which is how a close shows up.
    pub(crate) fn idle_ok(&mut self) -> bool {
        let mut cx = Context::from_waker(Waker::noop());
        match self {
            Stream::Plain(tcp) => match tcp.poll_read_ready(&mut cx) {
                Poll::Pending => true,
                Poll::Ready(Err(_)) => false,
                Poll::Ready(Ok(())) => {
                    let mut probe = [0u8; 1];
                    // `try_read` clears the readiness flag when there is nothing to read.
                    matches!(tcp.try_read(&mut probe), Err(e) if e.kind() == io::ErrorKind::WouldBlock)
                }
            },
            Stream::Tls(tls) => match tls.get_ref().0.poll_read_ready(&mut cx) {
                Poll::Pending => true,
                Poll::Ready(Err(_)) => false,
                // Records may have come that are not data: a TLS 1.3 session ticket, sent after
                // the handshake, or the server's close_notify. Reading through the session takes
                // the first and reports the second as the end of the stream.
                Poll::Ready(Ok(())) => {
                    let mut probe = [0u8; 1];
                    let mut buf = ReadBuf::new(&mut probe);
                    matches!(Pin::new(tls.as_mut()).poll_read(&mut cx, &mut buf), Poll::Pending)
                }
            },
        }
    }
}

impl AsyncRead for Stream {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(tcp) => Pin::new(tcp).poll_read(cx, buf),
            Stream::Tls(tls) => Pin::new(tls.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(tcp) => Pin::new(tcp).poll_write(cx, buf),
            Stream::Tls(tls) => Pin::new(tls.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            // A TCP socket holds nothing back: written is sent.
            Stream::Plain(_) => Poll::Ready(Ok(())),
            // rustls may hold encrypted records its socket would not take yet.
            Stream::Tls(tls) => Pin::new(tls.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(tcp) => Pin::new(tcp).poll_shutdown(cx),
            Stream::Tls(tls) => Pin::new(tls.as_mut()).poll_shutdown(cx),
        }
    }
}
