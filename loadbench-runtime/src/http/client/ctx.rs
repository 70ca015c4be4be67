//! What a scenario body gets: one virtual user's HTTP client, with its own connection.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::rc::Rc;
use std::time::Duration;

use bytes::Bytes;
use http::HeaderMap;
use http::Method;

use super::cookies::{Cookies, Jar};
use super::last_request::LastRequest;
use super::measure::Arrival;
use super::names::Naming;
use super::session::{Chain, Resend, SessionOptions};
use crate::config::DEFAULT_MAX_BODY;
use crate::error::{Error, Result};
use crate::http::Recorder;
use crate::http::wire::connection::{BodyPolicy, Http1Connection};
use crate::http::wire::counters::HttpCounters;
use crate::http::wire::failures::{connected, exchange_failed, timed_out};
use crate::http::wire::request_timer::RequestTimer;
use crate::http::wire::response::Response;
use crate::http::wire::shared::{Lane, Outgoing, Sender, UserSide};
use crate::http::wire::stream::Stream;
use crate::http::wire::target::Target;

/// One virtual user's view of the run: an HTTP/1.1 client bound to the target, with a keep-alive
/// connection of its own.
///
/// No pool and no lock sit between the scenario and the socket: each virtual user owns its
/// connection and reconnects when the server closes it, so `concurrency = C` means exactly C
/// connections.
///
/// ```no_run
/// #[loadbench::scenario(concurrency = 10, count = 1_000)]
/// async fn create_item(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
///     ctx.post("/items")
///         .header("content-type", "application/json")
///         .body(r#"{"name":"widget"}"#)
///         .send()
///         .await?
///         .expect_status(201)?;
///     Ok(())
/// }
/// # fn main() {}
/// ```
#[derive(Debug)]
// Fields in first-touch order: with a thousand users taking turns on a core, each of a user's
// cache lines a request touches is a cache miss. Re-measure before reordering (bench/RESULTS.md
// § Ctx layout); a test holds the size.
#[repr(C)]
pub struct Ctx {
    /// What the request being built does with its response's body. Here rather than in the
    /// builder, so that neither the builder nor the request's future grows by it.
    pub(in crate::http) policy: BodyPolicy,
    timeout: Duration,
    /// Most bytes of a response body kept, unless a request says otherwise.
    pub(in crate::http) max_body: u64,
    /// Redirects a request follows unless it says otherwise (`follow_redirects`).
    pub(in crate::http) follow_default: u32,
    /// Redirects the request being built follows; here, as `policy`, to keep the builder small.
    pub(in crate::http) follow: u32,
    /// The method of the request being built (a redirect's hop changes it). Here rather than
    /// moved from the builder into the request's future: a `Method` is written a field at a
    /// time, and the wider loads of a move that follows at once wait for those stores to reach
    /// the cache (bench/RESULTS.md § Layouts on the request path).
    pub(in crate::http) method: Method,
    user: u32,
    /// Whether the current iteration is measured (not warmup), so that its steps count.
    pub(crate) measuring: bool,
    /// The shared connection this user sends on (`connections = N`, `http2 = true`), instead of
    /// `conn`, its own.
    pub(in crate::http) lane: Option<Rc<Lane>>,
    /// The redirects the request being sent has followed so far; boxed, and only once one is:
    /// following is rare. Here rather than in the request's future, where the lane's exchange
    /// read it together with the user's state in one wide load that waited for the two stores
    /// (bench/RESULTS.md § Layouts on the request path).
    pub(in crate::http) chain: Option<Box<Chain>>,
    /// The user's cookies ([`Ctx::cookies`]).
    pub(in crate::http) jar: Jar,
    timer: RequestTimer,
    /// The request being sent, encoded; the allocation is kept from request to request.
    pub(in crate::http) wire: Vec<u8>,
    /// The path of the request being built, and whether `wire` already holds the request.
    pub(in crate::http) last: LastRequest,
    pub(crate) counters: HttpCounters,
    // The fields below are not read by a request without cookies, a name or a new connection.
    /// Where [`Ctx::step`] and new connections are recorded (the user's worker); `None` where
    /// nothing collects them.
    pub(in crate::http) recorder: Option<Rc<dyn Recorder>>,
    pub(in crate::http) target: Rc<Target>,
    conn: Option<Http1Connection>,
    /// The headers and body of a request that may be followed, to send again on a 307 or 308.
    pub(in crate::http) resend: Option<Box<Resend>>,
    /// This user's cursor into its scenario's feed (`feed.rs`); `None` without one.
    pub(in crate::http) feed: Option<crate::feed::FeedCursor>,
    /// For `https://`: this user's TLS configuration, with a session cache of its own.
    tls: Option<crate::http::wire::tls::Config>,
    /// [`Ctx::user_data`], one value per type.
    user_data: HashMap<TypeId, Box<dyn Any>>,
    /// With a lane that may speak HTTP/2: the headers and body of the request being sent, which
    /// HTTP/2 sends instead of `wire`; empty otherwise.
    pub(in crate::http) parts: (HeaderMap, Bytes),
    /// Under an arrival rate, where the iteration began, until a measured operation takes it
    /// (`measure.rs`). Last: no request reads it.
    pub(crate) arrival: Option<Arrival>,
}

