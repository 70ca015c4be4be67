//! Runs that measure nothing: a scenario whose iterations finished without a single HTTP exchange
//! (a body that forgot `.send().await`), or far faster than any network round trip. Such a run's
//! req/s and latency describe the generator's loop, not a server; it is flagged, in the JSON and
//! under the table, and `--fail-on-warning` makes the flag fatal.

use serde::{Deserialize, Serialize};

use super::ScenarioReport;
use super::units::{micros, thousands};

/// A median iteration faster than this, in microseconds, is faster than any network round trip.
///
/// A real HTTP exchange over loopback costs two processes a write, a wake-up and a read each; an
/// iteration that makes no exchange costs only the virtual user's loop. The bound lies more than
/// an order of magnitude from both, so neither a loaded nor a fast machine moves a run across it
/// (bench/RESULTS.md § Too-fast bound).
pub const TOO_FAST_MEDIAN_US: f64 = 5.0;

/// What is wrong with a run that measured nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum WarningKind {
    /// Iterations succeeded, but no response was received, no connection was opened and no
    /// operation measured with `ctx.measure` succeeded.
    NoRequests,
    /// The median successful iteration took less than [`TOO_FAST_MEDIAN_US`].
    TooFast,
}

/// A warning about one scenario's run: `{"kind": "no_requests", "message": "…"}` in the JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Warning {
    /// What is wrong.
    pub kind: WarningKind,
    /// What is wrong and its likely cause, in a sentence.
    pub message: String,
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// The warnings a finished scenario earns. A scenario that did not run, or none of whose
/// iterations succeeded (its failures say enough), earns none; a smoke run is not checked (the
/// caller leaves it out: one iteration measures nothing by design).
///
/// ```
/// use loadbench::report::{ConfigReport, ScenarioReport, warnings};
///
/// let mut s = ScenarioReport::not_started("forgot_send", ConfigReport::default());
/// (s.iterations, s.ok) = (1_000, 1_000);
/// let found = warnings::detect(&s);
/// assert_eq!(found[0].kind, warnings::WarningKind::NoRequests);
/// ```
pub fn detect(s: &ScenarioReport) -> Vec<Warning> {
    if s.setup_error.is_some() || s.ok == 0 {
        return Vec::new();
    }
    // A successful operation measured with `ctx.measure` (another protocol's call) is an
    // exchange the HTTP counters do not see.
    let measured = s.requests.iter().any(|row| row.ok > 0);
    if s.http.responses == 0 && s.http.connections == 0 && !measured {
        let message = format!(
            "{} iterations succeeded without a single HTTP exchange (no response, no connection): did the body \
             forget `.send().await`? Its req/s and latency measure an empty loop, not a server",
            thousands(s.ok)
        );
        return vec![Warning { kind: WarningKind::NoRequests, message }];
    }
    match &s.latency_us {
        Some(latency) if latency.p50 < TOO_FAST_MEDIAN_US => {
            let message = format!(
                "the median iteration took {}, faster than any network round trip ({} at least): most \
                 iterations made no HTTP exchange (a request built but not sent with `.send().await`?)",
                micros(latency.p50),
                micros(TOO_FAST_MEDIAN_US)
            );
            vec![Warning { kind: WarningKind::TooFast, message }]
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{ConfigReport, HttpReport, LatencyReport};

    fn scenario(responses: u64, p50: f64) -> ScenarioReport {
        let mut s = ScenarioReport::not_started("s", ConfigReport::default());
        (s.iterations, s.ok) = (10_000, 10_000);
        s.http = HttpReport { responses, connections: u64::from(responses > 0), ..HttpReport::default() };
        s.latency_us = Some(LatencyReport {
            mean: p50,
            stdev: 0.0,
            min: p50,
            p50,
            p90: p50,
            p95: p50,
            p99: p50,
            p99_9: p50,
            max: p50,
            percentiles: Default::default(),
            spectrum: Vec::new(),
            histogram: None,
        });
        s
    }

    fn kinds(s: &ScenarioReport) -> Vec<WarningKind> {
        detect(s).into_iter().map(|w| w.kind).collect()
    }

    #[test]
    fn a_run_without_exchanges_is_flagged_once() {
        let s = scenario(0, 0.2);
        let found = detect(&s);
        assert_eq!(kinds(&s), [WarningKind::NoRequests], "not also too fast: one cause");
        assert!(found[0].message.contains("did the body forget `.send().await`?"), "{}", found[0]);
        assert!(found[0].message.starts_with("10,000 iterations succeeded without a single HTTP exchange"));
    }

    #[test]
    fn a_run_faster_than_a_round_trip_is_flagged() {
        assert_eq!(kinds(&scenario(10, 0.8)), [WarningKind::TooFast]);
        let message = detect(&scenario(10, 0.8)).remove(0).message;
        assert!(
            message.starts_with("the median iteration took 1µs, faster than any network round trip (5µs at least)"),
            "{message}"
        );
    }

    #[test]
    fn real_exchanges_failures_and_runs_that_did_not_run_are_not_flagged() {
        assert!(kinds(&scenario(10_000, 45.0)).is_empty());
        assert!(kinds(&scenario(10_000, TOO_FAST_MEDIAN_US)).is_empty(), "the bound itself is a round trip");
        let mut failed = scenario(0, 1.0);
        (failed.ok, failed.failed, failed.latency_us) = (0, 10_000, None);
        assert!(kinds(&failed).is_empty(), "failures say enough");
        let mut measured = scenario(0, 450.0);
        measured.requests.push(crate::report::StepReport {
            name: "grpc call".into(),
            iterations: 10_000,
            ok: 10_000,
            failed: 0,
            errors: Default::default(),
            causes: Default::default(),
            latency_us: measured.latency_us.clone(),
        });
        assert!(kinds(&measured).is_empty(), "operations measured with ctx.measure are exchanges");
        let mut not_run = scenario(0, 1.0);
        not_run.setup_error = Some("no".into());
        assert!(kinds(&not_run).is_empty());
    }

    #[test]
    fn json_names_the_kind() {
        let json = serde_json::to_string(&detect(&scenario(0, 0.2))).unwrap_or_default();
        assert!(json.starts_with(r#"[{"kind":"no_requests","message":"#), "{json}");
        let back: Vec<Warning> = serde_json::from_str(&json).unwrap_or_default();
        assert_eq!(back, detect(&scenario(0, 0.2)));
    }
}
