//! HTTP/3 on a lane: the requests of its users as concurrent streams on one QUIC connection.
//!
//! Unlike HTTP/2's, this client is not the runtime's own: QUIC's loss recovery, congestion
//! control and packet protection are quinn's, and HTTP/3's frames, QPACK and control streams
//! are hyperium's h3 over it (`h3-quinn`). What is the runtime's is how a lane uses them:
//!
//! - one quinn `Endpoint` (one UDP socket and its driver) per worker thread serves every
//!   connection of that worker's lanes ([`Endpoints`]), opened on first use;
//! - a connection is opened by the lane as a TCP one is, with the lane's rustls configuration
//!   (ALPN `h3`, TLS 1.3; `--cacert`, `--insecure` and `--cert` come with it, and its session
//!   cache, so that a reconnect may resume and send its first requests as 0-RTT early data);
//!   h3's connection driver runs as a local task until the connection ends;
//! - a request is a bidirectional stream, sent and read within the user's own future (the
//!   lane's timer bounds it); at most the server's `max_concurrent_bidi_streams` are open at
//!   once (quinn holds a new one until the server allows it);
//! - what a server may send is bounded: every frame but `DATA` by the run's
//!   `max_header_list_size` as its bytes arrive (`frames.rs`, `bounded.rs`: h3 would buffer a
//!   whole frame before looking at it), a response's header section by the same limit
//!   (advertised as `SETTINGS_MAX_FIELD_SECTION_SIZE`, enforced by h3 as it decodes), a kept
//!   body by `max_body` as it arrives, a discarded one counted and dropped as it arrives; QUIC's
//!   flow control (quinn's default windows) bounds what waits unread;
//! - how a request fails is in `failure.rs`: what the server did not process (a `GOAWAY`, a
//!   stream refused with `H3_REQUEST_REJECTED`, early data refused) may be sent again, the rest
//!   is the request's error, by kind.

mod bounded;
mod failure;
mod frames;

use std::cell::{Cell, OnceCell, RefCell};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Buf, BufMut, Bytes, BytesMut};
use http::uri::{Authority, PathAndQuery, Scheme};
use tokio::time::Instant;

pub(crate) use self::failure::Handshake;
use self::failure::{Opening, stream_failed};
use super::{Failure, Outgoing, Reply};
use crate::error::{Error, ErrorKind, Result};
use crate::http::Recorder;
use crate::http::wire::connection::BodyPolicy;
use crate::http::wire::counters::HttpCounters;
use crate::http::wire::response::{Parts, Response};
use crate::http::wire::target::Target;

/// A request's stream, as h3 gives it.
type RequestStream = h3::client::RequestStream<bounded::Bidi, Bytes>;

/// What a lane sends requests through.
type SendRequest = h3::client::SendRequest<bounded::Opener, Bytes>;

/// The QUIC endpoints of one worker thread: one per address family, opened when a lane of the
/// worker first connects, shared by every lane of the worker (`Rc`: the worker's thread only).
#[derive(Debug, Default)]
pub(crate) struct Endpoints {
    v4: OnceCell<quinn::Endpoint>,
    v6: OnceCell<quinn::Endpoint>,
}

impl Endpoints {
    /// The endpoint for connections to `addr`, bound to an ephemeral port of the unspecified
    /// address of its family. Must be called within the worker's runtime (quinn spawns the
    /// endpoint's driver on it).
    fn for_addr(&self, addr: SocketAddr) -> Result<&quinn::Endpoint> {
        let (cell, any): (_, SocketAddr) = match addr {
            SocketAddr::V4(_) => (&self.v4, (Ipv4Addr::UNSPECIFIED, 0).into()),
            SocketAddr::V6(_) => (&self.v6, (Ipv6Addr::UNSPECIFIED, 0).into()),
        };
        if let Some(endpoint) = cell.get() {
            return Ok(endpoint);
        }
        let endpoint = open_endpoint(any)
            .map_err(|e| Error::with_source(ErrorKind::Connect, format!("cannot open a UDP socket on {any}"), e))?;
        Ok(cell.get_or_init(|| endpoint))
    }
}

/// The socket buffers asked for a worker's endpoint, each way: every connection of the worker's
/// users arrives on its one socket, and the kernel's default overflowed with 50 connections'
/// responses at once, each datagram lost waiting for QUIC to send it again (bench/RESULTS.md §
/// "HTTP/3 against oha's, and against loadbench's HTTP/2"). 8 MiB, as oha and the bench's server
/// ask; the kernel caps it at `net.core.rmem_max`, and a smaller buffer is no error.
const UDP_BUFFER: usize = 8 << 20;