impl Ctx {
    pub(crate) fn new(target: Rc<Target>, timeout: Duration, user: u32, recorder: Option<Rc<dyn Recorder>>) -> Ctx {
        Ctx {
            tls: target.tls().map(|(client, _)| client.for_user()),
            target,
            timeout,
            max_body: DEFAULT_MAX_BODY,
            policy: BodyPolicy::Keep(DEFAULT_MAX_BODY),
            user,
            conn: None,
            last: LastRequest::default(),
            wire: Vec::new(),
            timer: RequestTimer::default(),
            user_data: HashMap::new(),
            counters: HttpCounters::default(),
            jar: Jar::default(),
            follow_default: 0,
            follow: 0,
            method: Method::GET,
            resend: None,
            chain: None,
            recorder,
            measuring: true,
            feed: None,
            lane: None,
            parts: (HeaderMap::new(), Bytes::new()),
            arrival: None,
        }
    }

    /// The per-request timeout in force for this user's scenario.
    pub(in crate::http) fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Runs `work` under the request timer, as a request is: `None` if `timeout` passes first.
    pub(in crate::http) async fn within_timeout<F: std::future::Future>(
        &mut self,
        timeout: Duration,
        work: F,
    ) -> Option<F::Output> {
        let deadline = self.timer.deadline(timeout);
        self.timer.within(deadline, work).await
    }

    /// Sends on `lane`, a connection shared with other users (or HTTP/2's), instead of a
    /// connection of the user's own.
    pub(crate) fn with_lane(mut self, lane: Option<Rc<Lane>>) -> Ctx {
        self.lane = lane;
        self
    }

    /// Keeps at most `bytes` of each response body (the scenario's `max_body`), unless a request
    /// says otherwise.
    pub(crate) fn with_max_body(mut self, bytes: u64) -> Ctx {
        self.max_body = bytes;
        self
    }

    /// The scenario's cookie mode and the redirects its requests follow.
    pub(crate) fn with_session(mut self, session: SessionOptions) -> Ctx {
        self.jar = Jar::new(session.cookies);
        self.follow_default = session.follow_redirects;
        self
    }

