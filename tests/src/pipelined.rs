//! A raw HTTP/1.1 server that shows what pipelining puts on the wire: per connection, the peak
//! number of requests received and not yet answered.
//!
//! Hand-written over tokio's sockets rather than hyper's server, which reads the next
//! pipelined request only once it has answered the last one: it could never see more than one
//! request queued, which is what the tests measure.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// How the server answers.
#[derive(Debug, Clone, Copy)]
pub struct Pipelined {
    /// How long the server waits after reading before it answers everything queued: requests
    /// arriving meanwhile queue up behind.
    pub delay: Duration,
    /// Closes each connection after this many responses: on odd connections the last response
    /// says `Connection: close`, on even ones the socket is closed without a word.
    pub close_after: Option<u64>,
}

impl Default for Pipelined {
    fn default() -> Pipelined {
        Pipelined { delay: Duration::from_millis(2), close_after: None }
    }
}

#[derive(Debug, Default)]
struct Counters {
    connections: AtomicU64,
    requests: AtomicU64,
    answered: AtomicU64,
    /// Per connection, the most requests received and not yet answered at once.
    peaks: Mutex<Vec<u64>>,
}

/// The running server; it stops when dropped.
#[derive(Debug)]
pub struct PipelinedServer {
    addr: SocketAddr,
    counters: Arc<Counters>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl PipelinedServer {
    /// Starts a server on 127.0.0.1 and an ephemeral port.
    pub fn start(how: Pipelined) -> PipelinedServer {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("pipelined server runtime");
        let listener = runtime.block_on(TcpListener::bind("127.0.0.1:0")).expect("bind 127.0.0.1");
        let addr = listener.local_addr().expect("local addr");
        let counters = Arc::new(Counters::default());
        let shared = Arc::clone(&counters);
        runtime.spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else { continue };
                let index = shared.connections.fetch_add(1, Ordering::SeqCst);
                let slot = {
                    let mut peaks = shared.peaks.lock().unwrap_or_else(PoisonError::into_inner);
                    peaks.push(0);
                    peaks.len() - 1
                };
                let _ = stream.set_nodelay(true);
                let counters = Arc::clone(&shared);
                // Errors are the client leaving.
                tokio::spawn(async move { serve(stream, how, index, slot, &counters).await });
            }
        });
        PipelinedServer { addr, counters, runtime: Some(runtime) }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// TCP connections accepted.
    pub fn connections(&self) -> u64 {
        self.counters.connections.load(Ordering::SeqCst)
    }

    /// Complete requests received.
    pub fn requests(&self) -> u64 {
        self.counters.requests.load(Ordering::SeqCst)
    }

    /// Responses sent (counted as they are written).
    pub fn answered(&self) -> u64 {
        self.counters.answered.load(Ordering::SeqCst)
    }

    /// Per connection, the most requests it held received and unanswered at once.
    pub fn peaks(&self) -> Vec<u64> {
        self.counters.peaks.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

impl Drop for PipelinedServer {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

const RESPONSE: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";
const CLOSING: &[u8] = b"HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 2\r\n\r\nok";

async fn serve(mut stream: TcpStream, how: Pipelined, index: u64, slot: usize, counters: &Counters) -> Option<()> {
    let mut buf = Vec::with_capacity(64 * 1024);
    let mut queued = 0u64;
    let mut answered = 0u64;
    let mut out = Vec::new();
    loop {
        if stream.read_buf(&mut buf).await.ok()? == 0 {
            return None;
        }
        tokio::time::sleep(how.delay).await;
        // What came meanwhile queues behind.
        while let Ok(n) = stream.try_read_buf(&mut buf) {
            if n == 0 {
                break;
            }
        }
        let complete = take_requests(&mut buf);
        counters.requests.fetch_add(complete, Ordering::SeqCst);
        queued += complete;
        {
            let mut peaks = counters.peaks.lock().unwrap_or_else(PoisonError::into_inner);
            peaks[slot] = peaks[slot].max(queued);
        }
        let mut now = queued;
        let mut last = false;
        if let Some(k) = how.close_after {
            now = now.min(k - answered);
            last = answered + now == k;
        }
        out.clear();
        for i in 0..now {
            let closing = last && i + 1 == now && index % 2 == 1;
            out.extend_from_slice(if closing { CLOSING } else { RESPONSE });
        }
        // Counted before they go out, so that a client that has read them finds them counted.
        counters.answered.fetch_add(now, Ordering::SeqCst);
        stream.write_all(&out).await.ok()?;
        answered += now;
        queued -= now;
        if last {
            // A FIN, then whatever the client still sends is read and dropped: closing with
            // unread bytes would reset the connection, and a reset can destroy responses the
            // client has not read yet.
            stream.shutdown().await.ok()?;
            let drain = async {
                while matches!(stream.read_buf(&mut buf).await, Ok(n) if n > 0) {
                    buf.clear();
                }
            };
            let _ = tokio::time::timeout(Duration::from_secs(5), drain).await;
            return Some(());
        }
    }
}

/// Removes the complete requests at the front of `buf` (a head, and a body of its
/// `content-length`) and counts them.
fn take_requests(buf: &mut Vec<u8>) -> u64 {
    let mut used = 0;
    let mut count = 0;
    while let Some(end) = buf[used..].windows(4).position(|w| w == b"\r\n\r\n") {
        let head = String::from_utf8_lossy(&buf[used..used + end]).to_ascii_lowercase();
        let body: usize = head
            .lines()
            .find_map(|line| line.strip_prefix("content-length:"))
            .and_then(|value| value.trim().parse().ok())
            .unwrap_or(0);
        let next = used + end + 4 + body;
        if next > buf.len() {
            break;
        }
        used = next;
        count += 1;
    }
    buf.drain(..used);
    count
}
