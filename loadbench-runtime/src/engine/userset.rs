//! The virtual users of a worker whose users share connections (`connections = N`, HTTP/2), run
//! as one tokio task that polls whichever of them were woken, rather than a task each.
//!
//! Why: on a shared connection a request costs its user one wake and one poll, and through a task
//! of its own these go through the task's state (atomic read-modify-writes), the `LocalSet`'s
//! queue and the task's header. Here a user's wake on its own worker's thread is a flag and a
//! push on a queue of that thread, and the set's task is woken once for all the users a batch of
//! responses answered (bench/RESULTS.md § Request path instruction costs).
//!
//! Only there: a user that owns its connection reads its own socket, and tokio's cooperative
//! budget, which makes a task yield after so much I/O, is a task's; users polled within one task
//! would share one budget and keep running out of it. On a shared connection the connection's
//! driver (a task of its own) does the I/O, and the users wait on it without spending budget.
//!
//! What a user that runs in its own task has, it has here: a panic outside the scenario body
//! (which catches its own, per iteration) ends that user alone; a wake from another thread (a
//! body awaiting `spawn_blocking`, say) reaches the set through a locked queue; every user is
//! polled at most once per poll of the set, in the order they were woken, and the set yields
//! after each round so that the connections' drivers and the I/O driver run in between.

use std::cell::RefCell;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Wake, Waker};

use super::vu::VuFuture;
use crate::http::Ctx;

/// How a user of the set ended: its `Ctx`, for its teardown, or why it has none.
pub(crate) type UserEnd = Result<Box<Ctx>, &'static str>;

/// Why a user has no end: it panicked outside its body, which catches its own panics.
const PANICKED: &str = "a virtual user panicked";

thread_local! {
    /// The sets running on this thread, and the users each has woken since its last poll.
    static LOCAL: RefCell<Vec<Local>> = const { RefCell::new(Vec::new()) };
    /// Its address tells this thread from others (a waker remembers its set's thread so).
    static MARK: u8 = const { 0 };
}

/// This thread's mark: an address no other thread alive has.
fn thread_mark() -> usize {
    MARK.try_with(|mark| std::ptr::from_ref(mark) as usize).unwrap_or(0)
}

/// What a set keeps on its own thread: who is woken, and how to wake the set.
#[derive(Debug)]
struct Local {
    id: usize,
    /// The users woken, in order, each once.
    woken: Vec<u32>,
    /// Whether a user is in `woken`.
    queued: Vec<bool>,
    /// The set's own task: woken when a user is and the set is neither running nor woken already.
    task: Option<Waker>,
    /// The set is being polled: a user woken now is polled in its next round.
    polling: bool,
    /// The set's task has been woken since its last poll.
    notified: bool,
}

impl Local {
    fn wake(&mut self, index: u32) {
        let Some(queued) = self.queued.get_mut(index as usize) else { return };
        if std::mem::replace(queued, true) {
            return;
        }
        self.woken.push(index);
        if !self.polling && !self.notified {
            self.notified = true;
            if let Some(task) = &self.task {
                task.wake_by_ref();
            }
        }
    }
}

/// What a set shares with its users' wakers, which may be used on any thread.
#[derive(Debug)]
struct Shared {
    /// Tells this set's [`Local`] from other sets' on the same thread.
    id: usize,
    /// The set's thread ([`thread_mark`]).
    thread: usize,
    /// Users woken from other threads.
    remote: Mutex<Remote>,
    /// Whether `remote` holds a user: checked without the lock.
    remote_woken: AtomicBool,
}

#[derive(Debug, Default)]
struct Remote {
    woken: Vec<u32>,
    task: Option<Waker>,
}

/// One user's waker.
#[derive(Debug)]
struct UserWaker {
    shared: Arc<Shared>,
    index: u32,
}

