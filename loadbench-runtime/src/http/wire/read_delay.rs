//! How long what a server sent waited in the generator's own sockets before a worker read it:
//! the generator's share of a latency, seen where it happens.
//!
//! A worker that is busy elsewhere (other users' bodies, another socket's data) or off its CPU
//! leaves a response waiting in the kernel. Timer lag (`engine::selfcheck`) misses most of that:
//! its probe wakes every 10 ms, so a run shorter than a second gives it a handful of samples, and
//! a worker can fall behind its sockets without being late for a timer. This reads the delay off
//! the data itself. Each socket asks the kernel to stamp what it receives (`SO_TIMESTAMPNS`);
//! before one read in [`EVERY`] on a worker thread, a one-byte `MSG_PEEK` returns the stamp of
//! the oldest byte still queued, and the time since then is how long it waited.
//!
//! Sampled, not measured on every read: the peek is a system call of its own. One read in
//! [`EVERY`] keeps the whole cost, the kernel's stamps included, small against a request's
//! (bench/RESULTS.md § "Tail latency on a shared machine", Cost), while a run of a few thousand
//! reads still gives a hundred samples. A long wait is rare, though, and comes
//! where a count would miss it: in the first reads after the worker was away (a blocking body,
//! another thread holding the CPU). So the [`AFTER_AWAY`] reads that follow a gap of [`AWAY`] or
//! more between two reads of a thread are all sampled. Only a socket the runtime says is
//! readable is peeked, so no sample is spent on an empty one.
//!
//! Linux only (the stamps are Linux's); elsewhere nothing is recorded and the self-check goes by
//! timers and CPU alone.

use std::cell::{Cell, RefCell};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

/// One read in this many, per worker thread, is preceded by a peek at the queue's age.
const EVERY: u32 = 32;

/// A gap between two reads of a worker thread from which it counts as having been away.
const AWAY: Duration = Duration::from_millis(1);

/// Reads sampled, all of them, after the thread was away: the users whose data waited meanwhile.
const AFTER_AWAY: u32 = 4;

thread_local! {
    /// Reads until the next sample, on this thread.
    static COUNTDOWN: Cell<u32> = const { Cell::new(0) };
    /// Reads still to sample after the thread was away.
    static BURST: Cell<u32> = const { Cell::new(0) };
    /// When this thread last read.
    static LAST_READ: Cell<Option<Instant>> = const { Cell::new(None) };
    /// Where this thread's samples go, in microseconds, between [`begin`] and [`end`]; reads
    /// outside them (a user's setup, a thread that is not a worker) are not sampled.
    static DELAYS: RefCell<Option<Histogram<u64>>> = const { RefCell::new(None) };
}

/// Starts sampling this thread's reads into `into`: a worker, when its measured run starts.
pub(crate) fn begin(into: Histogram<u64>) {
    DELAYS.set(Some(into));
}

/// Stops sampling this thread's reads, and returns what was sampled since [`begin`].
pub(crate) fn end() -> Option<Histogram<u64>> {
    DELAYS.take()
}

/// Whether the next read on this thread is one to sample: one in [`EVERY`], and the
/// [`AFTER_AWAY`] after a gap of [`AWAY`], while sampling.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
#[inline]
fn due() -> bool {
    if DELAYS.with_borrow(Option::is_none) {
        return false;
    }
    let now = Instant::now();
    if LAST_READ.replace(Some(now)).is_some_and(|last| now.saturating_duration_since(last) >= AWAY) {
        BURST.set(AFTER_AWAY);
    }
    match (BURST.get(), COUNTDOWN.get()) {
        (0, 0) => COUNTDOWN.set(EVERY - 1),
        (0, n) => {
            COUNTDOWN.set(n - 1);
            return false;
        }
        (burst, _) => BURST.set(burst - 1),
    }
    true
}

/// Records one sample: data waited `us` microseconds.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn record(us: u64) {
    DELAYS.with_borrow_mut(|d| {
        if let Some(histogram) = d {
            // An auto-resizing histogram takes any value.
            let _ = histogram.record(us);
        }
    });
}

#[cfg(target_os = "linux")]
mod imp {
    use std::io::{self, IoSliceMut};
    use std::os::fd::AsRawFd;
    use std::task::{Context, Poll};
    use std::time::{Duration, SystemTime, UNIX_EPOCH};

    use nix::sys::socket::{ControlMessageOwned, MsgFlags, recvmsg, setsockopt, sockopt};
    use tokio::net::TcpStream;

    /// A wait longer than this is a step of the wall clock between the kernel's stamp and our
    /// reading of it, not a wait: dropped.
    const IMPLAUSIBLE: Duration = Duration::from_secs(600);

    /// Asks the kernel to stamp what `tcp` receives. A socket that refuses is not sampled.
    pub(crate) fn watch(tcp: &TcpStream) {
        let _ = setsockopt(tcp, sockopt::ReceiveTimestampns, &true);
    }

