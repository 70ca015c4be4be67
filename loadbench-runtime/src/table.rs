//! The human-readable results table. (Placeholder: being written.)

use crate::report::{ConfigReport, RunReport};

/// Renders `report` as a table for the terminal.
pub fn render(report: &RunReport) -> String {
    format!("{report:?}\n")
}

/// One-line description of a scenario's load, e.g. `concurrency 1000, count 100000`.
pub fn describe_config(config: &ConfigReport) -> String {
    format!("{config:?}")
}