impl Wake for UserWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let shared = &self.shared;
        if shared.thread == thread_mark() {
            // `try_with`: a waker dropped as the thread exits finds no registry.
            let found = LOCAL.try_with(|sets| {
                let mut sets = sets.borrow_mut();
                let local = sets.iter_mut().find(|local| local.id == shared.id);
                local.map(|local| local.wake(self.index)).is_some()
            });
            if found == Ok(true) {
                return;
            }
        }
        // Another thread, or a set that has ended (then nobody reads this, and nothing is lost).
        let mut remote = shared.remote.lock().unwrap_or_else(PoisonError::into_inner);
        remote.woken.push(self.index);
        shared.remote_woken.store(true, Ordering::Release);
        let task = remote.task.clone();
        drop(remote);
        if let Some(task) = task {
            task.wake();
        }
    }
}

/// One user of a set: what a poll of it needs, side by side (one cache line, not one per array).
struct User {
    /// `None` once it has ended.
    future: Option<VuFuture>,
    waker: Waker,
    end: Option<UserEnd>,
}

/// A worker's users, polled by one task; its output is each user's end, in the users' order.
pub(crate) struct UserSet {
    users: Vec<User>,
    left: usize,
    shared: Arc<Shared>,
    /// The users of the round being polled (kept for its allocation).
    round: Vec<u32>,
    /// Whether the set's task is registered for wakes from other threads.
    registered: bool,
}

impl UserSet {
    /// The set of `users`, every one of them due for a first poll. Made on the thread that polls
    /// it (it registers there).
    pub(crate) fn new(users: Vec<VuFuture>) -> UserSet {
        static IDS: AtomicUsize = AtomicUsize::new(0);
        let count = users.len();
        let shared = Arc::new(Shared {
            id: IDS.fetch_add(1, Ordering::Relaxed),
            thread: thread_mark(),
            remote: Mutex::new(Remote::default()),
            remote_woken: AtomicBool::new(false),
        });
        let indices = 0..u32::try_from(count).unwrap_or(u32::MAX);
        LOCAL.with(|sets| {
            sets.borrow_mut().push(Local {
                id: shared.id,
                woken: indices.clone().collect(),
                queued: vec![true; count],
                task: None,
                polling: false,
                notified: false,
            });
        });
        let users = users
            .into_iter()
            .zip(indices)
            .map(|(future, index)| User {
                future: Some(future),
                waker: Waker::from(Arc::new(UserWaker { shared: Arc::clone(&shared), index })),
                end: None,
            })
            .collect();
        UserSet { users, left: count, shared, round: Vec::new(), registered: false }
    }

    /// Takes this round's users: those woken on this thread, then those woken from others.
    fn start_round(&mut self, cx: &Context<'_>) {
        let id = self.shared.id;
        let round = &mut self.round;
        LOCAL.with(|sets| {
            let mut sets = sets.borrow_mut();
            let Some(local) = sets.iter_mut().find(|local| local.id == id) else { return };
            local.polling = true;
            local.notified = false;
            if !local.task.as_ref().is_some_and(|task| task.will_wake(cx.waker())) {
                local.task = Some(cx.waker().clone());
            }
            std::mem::swap(round, &mut local.woken);
            // Cleared now: a user woken while it is polled is due again in the next round.
            for &index in round.iter() {
                if let Some(queued) = local.queued.get_mut(index as usize) {
                    *queued = false;
                }
            }
        });
        if !self.registered || self.shared.remote_woken.swap(false, Ordering::Acquire) {
            let mut remote = self.shared.remote.lock().unwrap_or_else(PoisonError::into_inner);
            self.round.append(&mut remote.woken);
            // The set's task does not change: registered once, for wakes from other threads.
            if !self.registered {
                remote.task = Some(cx.waker().clone());
                self.registered = true;
            }
        }
    }