    /// Before a read of `tcp`: on a sampled read of a socket the runtime reports readable, peeks
    /// at the oldest queued byte and records how long it has waited.
    ///
    /// A socket's pending error (a reset) is reported once, to the first call that finds it: when
    /// the peek is that call, the error is handed back, for the read to return in its place, so
    /// that the exchange fails as it would have without the peek.
    #[inline]
    pub(crate) fn sample(tcp: &TcpStream, cx: &mut Context<'_>) -> Option<io::Error> {
        if !super::due() || !matches!(tcp.poll_read_ready(cx), Poll::Ready(Ok(()))) {
            return None;
        }
        match oldest_byte_age(tcp) {
            Ok(Some(waited)) => {
                super::record(u64::try_from(waited.as_micros()).unwrap_or(u64::MAX));
                None
            }
            Ok(None) => None,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => None,
            Err(e) => Some(e),
        }
    }

    /// How long the oldest byte queued on `tcp` has been there, if there is one and it is stamped.
    fn oldest_byte_age(tcp: &TcpStream) -> io::Result<Option<Duration>> {
        let mut byte = [0u8; 1];
        let mut iov = [IoSliceMut::new(&mut byte)];
        let mut space = nix::cmsg_space!(nix::sys::time::TimeSpec);
        let flags = MsgFlags::MSG_PEEK | MsgFlags::MSG_DONTWAIT;
        let msg = recvmsg::<()>(tcp.as_raw_fd(), &mut iov, Some(&mut space), flags).map_err(io::Error::from)?;
        if msg.bytes == 0 {
            return Ok(None);
        }
        let Ok(mut cmsgs) = msg.cmsgs() else { return Ok(None) };
        let arrived = cmsgs.find_map(|cmsg| match cmsg {
            ControlMessageOwned::ScmTimestampns(ts) => {
                let secs = u64::try_from(ts.tv_sec()).ok()?;
                let nanos = u32::try_from(ts.tv_nsec()).ok()?;
                Some(Duration::new(secs, nanos))
            }
            _ => None,
        });
        let now = SystemTime::now().duration_since(UNIX_EPOCH).ok();
        Ok(arrived.zip(now).and_then(|(arrived, now)| now.checked_sub(arrived)).filter(|waited| *waited < IMPLAUSIBLE))
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use std::io;
    use std::task::Context;

    use tokio::net::TcpStream;

    pub(crate) fn watch(_: &TcpStream) {}

    #[inline]
    pub(crate) fn sample(_: &TcpStream, _: &mut Context<'_>) -> Option<io::Error> {
        None
    }
}

pub(crate) use imp::{sample, watch};

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::io::Write as _;
    use std::time::Duration;

    use tokio::io::AsyncReadExt as _;

    use super::*;

    /// Data left unread for 30 ms is sampled as having waited at least that long: the stamp is
    /// the kernel's, taken when it arrived, whatever the test thread did meanwhile.
    #[tokio::test(flavor = "current_thread")]
    async fn data_left_unread_is_sampled_with_its_wait() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        let mut tcp = tokio::net::TcpStream::connect(addr).await.expect("connect");
        watch(&tcp);
        let (mut server, _) = listener.accept().expect("accept");
        // The kernel turns stamping on for the whole machine from a work queue, a moment after the
        // first socket asks: what arrives before then has no stamp. So send until one is stamped.
        let mut waited = None;
        for _ in 0..20 {
            begin(Histogram::new(2).expect("a histogram"));
            server.write_all(b"response").expect("write");
            std::thread::sleep(Duration::from_millis(30));
            tcp.readable().await.expect("readable");
            // One read in `EVERY` is sampled: go round the countdown once.
            for _ in 0..EVERY {
                let error = std::future::poll_fn(|cx| std::task::Poll::Ready(sample(&tcp, cx))).await;
                assert!(error.is_none(), "{error:?}");
            }
            let mut buf = Vec::new();
            tcp.read_buf(&mut buf).await.expect("read");
            assert_eq!(buf, b"response");
            if let Some(samples) = end().filter(|s| !s.is_empty()) {
                waited = Some(samples.max());
                break;
            }
        }
        let waited = waited.expect("a read of stamped data was sampled");
        assert!(waited >= 30_000, "waited {waited} µs");
    }

    /// A reset met by the peek is handed back for the read to return: the kernel reports it to
    /// the first call only, and the read after would see a plain end of stream.
    #[tokio::test(flavor = "current_thread")]
    async fn a_reset_found_by_the_peek_is_handed_back() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        let tcp = tokio::net::TcpStream::connect(addr).await.expect("connect");
        watch(&tcp);
        let (server, _) = listener.accept().expect("accept");
        // Closed with a zero linger: a reset, not a FIN.
        let linger = nix::libc::linger { l_onoff: 1, l_linger: 0 };
        nix::sys::socket::setsockopt(&server, nix::sys::socket::sockopt::Linger, &linger).expect("SO_LINGER");
        drop(server);
        tcp.readable().await.expect("readable");
        begin(Histogram::new(2).expect("a histogram"));
        let mut error = None;
        for _ in 0..EVERY {
            error = error.or(std::future::poll_fn(|cx| std::task::Poll::Ready(sample(&tcp, cx))).await);
        }
        assert_eq!(error.map(|e| e.kind()), Some(std::io::ErrorKind::ConnectionReset));
    }
}
