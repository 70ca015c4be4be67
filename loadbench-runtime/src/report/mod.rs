//! The results of a run: the versioned JSON document (`document` and the `scenario` entries in
//! it: the contract between a bench binary, `cargo loadbench` and any tool that reads the files),
//! and what reads it: the results table (its named requests' rows and checks' lines in `named`),
//! the threshold check, what limited a saturated generator (`saturation`), the warnings about
//! runs that measured nothing (`warnings`), the number formats they share (`units`), and
//! safe writing of result files (`json`: atomic over a file, through a FIFO or a device).
//!
//! Uses only the ground floor and the shared grammar: the engine and the harness fill the
//! document, and nothing here depends on them.

pub mod cause_lines;
mod causes;
pub mod check;
mod columns;
mod connections;
mod document;
mod error_counts;
mod feed;
pub mod histogram;
mod http;
pub mod inconclusive;
mod json;
mod latency;
pub mod named;
mod notes;
mod outcome;
mod quic;
mod refused;
mod remote_write;
mod saturation;
mod scenario;
pub mod table;
mod tls;
pub mod units;
pub mod warnings;
mod watch;

pub use causes::{Causes, ErrorCause, LISTED_CAUSES};
pub use columns::LatencyColumns;
pub use connections::{HINT_WIDTH, hints};
pub use document::{
    GateReport, MachineInfo, OLDEST_READABLE_VERSION, RunReport, SCHEMA_VERSION, ScenarioInfo, ScenarioList,
    ShardReport, StartReport, ToolInfo,
};
pub use error_counts::ErrorCounts;
pub use feed::{FeedConfigReport, FeedRanOut};
pub use http::{HttpReport, HttpVersion};
pub use json::{check_writable, same_file, write_atomic, write_json_atomic};
pub use latency::{LatencyReport, SpectrumPoint};
pub use outcome::ThresholdOutcome;
pub use quic::QuicReport;
pub use refused::NothingListening;
pub use remote_write::RemoteWriteReport;
pub use saturation::GeneratorLimit;
pub(crate) use saturation::SATURATED_LAG;
pub use scenario::{
    CheckReport, ConfigReport, GeneratorReport, HookReport, RateReport, ScenarioReport, ShareReport, StepReport,
    TimelineSecond, rfc3339,
};
pub use tls::{TlsConfigReport, TlsReport};
pub use warnings::{Warning, WarningKind};
pub use watch::{WatchReport, WatchSample};