    /// Ends the round; `true` when users were woken during it (the set must be polled again).
    fn end_round(&mut self) -> bool {
        let id = self.shared.id;
        LOCAL.with(|sets| {
            let mut sets = sets.borrow_mut();
            let Some(local) = sets.iter_mut().find(|local| local.id == id) else { return false };
            local.polling = false;
            let again = !local.woken.is_empty();
            local.notified = again;
            again
        })
    }

    fn poll_user(&mut self, index: usize) {
        let Some(user) = self.users.get_mut(index) else { return };
        let Some(future) = user.future.as_mut() else { return };
        let mut cx = Context::from_waker(&user.waker);
        // A panic outside the body (which catches its own) ends this user only, as it would end
        // its task; its state is dropped, never polled again.
        let end = match catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(&mut cx))) {
            Ok(Poll::Pending) => return,
            Ok(Poll::Ready(ctx)) => Ok(ctx),
            Err(_) => Err(PANICKED),
        };
        user.future = None;
        user.end = Some(end);
        self.left -= 1;
    }
}

impl Future for UserSet {
    type Output = Vec<UserEnd>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Vec<UserEnd>> {
        let this = self.get_mut();
        this.start_round(cx);
        let round = std::mem::take(&mut this.round);
        for &index in &round {
            this.poll_user(index as usize);
        }
        this.round = round;
        this.round.clear();
        let again = this.end_round();
        if this.left == 0 {
            let ends =
                this.users.iter_mut().map(|user| user.end.take().unwrap_or(Err("a virtual user was lost"))).collect();
            return Poll::Ready(ends);
        }
        if again {
            // Yield rather than loop: the drivers and the I/O driver run before the next round.
            cx.waker().wake_by_ref();
        }
        Poll::Pending
    }
}

impl Drop for UserSet {
    fn drop(&mut self) {
        // The users' futures first: dropping one may wake others, which must find the set.
        for user in &mut self.users {
            user.future = None;
        }
        let id = self.shared.id;
        // `try_with`: a set dropped while the thread exits finds its registry gone already.
        let _ = LOCAL.try_with(|sets| sets.borrow_mut().retain(|local| local.id != id));
        // Wakers left in lanes or timers keep `shared` a while; not the set's task with it.
        self.shared.remote.lock().unwrap_or_else(PoisonError::into_inner).task = None;
    }
}

/// A worker's users, running: a task each, or one set.
pub(crate) enum Running {
    Tasks(Vec<tokio::task::JoinHandle<Box<Ctx>>>),
    /// The set, and how many users it has.
    Set(tokio::task::JoinHandle<Vec<UserEnd>>, usize),
}

impl Running {
    /// Starts `users` on this thread's `LocalSet`: as one [`UserSet`] when they share
    /// connections (`shared`), otherwise a task each.
    pub(crate) fn spawn(users: Vec<VuFuture>, shared: bool) -> Running {
        if shared {
            let count = users.len();
            return Running::Set(tokio::task::spawn_local(UserSet::new(users)), count);
        }
        Running::Tasks(users.into_iter().map(tokio::task::spawn_local).collect())
    }

