//! [`ScenarioReport::from_run`]: a scenario's report from what its run measured. Here rather than
//! in `report/`, which the engine fills and which therefore reads nothing of the engine.

use std::net::SocketAddr;

use loadbench_grammar::Percentile;

use crate::config::Load;
use crate::engine::registry::Workload;
use crate::engine::{Executed, LoadPlan, Sizing};
use crate::report::{FeedRanOut, NothingListening, RateReport, ScenarioReport, rfc3339, warnings};

/// How a run's figures are read into its report.
pub(super) struct Measured<'a> {
    /// The plan the run followed (after the command line's overrides and the shard's part).
    pub(super) plan: &'a LoadPlan,
    pub(super) workload: &'a Workload,
    /// The latency percentiles to report beyond the fixed ones.
    pub(super) percentiles: &'a [Percentile],
    /// Whether each latency carries its HdrHistogram.
    pub(super) histograms: bool,
    /// Whether the target is `https://` (the report then has TLS figures).
    pub(super) https: bool,
    pub(super) sizing: Sizing,
    /// The target's address, named when nothing listened there.
    pub(super) address: SocketAddr,
}

impl ScenarioReport {
    /// `started` (the scenario's name, its config and what was settled before the load) with
    /// what `run` measured: counts, latencies, rates, and the warnings they call for.
    pub(super) fn from_run(started: ScenarioReport, run: Executed, how: &Measured<'_>) -> ScenarioReport {
        let mut report = started;
        let Measured { plan, workload, percentiles, histograms, https, sizing, address } = *how;
        let stats = run.stats;
        report.started_at = rfc3339(run.started);
        report.started_unix_ms =
            run.started.duration_since(std::time::UNIX_EPOCH).ok().and_then(|t| u64::try_from(t.as_millis()).ok());
        report.duration_us = u64::try_from(run.wall.as_micros()).unwrap_or(u64::MAX);
        report.interrupted = run.interrupted;
        report.generator = Some(run.generator);
        report.remote_write = run.remote_write;
        report.failed = stats.errors.total();
        report.ok = stats.ok;
        report.cancelled = stats.cancelled;
        report.iterations = stats.ok + report.failed + stats.cancelled;
        report.errors = stats.errors;
        report.causes = stats.causes_report();
        report.latency_us = stats.latency_report(percentiles, histograms);
        report.http = stats.http.clone();
        let per_second = |n: u64| if run.wall.is_zero() { 0.0 } else { n as f64 / run.wall.as_secs_f64() };
        // req/s is what the server delivered: a server failing fast must not look fast.
        report.rps = per_second(report.ok);
        report.attempts_per_sec = per_second(report.ok + report.failed);
        report.dropped = stats.dropped;
        report.warmup_iterations = run.warmup_iterations;
        report.timeline = stats.timeline_report(histograms);
        report.steps = stats.steps_report(percentiles, histograms);
        report.requests = stats.requests_report(percentiles, histograms);
        report.checks = stats.checks.clone();
        report.user_setup = workload.setup.map(|_| stats.setup.clone());
        report.user_teardown = workload.teardown.map(|_| stats.teardown.clone());
        report.connect_us = stats.connections.connect_report(histograms);
        report.tls_handshake_us = stats.connections.handshake_report(histograms);
        report.tls = https.then(|| stats.connections.tls.clone());
        report.quic = plan.transport.protocol.is_http3().then(|| stats.connections.quic_report(histograms));
        report.rate = plan.requested_rate().zip(run.schedule).map(|(requested, schedule)| RateReport {
            requested,
            achieved: if schedule.is_zero() { 0.0 } else { report.iterations as f64 / schedule.as_secs_f64() },
        });
        // One smoke iteration measures nothing by design.
        if !matches!(sizing, Sizing::Smoke) {
            report.warnings = warnings::detect(&report);
        }
        if let Some(refused) = run.refused {
            report.nothing_listening = Some(NothingListening { address: address.to_string(), refused });
            // A count not reached: every iteration asked for is run, dropped or not started. A
            // run bounded by time asked for none in particular: it ended early, which its
            // duration shows.
            if let Load::Count(asked) = plan.load {
                report.not_started = asked.saturating_sub(report.iterations + report.dropped);
            }
        }
        if let Some(feed) = workload.feed.as_deref().filter(|feed| feed.ran_out()) {
            let asked = match plan.load {
                Load::Count(n) => n,
                Load::Duration(_) => 0,
            };
            report.feed_ran_out = Some(FeedRanOut {
                records: feed.len(),
                not_started: asked.saturating_sub(report.iterations + report.dropped),
            });
        }
        report
    }
}
