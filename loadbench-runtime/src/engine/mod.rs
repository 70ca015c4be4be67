//! Running a load: the registry of scenarios, the load plan, and the executor that runs a plan on
//! worker threads (per-worker state in `worker`, the open model's schedule in `arrivals`, the
//! warmup, the start gate, how a run stops in `halt`), with the virtual users' loop, the
//! measurements (the connections' own in `connections`), the generator's self-check and progress,
//! live metrics pushed to Prometheus (`remote_write`, with the `remote-write` feature), and giving up on a target where nothing listens (`refused`).
//!
//! Uses `http` (each user's `Ctx`), `config`, the report's schema types and `cli`'s scenario
//! filter and shard (how a distributed run's load is split); the harness above
//! drives it, and nothing below it depends on it.

mod arrivals;
mod causes;
mod connections;
mod executor;
mod halt;
mod histogram;
mod panics;
mod plan;
mod progress;
mod ramp;
mod refused;
pub(crate) mod registry;
#[cfg(feature = "remote-write")]
mod remote_write;
mod selfcheck;
mod start_gate;
mod stats;
mod timeline;
mod userset;
pub(crate) mod vu;
mod warmup;
mod worker;

pub(crate) use executor::{Executed, Placement, execute};
pub(crate) use halt::StopFlags;
pub(crate) use plan::{LoadPlan, Sizing, parse_scale};
pub(crate) use progress::{Board, BoardPlace, Position};
#[cfg(feature = "remote-write")]
pub(crate) use remote_write::LivePush;
pub(crate) use worker::worker_threads;