    /// Each user's end, in the users' order, once all have ended.
    pub(crate) async fn join(self) -> Vec<UserEnd> {
        match self {
            Running::Tasks(tasks) => {
                let why = |err: tokio::task::JoinError| {
                    if err.is_panic() { PANICKED } else { "a virtual user was cancelled" }
                };
                let mut ends = Vec::with_capacity(tasks.len());
                for task in tasks {
                    ends.push(task.await.map_err(why));
                }
                ends
            }
            // The set's own code failed: every user it had is lost with it.
            Running::Set(set, count) => set.await.unwrap_or_else(|_| (0..count).map(|_| Err(PANICKED)).collect()),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use std::cell::Cell;
    use std::rc::Rc;
    use std::time::Duration;

    use super::*;
    use crate::http::Target;

    /// What a poll of a user needs stays in one cache line (the comment on [`User`]).
    #[test]
    fn a_user_fits_one_cache_line() {
        assert!(std::mem::size_of::<User>() <= 64, "{} bytes", std::mem::size_of::<User>());
    }

    fn ctx(user: u32) -> Box<Ctx> {
        let target = Rc::new(Target::resolve("http://127.0.0.1:1/").unwrap());
        Box::new(Ctx::new(target, Duration::from_secs(1), user, None))
    }

    /// Runs `users` as a set on a `LocalSet`, as the executor does; each user's number, or why
    /// it has none.
    fn run(users: Vec<VuFuture>) -> Vec<Result<u32, &'static str>> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let local = tokio::task::LocalSet::new();
        local.block_on(&runtime, async {
            // A wake the set loses would leave the test waiting: bounded, it fails instead.
            let ends = tokio::time::timeout(Duration::from_secs(10), Running::spawn(users, true).join()).await;
            ends.expect("every user ended").into_iter().map(|end| end.map(|ctx| ctx.user())).collect()
        })
    }

    #[test]
    fn every_user_ends_with_its_own_ctx_in_order_whoever_wakes_it() {
        let polls = Rc::new(Cell::new(0u32));
        let mut users: Vec<VuFuture> = Vec::new();
        // Woken by a timer, by another thread, by itself, and by another user of the set.
        users.push(Box::pin(async {
            tokio::time::sleep(Duration::from_millis(20)).await;
            ctx(0)
        }));
        users.push(Box::pin(async {
            tokio::task::spawn_blocking(|| std::thread::sleep(Duration::from_millis(20))).await.unwrap();
            ctx(1)
        }));
        let counted = Rc::clone(&polls);
        users.push(Box::pin(async move {
            for _ in 0..100 {
                counted.set(counted.get() + 1);
                tokio::task::yield_now().await;
            }
            ctx(2)
        }));
        let notify = Rc::new(tokio::sync::Notify::new());
        let waiter = Rc::clone(&notify);
        users.push(Box::pin(async move {
            waiter.notified().await;
            ctx(3)
        }));
        users.push(Box::pin(async move {
            tokio::time::sleep(Duration::from_millis(10)).await;
            notify.notify_one();
            ctx(4)
        }));
        assert_eq!(run(users), vec![Ok(0), Ok(1), Ok(2), Ok(3), Ok(4)]);
        assert_eq!(polls.get(), 100);
    }

    #[test]
    fn a_user_that_panics_ends_alone() {
        let users: Vec<VuFuture> = vec![
            Box::pin(async {
                tokio::task::yield_now().await;
                panic!("outside the body");
            }),
            Box::pin(async {
                tokio::time::sleep(Duration::from_millis(10)).await;
                ctx(1)
            }),
        ];
        assert_eq!(run(users), vec![Err(PANICKED), Ok(1)]);
    }

    #[test]
    fn a_user_that_always_yields_lets_the_others_and_the_runtime_run() {
        // One user yields forever until another, which needs the timer, has ended: the set polls
        // each user once a round and gives the runtime a turn between rounds. A set that never
        // gave it a turn would spin in one poll, out of reach of `run`'s timeout: the run is on a
        // thread of its own, watched from here.
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(run(yielding_users()));
        });
        let ends = rx.recv_timeout(Duration::from_secs(10)).expect("the set gave the runtime a turn");
        assert_eq!(ends, vec![Ok(0), Ok(1)]);
    }

    /// The users of the test above: built on the thread that runs them, as they are not `Send`.
    fn yielding_users() -> Vec<VuFuture> {
        let done = Rc::new(Cell::new(false));
        let seen = Rc::clone(&done);
        let users: Vec<VuFuture> = vec![
            Box::pin(async move {
                while !seen.get() {
                    tokio::task::yield_now().await;
                }
                ctx(0)
            }),
            Box::pin(async move {
                tokio::time::sleep(Duration::from_millis(20)).await;
                done.set(true);
                ctx(1)
            }),
        ];
        users
    }
}
