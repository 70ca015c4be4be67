//! A virtual user's socket: plain TCP, or TLS over it. One enum rather than a generic
//! connection, so that `Ctx` keeps one type and an `http://` request pays one predictable branch
//! per read or write, nothing more.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpSocket, TcpStream};

use super::read_delay;
use super::tls::{self, Cause, Handshake};

/// The receive buffer of a connection to a server on this machine, fixed rather than left to
/// the kernel's autotuning.
///
/// Autotuning grows a socket's window with what its reader takes per round trip, so on loopback
/// the connections a worker happened to drain in large gulps got windows of megabytes while the
/// others stayed small; a server then sends whole large bodies down the first and a slice per
/// pass down the rest, and those wait: the generator's doing, in the server's latency
/// (bench/RESULTS.md § "Tail latency on a shared machine"). One size for all keeps the server's
/// passes fair. 256 KiB (the kernel doubles it for its bookkeeping, and caps it at
/// `net.core.rmem_max`) holds a 108 KB body whole, is many times loopback's bandwidth-delay
/// product, and measured best of 64, 128 and 256 KiB. A remote server keeps autotuning, which a
/// long round trip needs.
const SAME_MACHINE_RECV_BUFFER: u32 = 256 * 1024;

/// An open connection's byte stream.
#[derive(Debug)]
pub(crate) enum Stream {
    Plain(TcpStream),
    /// Boxed: a TLS session is a few hundred bytes that an `http://` user should not carry.
    #[cfg(feature = "tls")]
    Tls(Box<tls::Session>),
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
    /// The TLS handshake failed, after a TCP connect that took this long.
    #[cfg_attr(not(feature = "tls"), allow(dead_code))]
    Tls(Cause, Duration),
}

impl Stream {
    /// Connects to `addr`, then makes the TLS handshake when `tls` gives a user's configuration
    /// and the server's name.
    pub(crate) async fn open(
        addr: SocketAddr,
        tls: Option<(&tls::Config, &tls::ServerName)>,
    ) -> Result<(Stream, Opened), OpenError> {
        let start = Instant::now();
        let socket =
            if addr.is_ipv4() { TcpSocket::new_v4() } else { TcpSocket::new_v6() }.map_err(OpenError::Connect)?;
        if addr.ip().is_loopback() {
            socket.set_recv_buffer_size(SAME_MACHINE_RECV_BUFFER).map_err(OpenError::Connect)?;
        }
        let tcp = socket.connect(addr).await.map_err(OpenError::Connect)?;
        // Requests are small and latency-bound; Nagle would hold them back.
        tcp.set_nodelay(true).map_err(OpenError::Connect)?;
        read_delay::watch(&tcp);
        let connect = start.elapsed();
        match tls {
            None => Ok((Stream::Plain(tcp), Opened { connect, tls: None })),
            #[cfg(not(feature = "tls"))]
            Some((config, _)) => match *config {},
            #[cfg(feature = "tls")]
            Some((config, name)) => {
                let (stream, handshake) =
                    tls::handshake(config, name, tcp).await.map_err(|cause| OpenError::Tls(cause, connect))?;
                Ok((Stream::Tls(Box::new(stream)), Opened { connect, tls: Some(handshake) }))
            }
        }
    }

    /// Whether written bytes may wait in the stream until flushed (TLS records rustls holds when
    /// the socket would not take them).
    pub(crate) fn buffers_writes(&self) -> bool {
        self.is_tls()
    }

    /// Whether this is a TLS session.
    pub(crate) fn is_tls(&self) -> bool {
        match self {
            Stream::Plain(_) => false,
            #[cfg(feature = "tls")]
            Stream::Tls(_) => true,
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
            #[cfg(feature = "tls")]
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
            Stream::Plain(tcp) => match read_delay::sample(tcp, cx) {
                // The peek met the socket's error first: the read returns it, as it would have.
                Some(error) => Poll::Ready(Err(error)),
                None => Pin::new(tcp).poll_read(cx, buf),
            },
            #[cfg(feature = "tls")]
            Stream::Tls(tls) => match read_delay::sample(tls.get_ref().0, cx) {
                Some(error) => Poll::Ready(Err(error)),
                None => Pin::new(tls.as_mut()).poll_read(cx, buf),
            },
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(tcp) => Pin::new(tcp).poll_write(cx, buf),
            #[cfg(feature = "tls")]
            Stream::Tls(tls) => Pin::new(tls.as_mut()).poll_write(cx, buf),
        }
    }

    #[cfg_attr(not(feature = "tls"), allow(unused_variables))]
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            // A TCP socket holds nothing back: written is sent.
            Stream::Plain(_) => Poll::Ready(Ok(())),
            // rustls may hold encrypted records its socket would not take yet.
            #[cfg(feature = "tls")]
            Stream::Tls(tls) => Pin::new(tls.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(tcp) => Pin::new(tcp).poll_shutdown(cx),
            #[cfg(feature = "tls")]
            Stream::Tls(tls) => Pin::new(tls.as_mut()).poll_shutdown(cx),
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::io::Write as _;

    use nix::sys::socket::{getsockopt, sockopt};
    use tokio::io::AsyncReadExt as _;

    use super::*;

    /// A connection to this machine keeps the receive buffer it was given however fast data comes:
    /// the kernel's autotuning, which would grow it, is off.
    #[tokio::test(flavor = "current_thread")]
    // Without the `tls` feature a stream is always plain TCP.
    #[allow(irrefutable_let_patterns)]
    async fn a_connection_to_this_machine_keeps_a_fixed_receive_buffer() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        let server = std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().expect("accept");
            let chunk = vec![7u8; 1 << 20];
            for _ in 0..32 {
                conn.write_all(&chunk).expect("write");
            }
        });
        let (mut stream, _) = Stream::open(addr, None).await.expect("open");
        let Stream::Plain(tcp) = &stream else { panic!("plain TCP") };
        let given = getsockopt(tcp, sockopt::RcvBuf).expect("SO_RCVBUF");
        // The kernel doubles what was asked, within `net.core.rmem_max`.
        let max = std::fs::read_to_string("/proc/sys/net/core/rmem_max")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .unwrap_or(usize::MAX);
        assert_eq!(given, 2 * (SAME_MACHINE_RECV_BUFFER as usize).min(max));
        let mut received = 0;
        let mut buf = vec![0u8; 1 << 16];
        loop {
            match stream.read(&mut buf).await.expect("read") {
                0 => break,
                n => received += n,
            }
        }
        server.join().expect("the server thread");
        assert_eq!(received, 32 << 20);
        let Stream::Plain(tcp) = &stream else { panic!("plain TCP") };
        assert_eq!(getsockopt(tcp, sockopt::RcvBuf).expect("SO_RCVBUF"), given, "autotuning moved it");
    }
}
