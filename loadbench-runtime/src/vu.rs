//! A virtual user: the loop that runs a scenario body over and over on one connection.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::time::Instant;

use crate::ctx::Ctx;
use crate::error::Result;
use crate::executor::WorkerShared;

/// One virtual user, handed by the executor to the code `#[scenario]` generates.
#[derive(Debug)]
pub struct VirtualUser {
    pub(crate) ctx: Ctx,
    pub(crate) worker: Rc<RefCell<WorkerShared>>,
}

/// A virtual user's whole run, boxed once per user (never per iteration).
pub type VuFuture = Pin<Box<dyn Future<Output = ()>>>;

/// Runs `body` in `user`'s loop until the scenario's work is done.
///
/// Generic over the body so the per-iteration call is static; only the user's loop as a whole
/// is boxed. The future is `!Send`: each worker thread runs its users on its own
/// current-thread runtime, so nothing here needs to cross threads or take a lock.
pub fn vu_future<F>(user: VirtualUser, body: F) -> VuFuture
where
    F: AsyncFn(&mut Ctx) -> Result<()> + 'static,
{
    Box::pin(run(user, body))
}

async fn run<F>(user: VirtualUser, body: F)
where
    F: AsyncFn(&mut Ctx) -> Result<()>,
{
    let VirtualUser { mut ctx, worker } = user;
    loop {
        if !worker.borrow_mut().next_iteration() {
            break;
        }
        let start = Instant::now();
        let outcome = body(&mut ctx).await;
        let end = Instant::now();
        worker.borrow_mut().record(outcome, start, end);
    }
    worker.borrow_mut().absorb(&ctx.counters);
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn body(ctx: &mut Ctx) -> Result<()> {
        let _ = ctx.user();
        Ok(())
    }

    #[test]
    fn an_async_fn_taking_ctx_is_a_scenario_body() {
        // What `#[scenario]` generates must coerce to the registry's function pointer type.
        let run: fn(VirtualUser) -> VuFuture = |user| vu_future(user, body);
        let _ = run;
    }
}