/// A client endpoint on a UDP socket bound to `any`, its buffers enlarged as far as the kernel
/// allows.
fn open_endpoint(any: SocketAddr) -> std::io::Result<quinn::Endpoint> {
    let socket = std::net::UdpSocket::bind(any)?;
    let state = quinn::udp::UdpSocketState::new((&socket).into())?;
    // Best effort: a kernel that refuses leaves the default, which still works.
    let _ = state.set_recv_buffer_size((&socket).into(), UDP_BUFFER);
    let _ = state.set_send_buffer_size((&socket).into(), UDP_BUFFER);
    let runtime = quinn::default_runtime()
        .ok_or_else(|| std::io::Error::other("no async runtime for QUIC (the worker runs on tokio)"))?;
    quinn::Endpoint::new(quinn::EndpointConfig::default(), None, socket, runtime)
}

impl Drop for Endpoints {
    fn drop(&mut self) {
        // The connections still open are closed at once, with no error: the run is over.
        for endpoint in [self.v4.get(), self.v6.get()].into_iter().flatten() {
            endpoint.close(h3::error::Code::H3_NO_ERROR.value().try_into().unwrap_or_default(), b"");
        }
    }
}

/// A lane's QUIC side: its worker's endpoints and its client configuration, built once from the
/// lane's rustls configuration (whose session cache the lane's connections share).
#[derive(Debug)]
pub(crate) struct Quic {
    endpoints: Rc<Endpoints>,
    config: std::result::Result<quinn::ClientConfig, String>,
    /// The server's name for SNI and the certificate check.
    server_name: String,
    /// `https` and the target's authority, for every request's `:scheme` and `:authority`.
    authority: Option<Authority>,
    max_field_section_size: u64,
}

impl Quic {
    /// The QUIC side of a lane to `target`, whose TLS configuration is `tls`.
    pub(crate) fn new(endpoints: &Rc<Endpoints>, target: &Target, tls: &crate::http::wire::tls::Config) -> Quic {
        let config = quinn::crypto::rustls::QuicClientConfig::try_from(Arc::clone(tls))
            .map(|crypto| quinn::ClientConfig::new(Arc::new(crypto)))
            .map_err(|e| format!("the TLS configuration cannot carry QUIC: {e}"));
        let server_name = target.tls().map(|(_, name)| name.to_str().into_owned()).unwrap_or_default();
        Quic {
            endpoints: Rc::clone(endpoints),
            config,
            server_name,
            authority: Authority::try_from(target.host_header().as_bytes()).ok(),
            max_field_section_size: u64::from(target.max_header_list_size()),
        }
    }

    /// Opens a QUIC connection to `target` and starts HTTP/3 on it, counting it in `counters`
    /// and recording its handshake. A ticket from an earlier connection lets the first requests
    /// go out as 0-RTT early data, before the handshake completes.
    pub(crate) async fn connect(
        &self,
        addr: SocketAddr,
        counters: &mut HttpCounters,
        recorder: Option<&dyn Recorder>,
    ) -> Result<Http3> {
        let config = self.config.clone().map_err(|why| Error::new(ErrorKind::Tls, why))?;
        let endpoint = self.endpoints.for_addr(addr)?;
        let start = Instant::now();
        let connecting = endpoint
            .connect_with(config, addr, &self.server_name)
            .map_err(|e| Error::with_source(ErrorKind::Connect, format!("cannot connect to {addr} over QUIC"), e))?;
        let early = Rc::new(Cell::new(EarlyData::None));
        let connection = match connecting.into_0rtt() {
            Ok((connection, accepted)) => {
                // Counted as a connection, and its handshake as one, once the server answers
                // (`take_zero_rtt`): a server gone may never answer.
                counters.tls.zero_rtt_offered += 1;
                early.set(EarlyData::Pending);
                let (answer, quic) = (Rc::clone(&early), connection.clone());
                tokio::task::spawn_local(async move {
                    let accepted = accepted.await;
                    // quinn answers `false` for a handshake that never completed too, after it
                    // has recorded why the connection ended.
                    let established = accepted || quic.close_reason().is_none();
                    answer.set(EarlyData::Answered(ZeroRtt { accepted, established, elapsed: start.elapsed() }));
                });
                connection
            }
            Err(connecting) => {
                let connection = connecting.await.map_err(|e| Opening::failed(e, addr, counters))?;
                counters.tls.handshakes += 1;
                counters.tls.tls13 += 1;
                counters.connections += 1;
                if let Some(recorder) = recorder {
                    recorder.record_connection(None, Some(start.elapsed()));
                }
                connection
            }
        };
        let mut builder = h3::client::builder();
        builder.max_field_section_size(self.max_field_section_size);
        let (mut driver, send) = builder
            .build::<_, _, Bytes>(bounded::Conn::new(connection.clone(), self.max_field_section_size))
            .await
            .map_err(|e| failure::start_failed(e, addr))?;
        tokio::task::spawn_local(async move {
            // Ends when the connection does, however it ends: each request sees why on its
            // own stream.
            let _ = std::future::poll_fn(|cx| driver.poll_close(cx)).await;
        });
        Ok(Http3 {
            connection,
            send: RefCell::new(send),
            authority: self.authority.clone(),
            closing: Cell::new(false),
            early,
            addr,
        })
    }
}

