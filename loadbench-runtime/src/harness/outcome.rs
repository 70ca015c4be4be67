//! What a finished run earns: its exit code, and under `cargo test --benches` (a smoke run)
//! whether it passed as a test.

use crate::cli::interrupt;
use crate::exit_code;
use crate::report::{RunReport, check};

/// What a run may be and still exit 0: `--allow-inconclusive`, `--allow-failures`.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Allow {
    /// Figures that are the generator's rather than the server's.
    pub(super) inconclusive: bool,
    /// A scenario none of whose iterations succeeded.
    pub(super) failures: bool,
}

/// The exit code a finished run earns: 130 if it was interrupted (143 by SIGTERM, 129 by SIGHUP), 3 if any
/// scenario could not run, 1 if a threshold failed or a scenario measured nothing (unless
/// allowed), 4 if it was inconclusive (unless allowed), else 0.
pub(super) fn exit_code(report: &RunReport, allow: Allow) -> u8 {
    if let Some(code) = interrupt::exit_code() {
        code
    } else if report.scenarios.iter().any(|s| s.interrupted) {
        exit_code::INTERRUPTED
    } else if report.scenarios.iter().any(|s| s.setup_error.is_some()) {
        exit_code::SCENARIO_FAILED
    } else if report.scenarios.iter().any(check::any_failed)
        || (!allow.failures && report.scenarios.iter().any(check::measured_nothing))
    {
        exit_code::GATE_FAILED
    } else if !allow.inconclusive && report.scenarios.iter().any(|s| !s.inconclusive.is_empty()) {
        exit_code::INCONCLUSIVE
    } else {
        exit_code::OK
    }
}

/// The `error:` (or, when allowed, `note:`) lines that close a run that measured nothing or was
/// inconclusive: one per scenario that measured nothing, one naming the inconclusive ones.
pub(super) fn verdict_lines(report: &RunReport, allow: Allow) -> Vec<String> {
    let failures = allow.failures.then_some("--allow-failures");
    let mut lines: Vec<String> = report
        .scenarios
        .iter()
        .filter(|s| check::measured_nothing(s))
        .map(|s| check::measured_nothing_verdict(&s.name, s, failures))
        .collect();
    let inconclusive: Vec<&str> =
        report.scenarios.iter().filter(|s| !s.inconclusive.is_empty()).map(|s| s.name.as_str()).collect();
    if !inconclusive.is_empty() {
        lines.push(check::inconclusive_verdict(&inconclusive, allow.inconclusive.then_some("--allow-inconclusive")));
    }
    lines
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
