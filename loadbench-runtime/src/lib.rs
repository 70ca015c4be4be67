//! Load tests written as Rust code.
//!
//! Put `#[loadbench::scenario]` on an `async fn` in a bench target with `harness = false`, end the
//! file with `loadbench::main!();`, and run `cargo loadbench`:
//!
//! ```no_run
//! #[loadbench::scenario(concurrency = 100, count = 10_000)]
//! async fn hello(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
//!     ctx.get("/").send().await?.expect_status(200)?;
//!     Ok(())
//! }
//!
//! loadbench::main!();
//! ```
//!
//! `concurrency` virtual users each own one keep-alive HTTP/1.1 connection and run the body in a
//! loop until `count` iterations are done (in total) or `duration` has passed. Latencies go into
//! HDR histograms; failures are counted by [`ErrorKind`]; results are a versioned JSON document
//! ([`report::RunReport`]).

#![warn(missing_docs)]

mod config;
mod connection;
mod ctx;
mod error;
mod executor;
mod harness;
mod http1;
mod last_request;
mod limits;
mod machine;
mod process;
mod progress;
mod registry;
mod request_timer;
mod scale;
mod selfcheck;
mod stats;
mod steps;
mod target;
mod vu;

pub mod exit_code;
pub mod oneshot;
pub mod report;
pub mod table;
pub mod threshold;
pub mod watch;

pub use config::{DEFAULT_TIMEOUT, Load, ParseRateError, Rate, RateStage, Stage, ThinkTime};
pub use ctx::{Ctx, RequestBuilder, Response};
pub use error::{Error, ErrorKind, Result};
pub use harness::{Harness, HarnessError, OUTPUT_ENV, SCALE_ENV, TARGET_ENV, report_usage_error};
pub use target::{Target, TargetError};

pub use http::{Method, StatusCode};

/// Turns an `async fn(&mut loadbench::Ctx) -> loadbench::Result<()>` into a registered scenario.
///
/// See the README's attribute table for every option.
pub use loadbench_macros::scenario;

/// Used by generated code. Not public API and not subject to semver.
#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

/// Defines `main` for a bench target: runs the scenarios selected on the command line.
///
/// ```no_run
/// loadbench::main!();
/// ```
#[macro_export]
macro_rules! main {
    () => {
        fn main() -> ::std::process::ExitCode {
            $crate::Harness::new().run()
        }
    };
}
