//! One virtual user's HTTP/1.1 connection, driven by the user's own task.
//!
//! hyper's client connection comes in two halves: a `SendRequest` handle and a `Connection`
//! future that does the I/O. The usual way is to spawn the `Connection` as a task of its own, but
//! then every request costs two task switches (handle → connection task → back). A virtual user
//! only ever has one request in flight, so here the user's task polls the connection itself
//! while it waits: one task per user, and the socket's readiness wakes that task directly.

use std::future::{Future, poll_fn};
use std::net::SocketAddr;
use std::pin::{Pin, pin};
use std::task::Poll;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::TrySendError;
use hyper::client::conn::http1::{self, SendRequest};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

type Driver = http1::Connection<TokioIo<TcpStream>, Full<Bytes>>;

/// An open keep-alive connection.
pub(crate) struct Http1Connection {
    sender: SendRequest<Full<Bytes>>,
    /// `None` once the driver has finished (the server closed the connection, or it failed).
    /// Dropping it then matters: its request queue goes with it, so the handle sees the
    /// connection closed instead of waiting on a queue nobody reads.
    driver: Option<Pin<Box<Driver>>>,
}

impl std::fmt::Debug for Http1Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Http1Connection").field("open", &self.driver.is_some()).finish_non_exhaustive()
    }
}

/// Why a connection could not be opened.
#[derive(Debug)]
pub(crate) enum ConnectError {
    Tcp(std::io::Error),
    Handshake(hyper::Error),
}

impl Http1Connection {
    pub(crate) async fn open(addr: SocketAddr) -> Result<Http1Connection, ConnectError> {
        let stream = TcpStream::connect(addr).await.map_err(ConnectError::Tcp)?;
        // Requests are small and latency-bound; Nagle would hold them back.
        stream.set_nodelay(true).map_err(ConnectError::Tcp)?;
        let (sender, driver) = http1::handshake(TokioIo::new(stream)).await.map_err(ConnectError::Handshake)?;
        Ok(Http1Connection { sender, driver: Some(Box::pin(driver)) })
    }

    /// Waits until a request can be sent; false once the connection is closed.
    pub(crate) async fn ready(&mut self) -> bool {
        let Http1Connection { sender, driver } = self;
        drive(driver, sender.ready()).await.is_ok()
    }

    /// Sends `request` and waits for the response head.
    pub(crate) async fn send(
        &mut self,
        request: Request<Full<Bytes>>,
    ) -> Result<Response<Incoming>, TrySendError<Request<Full<Bytes>>>> {
        let Http1Connection { sender, driver } = self;
        drive(driver, sender.try_send_request(request)).await
    }

    /// Reads the whole body of a response that came over this connection.
    pub(crate) async fn read_body(&mut self, body: Incoming) -> Result<Bytes, hyper::Error> {
        drive(&mut self.driver, body.collect()).await.map(|collected| collected.to_bytes())
    }
}

/// Polls `work` to completion while polling the connection's driver in the same task.
///
/// `work` is polled before and after the driver in each round: the driver acts on what `work`
/// queued (a request to write) and `work` sees what the driver delivered (a response) without
/// waiting for another wake-up.
async fn drive<T>(driver: &mut Option<Pin<Box<Driver>>>, work: impl Future<Output = T>) -> T {
    let mut work = pin!(work);
    poll_fn(|cx| {
        if let Poll::Ready(out) = work.as_mut().poll(cx) {
            return Poll::Ready(out);
        }
        if driver.as_mut().is_some_and(|d| d.as_mut().poll(cx).is_ready()) {
            // Closed or failed. Dropping the driver closes the handle's queue, so `work` fails
            // (or completes, if the response was already in) rather than waiting forever.
            *driver = None;
        }
        work.as_mut().poll(cx)
    })
    .await
}
