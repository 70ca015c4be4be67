//! What a finished run earns: its exit code, and under `cargo test --benches` (a smoke run)
//! whether it passed as a test.

use crate::cli::interrupt;
use crate::exit_code;
use crate::report::{RunReport, check};

/// The exit code a finished run earns: 130 if it was interrupted (143 by SIGTERM), 3 if any
/// scenario could not run, 1 if a threshold failed, else 0.
pub(super) fn exit_code(report: &RunReport) -> u8 {
    if let Some(code) = interrupt::exit_code() {
        code
    } else if report.scenarios.iter().any(|s| s.interrupted) {
        exit_code::INTERRUPTED
    } else if report.scenarios.iter().any(|s| s.setup_error.is_some()) {
        exit_code::SCENARIO_FAILED
    } else if report.scenarios.iter().any(check::any_failed) {
        exit_code::GATE_FAILED
    } else {
        exit_code::OK
    }
}

/// A smoke run (without `--bench`, as under `cargo test --benches`) is a test: each scenario must
/// have run and succeeded every iteration, and one bounded by a count must have run exactly that
/// many (one, unless scaled). Returns the line that fails it, if any.
pub(super) fn smoke_failure(report: &RunReport) -> Option<String> {
    let broken: Vec<&str> = report
        .scenarios
        .iter()
        // A shard ran its part of the count (`share`), not the whole scenario's (`config`).
        .filter(|s| {
            let asked = s.share.map_or(s.config.count, |share| share.count);
            s.ok == 0 || s.failed > 0 || asked.is_some_and(|count| s.iterations != count)
        })
        .map(|s| s.name.as_str())
        .collect();
    if broken.is_empty() {
        return None;
    }
    let size = match report.scenarios.iter().find_map(|s| s.config.scale) {
        Some(factor) => format!("at scale {factor}"),
        None => "one iteration each".to_owned(),
    };
    Some(format!("smoke run failed ({size}, without --bench): {}", broken.join(", ")))
}

/// With `--fail-on-warning`: the line that fails a run any of whose scenarios earned a warning
/// (it measured nothing: no HTTP exchange, or iterations faster than a round trip), if any.
pub(super) fn warning_failure(report: &RunReport) -> Option<String> {
    let warned: Vec<&str> =
        report.scenarios.iter().filter(|s| !s.warnings.is_empty()).map(|s| s.name.as_str()).collect();
    (!warned.is_empty())
        .then(|| format!("--fail-on-warning: {} measured nothing (see the warnings)", warned.join(", ")))
}