    /// This virtual user's cookie jar: read, set and remove cookies. Cookies are on by default;
    /// see [`Cookies`] for what an iteration keeps (`cookies = "…"` in the attribute).
    ///
    /// ```no_run
    /// # async fn body(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    /// ctx.cookies().set("locale", "fr")?;
    /// let session = ctx.cookies().get("session").map(str::to_owned);
    /// # Ok(()) }
    /// ```
    pub fn cookies(&mut self) -> Cookies<'_> {
        Cookies { jar: &mut self.jar, target: &self.target }
    }

    /// The user's setup is over: what its jar holds is what each iteration starts from.
    pub(crate) fn setup_done(&mut self) {
        self.jar.setup_done();
    }

    /// An iteration is over (warmup or measured): the jar drops what it got, if the scenario's
    /// cookie mode says so. A branch on a bool when the iteration set no cookie.
    #[inline]
    pub(crate) fn iteration_done(&mut self) {
        self.jar.iteration_done();
    }

    /// This virtual user's own value of type `T`, made with `T::default()` on first use and kept
    /// for the user's whole run, from its `setup` to its `teardown`: a session token, a cart id,
    /// a counter. Each type is one slot.
    ///
    /// ```no_run
    /// #[derive(Default)]
    /// struct Session {
    ///     token: String,
    /// }
    ///
    /// async fn log_in(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ///     let token = ctx.post("/login").send().await?.expect_status(200)?.text()?.to_owned();
    ///     ctx.user_data::<Session>().token = token;
    ///     Ok(())
    /// }
    ///
    /// #[loadbench::scenario(concurrency = 10, count = 1_000, setup = log_in)]
    /// async fn account(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ///     let auth = format!("Bearer {}", ctx.user_data::<Session>().token);
    ///     ctx.get("/account").header("authorization", &auth).send().await?.expect_status(200)?;
    ///     Ok(())
    /// }
    /// # fn main() {}
    /// ```
    pub fn user_data<T: Default + 'static>(&mut self) -> &mut T {
        let slot = self.user_data.entry(TypeId::of::<T>()).or_insert_with(|| Box::new(T::default()));
        match slot.downcast_mut::<T>() {
            Some(value) => value,
            None => unreachable!("each slot holds the type of its key"),
        }
    }

    /// This virtual user's number, from 0 to `concurrency - 1`; handy for picking test data. In a
    /// distributed run (`--shard I/N`) users are numbered across the shards: a shard's users
    /// follow those of the shards before it, so no two users of the whole run share a number.
    pub fn user(&self) -> u32 {
        self.user
    }

    /// The base URL requests go to.
    pub fn target(&self) -> &str {
        self.target.url()
    }

    /// Sends the request encoded in `wire` and reads the whole response, within the timeout,
    /// following redirects as the request asks ([`RequestBuilder::follow_redirects`]).
    ///
    /// An idempotent request whose reused connection turns out to have been closed by the server
    /// (the end of the stream or a reset before any byte of the response) is sent once more on
    /// a new connection, within the same deadline, as hyper's pooled client and browsers do: a
    /// server may close an idle keep-alive connection at any moment, and the request that meets
    /// the close has not been seen by it.
    // One future for the whole request, hops and lane included: each level of `async fn` is a
    // state of every request's future, with a cold line or two of a user's memory to touch per
    // request (bench/RESULTS.md § Levels of a request's future). A lane's exchange is awaited here
    // only, so that its future's code is inlined into this one's.
    //
    // An `async` block rather than an `async fn`: an `async fn` keeps each argument twice in its
    // state, as it came and as the body's own binding (a line of a user's memory more per
    // request); the block uses what it captured. `prepared`'s error is boxed for the same reason:
    // it stays in the state for the whole request, and is nearly always `Ok`. A named request's
    // row is recorded here too, rather than by a future around this one, whose poll would move
    // every request's response once more on its way to the body (bench/RESULTS.md § Ctx layout).
    #[allow(clippy::manual_async_fn)]
    pub(in crate::http) fn execute<'a>(
        &'a mut self,
        prepared: std::result::Result<(), Box<Error>>,
        naming: Option<Box<Naming<'a>>>,
    ) -> impl std::future::Future<Output = Result<Response>> + 'a {
        async move {
            let outcome = 'request: {
                if let Err(error) = prepared {
                    break 'request Err(*error);
                }
                let deadline = self.timer.deadline(self.timeout);
                // The last request's chain, if it followed redirects or was cancelled on its way.
                self.chain = None;
                loop {
                    let response = if let Some(lane) = &self.lane {
                        // A handle of its own, so that the exchange may ask the rest of the user's
                        // state for what it needs.
                        let lane = Rc::clone(lane);
                        let sender = OnLane { ctx: self };
                        lane.exchange(sender, deadline).await
                    } else {
                        self.exchange(deadline).await
                    };
                    let response = match response {
                        Ok(response) => response,
                        Err(error) => break 'request Err(error),
                    };
                    if self.chain.is_some() {
                        self.counters.redirects += 1;
                    }
                    if response.sets_cookie() && self.jar.accepts() {
                        // Before a redirect is followed: the next hop may need the cookie.
                        self.jar.store_from(
                            &self.target,
                            sent_path(self.chain.as_deref(), &self.last),
                            response.headers(),
                        );
                    }
                    if self.follow == 0 || !response.status().is_redirection() || !self.next_hop(&response) {
                        break 'request Ok(response);
                    }
                }
            };
            if let Some(naming) = naming {
                naming.finish(&outcome);
            }
            outcome
        }
    }

    /// One exchange of the request encoded in `wire` on the user's own connection (opened if
    /// need be), within `deadline`; an idempotent request meeting a closed keep-alive connection
    /// is sent once more (see `Ctx::execute`).
    // An `async` block, as `execute`: its arguments are then in its state once, not twice.
    #[allow(clippy::manual_async_fn)]
    fn exchange<'a>(
        &'a mut self,
        deadline: tokio::time::Instant,
    ) -> impl std::future::Future<Output = Result<Response>> + 'a {
        async move {
            let Ctx { target, conn, wire, method, timer, counters, policy, tls, recorder, .. } = self;
            if conn.as_mut().is_some_and(|c| !c.idle_ok()) {
                *conn = None;
            }
            // A fresh connection is never retried: its failure is the server's answer.
            let mut reused = conn.is_some();
            loop {
                let open = match conn {
                    Some(open) => open,
                    None => {
                        // Boxed: connecting is rare, and its future would otherwise be part of (and
                        // copied with) every request's future.
                        let tls = tls.as_ref().zip(target.tls().map(|(_, name)| name));
                        match timer.within(deadline, Box::pin(Stream::open(target.addr(), tls))).await {
                            Some(opened) => conn.insert(Http1Connection::new(connected(
                                opened,
                                target.addr(),
                                counters,
                                recorder.as_deref(),
                            )?)),
                            None => return Err(timed_out(self.timeout)),
                        }
                    }
                };
                open.begin(*policy);
                let exchange = std::future::poll_fn(|cx| open.poll_exchange(cx, wire, method));
                match timer.within(deadline, exchange).await {
                    Some(Ok(raw)) => {
                        counters.responses += 1;
                        counters.status.count(raw.status);
                        counters.bytes_received += raw.body_len;
                        return Ok(raw.into_response());
                    }
                    Some(Err(err)) => {
                        let retry = reused && method.is_idempotent() && open.may_retry(&err);
                        *conn = None;
                        if retry {
                            reused = false;
                            counters.retries += 1;
                            continue;
                        }
                        return Err(exchange_failed(err, target.addr(), counters));
                    }
                    None => {
                        // The connection is mid-exchange: its state is unknown, so it cannot be reused.
                        *conn = None;
                        return Err(timed_out(self.timeout));
                    }
                }
            }
        }
    }
}

