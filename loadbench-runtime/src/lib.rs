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
//!
//! Everything a scenario author writes is at the root: [`scenario`], [`main!`], [`Ctx`] with its
//! [`RequestBuilder`], [`Response`] and [`Cookies`], [`Error`], [`ErrorKind`] and [`Result`],
//! [`MeasuredError`] for what [`Ctx::measure`] counts an operation's error as, [`Record`] for
//! data feeds, [`Harness`] for a `main` of one's own (with [`ClientOptions`],
//! [`TlsOptions`], [`ConnectTo`] and [`FeedSource`]), and for JSON bodies [`json!`] and
//! [`JsonValue`].
//!
//! # Features
//!
//! - `tls`: `https://` targets and the TLS options, on rustls. Off by default: a bench built
//!   without it refuses an `https://` target before any load, naming the feature.
//! - `oneshot`: a request given at run time, under a load (`cargo loadbench url`). Only
//!   `cargo-loadbench` needs it.
//!
//! # What is not in these docs
//!
//! The modules hidden here (`report`, `cli`, `console`, `exit_code`, `feed`, `http`, `load`,
//! `threshold`, `oneshot`, `watch`, `__private`) are the contract between this crate, the code
//! `#[scenario]` generates, the bench binaries and `cargo-loadbench`. `cargo-loadbench` pins this
//! crate's exact version, so they change with it and are not covered by semver. A tool that reads
//! results reads the JSON documents, whose schema is versioned (`schema/`).

#![warn(missing_docs)]
// `println!` and `eprintln!` panic when the stream cannot be written: every line goes through
// `loadbench::console` instead.
#![warn(clippy::print_stdout, clippy::print_stderr)]

// The ground floor: used by every layer above, using none of them.
mod config;
#[doc(hidden)]
pub mod console;
mod error;
#[doc(hidden)]
pub mod exit_code;
#[doc(hidden)]
pub mod feed;

// The layers, each using only those listed before it: see ARCHITECTURE.md.
#[doc(hidden)]
pub mod cli;
mod engine;
mod harness;
#[doc(hidden)]
pub mod http;
#[doc(hidden)]
pub mod report;

pub use error::{Error, ErrorKind, Result};
pub use feed::{FeedSource, Record};
pub use harness::{Harness, HarnessError};
pub use http::{ClientOptions, ConnectTo, Cookies, Ctx, MeasuredError, RequestBuilder, Response, TlsOptions};

#[doc(hidden)]
pub use config::{CookieMode, DEFAULT_MAX_BODY, Protocol, Transport};
#[cfg(feature = "oneshot")]
#[doc(hidden)]
pub use harness::oneshot;
#[doc(hidden)]
pub use harness::watch;

pub use ::http::{Method, StatusCode};

/// Builds a JSON value for [`RequestBuilder::json`]: serde_json's `json!`, re-exported with
/// [`JsonValue`] so that a bench sends and reads JSON bodies without a dependency of its own.
/// Types of the bench's own that derive `Serialize` or `Deserialize` need `serde` with its
/// `derive` feature in its Cargo.toml: the derive names the `serde` crate, which a re-export
/// cannot stand in for.
///
/// ```no_run
/// use loadbench::{JsonValue, json};
///
/// # async fn body(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
/// let item = json!({ "name": "widget", "price": 3 });
/// let created: JsonValue = ctx.post("/items").json(&item).send().await?.expect_status(201)?.json()?;
/// ctx.get(&format!("/items/{}", created["id"])).send().await?.expect_status(200)?;
/// # Ok(()) }
/// ```
// Not the whole crate (`pub use serde_json`): rustc names a type by its last segment only while
// no crate a user depends on exports another item of that name, and serde_json's `Value::String`
// would make every `String` in a bench's compiler errors `std::string::String`. An alias is not
// looked into.
pub use serde_json::json;

/// A JSON value of any shape (serde_json's `Value`), to read a body into with
/// [`Response::json`] when no type of the bench's own describes it.
pub type JsonValue = serde_json::Value;

#[doc(hidden)]
/// How much load a scenario applies, and the words for it, as the attribute and the command lines
/// write them (the grammar is shared, so both accept and refuse the same strings).
pub mod load {
    pub use crate::config::{DEFAULT_GRACE, DEFAULT_TIMEOUT, Load, RateStage, Stage, ThinkTime};
    pub use loadbench_grammar::{DurationError, MAX_DURATION, Rate, RateError, parse_duration};
}

#[doc(hidden)]
/// Thresholds: pass/fail conditions on a scenario's figures, as k6 has them (`p99 < 50ms`).
///
/// A [`threshold::Threshold`] is built in a `const` by `#[scenario(thresholds(…))]` or parsed
/// from the command line by its `FromStr`, with one grammar for both; whether a finished scenario
/// meets its thresholds is decided by [`report::check::evaluate`].
///
/// ```
/// use loadbench::threshold::{Metric, Op, Threshold};
///
/// let t: Threshold = "p99 < 50ms".parse().unwrap();
/// assert_eq!(t, Threshold { metric: Metric::P99, op: Op::Lt, value: 50_000.0 });
/// assert_eq!(t.to_string(), "p99 < 50ms");
/// assert_eq!("p95 < 5ms".parse::<Threshold>().unwrap().metric, Metric::P95);
/// assert!("p100<50ms".parse::<Threshold>().is_err());
/// ```
pub mod threshold {
    pub use loadbench_grammar::{
        Metric, MetricKind, Op, Percentile, PercentileError, RowError, RowThreshold, Threshold, ThresholdError,
    };
}

/// Turns an `async fn(&mut loadbench::Ctx) -> loadbench::Result<()>` into a registered scenario.
///
/// See the attribute table in docs/scenarios.md for every option.
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