/// One HTTP/3 connection. Dropped (the lane opened another, or is gone), it is closed with
/// `H3_NO_ERROR`.
pub(crate) struct Http3 {
    connection: quinn::Connection,
    send: RefCell<SendRequest>,
    authority: Option<Authority>,
    /// Set once the server said `GOAWAY`: no new request goes on this connection.
    closing: Cell<bool>,
    /// This connection's 0-RTT early data: the server's answer, set by the task that waits for
    /// it, recorded by the first request that ends after it.
    early: Rc<Cell<EarlyData>>,
    addr: SocketAddr,
}

/// What became of a connection's 0-RTT early data.
#[derive(Debug, Clone, Copy)]
enum EarlyData {
    /// None sent: a 1-RTT connection.
    None,
    /// Sent, and the server has not answered yet: the handshake is under way.
    Pending,
    /// The server answered; not recorded yet.
    Answered(ZeroRtt),
    /// The answer is taken, and recorded if the handshake completed.
    Recorded { established: bool },
}

/// How a connection's 0-RTT handshake ended.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ZeroRtt {
    /// The server took the early data.
    pub(crate) accepted: bool,
    /// The handshake completed (early data refused or not); if not, there was no connection.
    pub(crate) established: bool,
    /// From the connection's start to the server's answer.
    pub(crate) elapsed: Duration,
}

impl std::fmt::Debug for Http3 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Http3").field("addr", &self.addr).field("open", &self.is_open()).finish_non_exhaustive()
    }
}

impl Drop for Http3 {
    fn drop(&mut self) {
        self.abandon();
    }
}

/// A response over HTTP/3, and how long its head took.
pub(crate) struct Answered {
    pub(crate) reply: Reply,
    /// From the request's send to its response's head.
    pub(crate) first_byte: Duration,
}

impl Http3 {
    /// Whether it takes new requests: open, and no `GOAWAY` from the server. Out of line: the
    /// lane's check, inlined on every protocol's path, then stays small.
    #[inline(never)]
    pub(crate) fn is_open(&self) -> bool {
        !self.closing.get() && self.connection.close_reason().is_none()
    }

    /// The server's answer on this connection's early data, once.
    pub(crate) fn take_zero_rtt(&self) -> Option<ZeroRtt> {
        let EarlyData::Answered(answer) = self.early.get() else { return None };
        self.early.set(EarlyData::Recorded { established: answer.established });
        Some(answer)
    }

    /// How far its handshake got. A 0-RTT connection with no answer yet, or whose answer says
    /// the handshake failed, is unfinished; given up once closed here (only `abandon` closes
    /// one with requests on it).
    pub(crate) fn handshake(&self) -> Handshake {
        let unfinished = match self.early.get() {
            EarlyData::Pending => true,
            EarlyData::Answered(answer) => !answer.established,
            EarlyData::Recorded { established } => !established,
            EarlyData::None => false,
        };
        match self.connection.close_reason() {
            _ if !unfinished => Handshake::Complete,
            Some(quinn::ConnectionError::LocallyClosed) => Handshake::GivenUp,
            _ => Handshake::Unfinished,
        }
    }

    /// Gives up on it: closed, it takes no more requests, and those on it fail.
    pub(crate) fn abandon(&self) {
        self.connection.close(h3::error::Code::H3_NO_ERROR.value().try_into().unwrap_or_default(), b"");
    }

