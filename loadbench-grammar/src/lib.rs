//! The grammar of loadbench's load settings, written once.
//!
//! The `#[scenario]` attribute parses its values with these functions at compile time; bench
//! binaries and `cargo loadbench` parse their flags and environment variables with the same
//! functions at run time. A rate, a duration or a threshold (on a scenario, or on one of its named rows) is therefore accepted or refused alike
//! wherever it is written, for the same reason, and every limit (a duration is at least 1 ms and
//! fits in about 584 years of nanoseconds, a rate is at least 1, a fraction lies from 0 to 1) is
//! checked here and nowhere else.
//!
//! It depends on nothing but humantime (and serde, behind a feature, for the runtime's JSON), so
//! the proc macro stays quick to build. Use it through `loadbench`, which re-exports what users
//! need.
//!
//! ```
//! use loadbench_grammar::{Metric, Op, Rate, RowThreshold, Threshold};
//!
//! let rate: Rate = "120/m".parse().unwrap();
//! assert_eq!(rate.per_second(), 2.0);
//! let t: Threshold = "p99 < 50ms".parse().unwrap();
//! assert_eq!(t, Threshold { metric: Metric::P99, op: Op::Lt, value: 50_000.0 });
//! assert!(loadbench_grammar::parse_duration("0s").is_err());
//! let login: RowThreshold = "{login}: max < 1s".parse().unwrap();
//! assert_eq!(login.row, "login");
//! ```

mod duration;
mod number;
mod percentile;
mod rate;
mod row;
mod threshold;

pub use duration::{
    DurationError, MAX_DURATION, MIN_DURATION, RangeError, parse_duration, parse_duration_range, total_duration,
};
pub use percentile::{Percentile, PercentileError};
pub use rate::{Rate, RateError};
pub use row::{RowError, RowThreshold};
pub use threshold::{Metric, MetricKind, Op, Threshold, ThresholdError};

#[doc(hidden)]
pub mod agreement;

/// The virtual users of a closed-model scenario that writes neither `concurrency` nor a ramp.
/// Here, beside the words, because both readers need it: the attribute checks `connections`
/// against the users, and the runtime runs them.
pub const DEFAULT_USERS: u32 = 1;

/// The virtual users available to an open-model scenario (`rate`, `rate_stages`) that writes no
/// `max_concurrency`: enough for a rate of a few thousand per second against a server answering
/// in tens of milliseconds.
pub const DEFAULT_OPEN_USERS: u32 = 100;
