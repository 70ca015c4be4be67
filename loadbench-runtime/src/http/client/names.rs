//! Named requests (`.name("GET /items/{id}")`): requests to different URLs grouped into one row
//! under their scenario, with a count, failures by kind and the latency of the successful ones,
//! like a step's.
//!
//! What fails a named request in its row: [`RequestBuilder::send`] returning an error (counted
//! under its kind), or a response with a status of 400 or more (counted as `status`, as k6's
//! `http_req_failed` counts it). The row only observes: a 404 is a failure in the row but the
//! iteration goes on as before, failing only if the body says so (`expect_status`, `?`).
//!
//! An unnamed request pays one branch on an `Option` for this, and its future grows by one
//! pointer: the name's state is boxed, made only for a named request of a measured iteration, and
//! recorded by the request's own future (`Ctx::execute`).

use std::rc::Rc;
use std::time::Instant;

use crate::error::{Error, ErrorKind, Result};
use crate::http::{Ctx, Recorder, RequestBuilder, Response};

impl<'a> RequestBuilder<'a> {
    /// Names this request: every request under the same name, whatever its URL, is one row under
    /// the scenario (k6's `name` tag, Locust's and Goose's `name`), in the table, the JSON
    /// (`requests`) and `cargo loadbench`'s outputs.
    ///
    /// The row counts the requests sent in measured iterations (not warmup), the failed ones by
    /// kind, and the latency of the successful ones, from `send` to the complete response. A
    /// request fails in its row when `send` returns an error, or when its response's status is
    /// 400 or more (`status`); the row does not fail the iteration, which fails only as it
    /// always does (`expect_status`, `?`). A named request inside a step is in both rows.
    ///
    /// ```no_run
    /// #[loadbench::scenario(concurrency = 10, count = 1_000)]
    /// async fn items(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ///     let id = ctx.user() % 100;
    ///     ctx.get(&format!("/items/{id}")).name("GET /items/{id}").send().await?.expect_status(200)?;
    ///     Ok(())
    /// }
    /// # fn main() {}
    /// ```
    pub fn name(mut self, name: &'a str) -> Self {
        self.name = Some(name);
        self
    }
}

/// A named request in flight: its name, where its row is recorded, and when it was sent.
#[derive(Debug)]
pub(in crate::http) struct Naming<'a> {
    name: &'a str,
    recorder: Rc<dyn Recorder>,
    start: Instant,
}

impl<'a> Naming<'a> {
    /// The state of a request named `name` sent now; `None` when it has no name, its iteration
    /// is not measured (warmup), or nothing records (a one-shot request).
    pub(in crate::http) fn start(name: Option<&'a str>, ctx: &Ctx) -> Option<Box<Naming<'a>>> {
        let name = name?;
        if !ctx.measuring {
            return None;
        }
        let recorder = Rc::clone(ctx.recorder.as_ref()?);
        Some(Box::new(Naming { name, recorder, start: Instant::now() }))
    }

    /// Records the request's outcome in its row; a status of 400 or more is a failure there,
    /// said as the one-shot run says it.
    #[inline(never)]
    pub(in crate::http) fn finish(&self, outcome: &Result<Response>) {
        let elapsed = self.start.elapsed();
        match outcome {
            Ok(response) if response.status().as_u16() >= 400 => {
                let status = response.status();
                let error = Error::new(ErrorKind::Status, format!("expected a status below 400, got {status}"));
                self.recorder.record_request(self.name, Some(&error), elapsed);
            }
            Ok(_) => self.recorder.record_request(self.name, None, elapsed),
            Err(err) => self.recorder.record_request(self.name, Some(err), elapsed),
        }
    }
}