/// A request on its way to a lane: what [`Lane::exchange`] asks of its user, taken from the
/// user's state when it asks.
struct OnLane<'a> {
    ctx: &'a mut Ctx,
}

impl Sender for OnLane<'_> {
    fn request(&self) -> Outgoing<'_> {
        let Ctx { wire, method, last, parts, policy, chain, .. } = &*self.ctx;
        // HTTP/2 sends the path apart from `wire`: after a redirect, the last one's `Location`.
        let path = sent_path(chain.as_deref(), last);
        Outgoing { wire, method, path, headers: &parts.0, body: &parts.1, policy: *policy }
    }

    fn user(&mut self) -> UserSide<'_> {
        let Ctx { timer, counters, recorder, timeout, .. } = &mut *self.ctx;
        UserSide { timer, counters, recorder: recorder.as_deref(), timeout: *timeout }
    }

    fn timer(&mut self) -> &mut RequestTimer {
        &mut self.ctx.timer
    }

    fn counters(&mut self) -> &mut HttpCounters {
        &mut self.ctx.counters
    }
}

/// The path of the request just sent: the last hop's in a chain of redirects, else the one built.
pub(in crate::http) fn sent_path<'a>(chain: Option<&'a Chain>, last: &'a LastRequest) -> &'a str {
    match chain {
        Some(chain) => &chain.path,
        None => last.joined().unwrap_or("/"),
    }
}

#[cfg(test)]
mod layout {
    use std::mem::offset_of;

    use super::Ctx;

    /// The fields a request touches come first and stay within the first eight cache lines; the
    /// rest (from `recorder`) only a request with cookies, a name or a new connection reads. A
    /// field added above `recorder` that crosses the line fails here: re-measure before moving it
    /// (bench/RESULTS.md § Ctx layout).
    #[test]
    #[cfg(target_pointer_width = "64")]
    fn what_a_request_touches_fits_the_first_eight_cache_lines() {
        assert!(offset_of!(Ctx, recorder) <= 8 * 64, "`recorder` at byte {}", offset_of!(Ctx, recorder));
        // Declaration order is the layout (`repr(C)`): the first-touch fields lead.
        assert!(offset_of!(Ctx, policy) < offset_of!(Ctx, lane));
        assert!(offset_of!(Ctx, lane) < offset_of!(Ctx, wire));
        assert!(offset_of!(Ctx, wire) < offset_of!(Ctx, counters));
    }
}
