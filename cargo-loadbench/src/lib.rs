//! The machine-readable contract of `cargo loadbench`: the JSON document it writes (`--format
//! json`, `--output FILE.json`, `--json FILE`, and every saved baseline), as types to read it
//! with. Like nextest's `nextest-metadata`, it is kept apart from the subcommand's workings so
//! that scripts, dashboards and the end-to-end tests depend on the document, not on the tool.
//!
//! The document is [`Results`]: the runtime's [`RunReport`](loadbench::report::RunReport) with
//! one [`ScenarioResult`] per scenario (and target), which is the bench binary's
//! [`ScenarioReport`](loadbench::report::ScenarioReport) plus what only `cargo loadbench` knows:
//! the bench target and package, the server it ran against side by side, each run of `--runs N`,
//! and the comparison with a baseline or with the first server.
//!
//! ```
//! let json = r#"{"schema_version":1,"tool":{"name":"loadbench","version":"0.1.0"},
//!   "started_at":"2026-01-01T00:00:00Z","machine":{"os":"linux","arch":"x86_64","cpus":2,
//!   "hostname":null,"kernel":null},"scenarios":[]}"#;
//! let results: cargo_loadbench::Results = serde_json::from_str(json).unwrap();
//! assert!(results.scenarios.is_empty());
//! ```

#![warn(missing_docs)]

mod comparison;
mod results;
mod runs;

pub use comparison::{Commit, Commits, ComparedMetric, Comparison, Method, MetricChange, RowComparison, Verdict};
pub use results::{Results, ScenarioResult, ScenarioVerdict, VerdictStatus};
pub use runs::{RowSample, RunSample};