    /// Sends `request` as a new stream and reads its response. What the request is made of is
    /// copied out before the future starts, so that it borrows only the connection.
    pub(crate) fn exchange<'a>(
        &'a self,
        request: &Outgoing<'_>,
    ) -> impl std::future::Future<Output = std::result::Result<Answered, Failure>> + 'a {
        let built = self.request(request);
        let body = request.body.clone();
        let policy = request.policy;
        async move {
            let head = built.map_err(|e| Failure::new(e, false))?;
            let start = Instant::now();
            // One sender per request: h3's `send_request` takes `&mut`, and users send at once.
            let mut send = self.send.borrow().clone();
            let mut stream = match send.send_request(head).await {
                Ok(stream) => stream,
                Err(e) => return Err(self.failed(e, false)),
            };
            // A server may stop reading a request it has all it needs of and answer it in full
            // (RFC 9114 § 4.1.2, commonly a GET whose end it never reads): the request's end
            // then fails, and the response must not be discarded for it. What failed is the
            // response's to say: a server that stopped reading and never answers ends at the
            // request's timeout.
            let mut sent = Ok(());
            if !body.is_empty() {
                sent = stream.send_data(body).await;
            }
            if sent.is_ok() {
                let _ = stream.finish().await;
            }
            let response = stream.recv_response().await.map_err(|e| self.failed(e, true))?;
            let first_byte = start.elapsed();
            let (message, body_at, body_len) = read_response(&mut stream, &response, policy)
                .await
                .map_err(|e| e.map_or_else(|too_large| Failure::new(too_large, false), |e| self.failed(e, true)))?;
            let sets_cookie = response.headers().contains_key(http::header::SET_COOKIE);
            let parts = Parts::new(response.status(), message, body_at, sets_cookie);
            Ok(Answered { reply: Reply { response: Response::from_parts(parts), body_len }, first_byte })
        }
    }

    /// The request's head as h3 takes it: the method, `https` and the target's authority, the
    /// path, and the headers.
    fn request(&self, request: &Outgoing<'_>) -> Result<http::Request<()>> {
        let authority = self.authority.clone().ok_or_else(|| Error::msg("the target's host is not an authority"))?;
        let path = PathAndQuery::try_from(request.path).map_err(|e| {
            Error::with_source(ErrorKind::Scenario, format!("`{}` is not a request path", request.path), e)
        })?;
        let uri = http::Uri::from_parts({
            let mut parts = http::uri::Parts::default();
            parts.scheme = Some(Scheme::HTTPS);
            parts.authority = Some(authority);
            parts.path_and_query = Some(path);
            parts
        })
        .map_err(|e| Error::with_source(ErrorKind::Scenario, "the request's URL", e))?;
        let mut head = http::Request::new(());
        *head.method_mut() = request.method.clone();
        *head.uri_mut() = uri;
        *head.headers_mut() = request.headers.clone();
        Ok(head)
    }

    /// A stream error as the request's failure; `sent` once its head went out. A `GOAWAY` also
    /// closes the connection to new requests.
    fn failed(&self, err: h3::error::StreamError, sent: bool) -> Failure {
        if matches!(err, h3::error::StreamError::RemoteClosing { .. }) {
            self.closing.set(true);
        }
        stream_failed(err, sent, self.handshake(), self.addr)
    }
}

/// Reads the response's body by `policy`, and lays out the response as every protocol's is: an
/// HTTP/1.1 head (status line, `name: value` lines, an empty line) then the body kept, with the
/// body's length as received. Fails with the stream's error, or with `BodyTooLarge` (the `Err`
/// of the inner result) as soon as a kept body passes its limit.
async fn read_response(
    stream: &mut RequestStream,
    response: &http::Response<()>,
    policy: BodyPolicy,
) -> std::result::Result<(Bytes, usize, u64), std::result::Result<h3::error::StreamError, Error>> {
    let mut message = BytesMut::with_capacity(256);
    message.put_slice(b"HTTP/1.1 ");
    message.put_slice(response.status().as_str().as_bytes());
    message.put_slice(b" \r\n");
    for (name, value) in response.headers() {
        message.put_slice(name.as_str().as_bytes());
        message.put_slice(b": ");
        message.put_slice(value.as_bytes());
        message.put_slice(b"\r\n");
    }
    message.put_slice(b"\r\n");
    let body_at = message.len();
    let mut received: u64 = 0;
    while let Some(mut chunk) = stream.recv_data().await.map_err(Ok)? {
        received += chunk.remaining() as u64;
        match policy {
            // The stream is dropped with the error, which asks the server to stop sending
            // (quinn's `STOP_SENDING` for a stream dropped unfinished). Not `stop_sending`:
            // h3-quinn's panics while a read of the stream is pending.
            BodyPolicy::Keep(max) if received > max => {
                return Err(Err(Error::new(
                    ErrorKind::BodyTooLarge,
                    format!("the response body is longer than the {max} bytes a request keeps"),
                )));
            }
            BodyPolicy::Keep(_) => {
                while chunk.has_remaining() {
                    let part = chunk.chunk();
                    let n = part.len();
                    message.put_slice(part);
                    chunk.advance(n);
                }
            }
            BodyPolicy::Discard => {}
        }
    }
    Ok((message.freeze(), body_at, received))
}
