//! What the pipelined and HTTP/2 drivers' tables have in common: the slots of their requests,
//! reused through a free list, and the waker of the connection's driver.
//!
//! Generic over the slot's type, so that each protocol's table is compiled for its own slots:
//! no dynamic dispatch and no allocation per request once the table has grown to the lane's
//! users.

use std::cell::RefCell;
use std::future::Future;
use std::ops::{Index, IndexMut};
use std::rc::Rc;
use std::task::{Context, Waker};

use super::{Answer, Failure, Reply, Slots};

/// One request's slot in a table: its [`Answer`], and how it is marked free.
pub(crate) trait Slot {
    /// The slot's side of its exchange.
    fn answer(&mut self) -> &mut Answer;

    /// Marks the slot free, its answer taken (it is on the free list from then on).
    fn set_free(&mut self);
}

/// The slots of a connection's requests, indexed by the number their `Exchange` holds.
#[derive(Debug)]
pub(crate) struct SlotTable<S> {
    slots: Vec<S>,
    free: Vec<usize>,
}

impl<S> SlotTable<S> {
    pub(crate) const fn new() -> SlotTable<S> {
        SlotTable { slots: Vec::new(), free: Vec::new() }
    }

    /// A free slot's index, to be filled in place (its `Answer` keeps the waker of the user
    /// that left it, most often the very user that takes it again); `None` when none is free.
    #[inline]
    pub(crate) fn reuse(&mut self) -> Option<usize> {
        self.free.pop()
    }

    /// Adds `slot` to the table, taken: the table grows to the most requests in flight at once.
    pub(crate) fn grow(&mut self, slot: S) -> usize {
        self.slots.push(slot);
        self.slots.len() - 1
    }

    /// Puts slot `index` on the free list; the caller has marked it free.
    #[inline]
    pub(crate) fn release(&mut self, index: usize) {
        self.free.push(index);
    }
}

impl<S: Slot> SlotTable<S> {
    /// The result of slot `index`, if it is in (the slot is then free); otherwise `waker` is
    /// kept, to be woken with it.
    #[inline]
    pub(crate) fn take(&mut self, index: usize, waker: &Waker) -> Option<Result<Reply, Failure>> {
        let slot = &mut self.slots[index];
        let taken = slot.answer().take(waker)?;
        slot.set_free();
        self.free.push(index);
        Some(taken)
    }
}

impl<S> Index<usize> for SlotTable<S> {
    type Output = S;

    #[inline]
    fn index(&self, index: usize) -> &S {
        &self.slots[index]
    }
}

impl<S> IndexMut<usize> for SlotTable<S> {
    #[inline]
    fn index_mut(&mut self, index: usize) -> &mut S {
        &mut self.slots[index]
    }
}

/// The waker of a connection's driver task, woken once between two of its polls: more wakes
/// would be wasted.
#[derive(Debug, Default)]
pub(crate) struct DriverWaker {
    waker: Option<Waker>,
    woken: bool,
}

impl DriverWaker {
    /// Wakes the driver, unless it was woken since its last poll.
    #[inline]
    pub(crate) fn wake(&mut self) {
        if !self.woken {
            self.woken = true;
            if let Some(driver) = &self.waker {
                driver.wake_by_ref();
            }
        }
    }

    /// Called at the start of the driver's poll: it is awake, and `cx`'s waker is kept (cloned
    /// only when it changed).
    #[inline]
    pub(crate) fn polled(&mut self, cx: &Context<'_>) {
        self.woken = false;
        if !self.waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
            self.waker = Some(cx.waker().clone());
        }
    }
}

/// One connection driven by a task of its own: the table its users and its driver share. The
/// driver is started with it and ends once the table is closed, which dropping this does (the
/// lane is gone, or it opened another connection).
#[derive(Debug)]
pub(crate) struct Driven<T: Slots> {
    pub(crate) table: Rc<RefCell<T>>,
}

impl<T: Slots> Driven<T> {
    /// Starts `driver` on `table`. Must run inside a `LocalSet` (every worker does): the
    /// connection's driver is a local task.
    pub(crate) fn spawn<D>(table: T, driver: impl FnOnce(Rc<RefCell<T>>) -> D) -> Driven<T>
    where
        D: Future<Output = ()> + 'static,
    {
        let table = Rc::new(RefCell::new(table));
        tokio::task::spawn_local(driver(Rc::clone(&table)));
        Driven { table }
    }

    /// Whether the connection takes new requests.
    pub(crate) fn is_open(&self) -> bool {
        self.table.borrow().is_open()
    }
}

impl<T: Slots> Drop for Driven<T> {
    fn drop(&mut self) {
        self.table.borrow_mut().close();
    }
}
