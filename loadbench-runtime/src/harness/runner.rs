//! Runs one workload under its load plan and turns what the executor measured into a
//! [`ScenarioReport`]: the one path from a load to a report, for registered scenarios and one-shot
//! runs alike.

use std::sync::Arc;
use std::time::Duration;

use super::limits;
use crate::cli::Shard;
use crate::config::{Load, ScenarioConfig};
use crate::engine::registry::Workload;
use crate::engine::{self, Board, BoardPlace, LoadPlan, Placement, Position, Sizing, StopFlags};
use crate::feed::Feed;
use crate::http::{ClientOptions, Target, TlsClient, TlsSetupError};
use crate::report::{FeedConfigReport, FeedRanOut, NothingListening, RateReport, ScenarioReport, rfc3339, warnings};
use loadbench_grammar::Percentile;

/// `config.feed`: the feed as loaded.
fn feed_config(feed: &Feed) -> FeedConfigReport {
    let source = feed.source();
    FeedConfigReport { path: source.shown.clone(), mode: source.mode, end: source.end, records: feed.len() }
}

/// How a run's connections are made: the options, and the TLS client made from them once (it
/// holds the parsed trust store) when a target is `https://` or a TLS option was given.
#[derive(Debug, Clone, Default)]
pub(crate) struct Connections {
    options: ClientOptions,
    tls: Option<Arc<TlsClient>>,
}

impl Connections {
    /// Reads the TLS files and the trust store if `urls` need them; a bad file is a usage error,
    /// found before any load.
    pub(crate) fn new<'a>(
        options: ClientOptions,
        mut urls: impl Iterator<Item = &'a str>,
    ) -> Result<Connections, TlsSetupError> {
        let https = urls.any(|url| url.get(..8).is_some_and(|scheme| scheme.eq_ignore_ascii_case("https://")));
        let tls = if https || !options.tls.is_default() { Some(Arc::new(TlsClient::new(&options.tls)?)) } else { None };
        Ok(Connections { options, tls })
    }
}

/// What running one scenario needs from the harness; `Sync`, so that the scenarios of a group
/// can run on threads of their own at the same time.
#[derive(Debug, Clone)]
pub(crate) struct RunSettings {
    /// How runs are sized against what their scenarios declare.
    pub(crate) sizing: Sizing,
    /// Where live progress goes (`None`: hidden, `--quiet`); a group's scenarios share it.
    pub(crate) board: Option<Board>,
    pub(crate) worker_threads: Option<usize>,
    /// The open-file limit in force, which bounds the users a run can have.
    pub(crate) file_limit: Option<u64>,
    /// The URL of a server started in this process (`Harness::default_target`), whose sockets
    /// count against the same limit.
    pub(crate) server_here: Option<String>,
    /// What stops the runs: the first signal's flag and the second's.
    pub(crate) stop: StopFlags,
    /// `--grace`: replaces every scenario's own grace period.
    pub(crate) grace: Option<Duration>,
    /// TLS and `--connect-to`.
    pub(crate) connections: Connections,
    /// Latency percentiles to measure beyond [`crate::report::LatencyReport::FIXED`]: the table's columns
    /// (`--percentiles`) and those `cargo loadbench` asks for (`LOADBENCH_PERCENTILES`); a
    /// scenario's own thresholds add theirs.
    pub(crate) percentiles: Vec<Percentile>,
    /// `--shard I/N`: run this part of every scenario's load (`None`: all of it).
    pub(crate) shard: Option<Shard>,
    /// Whether every latency of the reports carries its HdrHistogram (`--histograms`, and always
    /// with a shard, whose results a merge adds up).
    pub(crate) histograms: bool,
}

impl RunSettings {
    /// Runs `workload` with the load of `config`, sized by these settings, against `url`, and
    /// reports it; its progress line says it is scenario `position` of the run. A run that cannot
    /// start comes back with [`ScenarioReport::setup_error`] set.
    pub(crate) fn run(
        &self,
        workload: &Workload,
        config: &ScenarioConfig,
        url: &str,
        position: Position,
    ) -> ScenarioReport {
        let mut plan = LoadPlan::new(config, self.sizing);
        if let Some(grace) = self.grace {
            plan.grace = grace;
        }
        if let Some(hops) = self.connections.options.follow_redirects {
            plan.session.follow_redirects = hops;
        }
        let transport = self.connections.options.transport(plan.transport);
        let plan = plan.with_transport(transport);
        // `config` is the whole scenario's load; a shard's part of it is its `share`.
        let mut report = ScenarioReport::not_started(&*workload.name, plan.config_report(config, Some(url)));
        report.config.feed = workload.feed.as_deref().map(feed_config);
        let plan = match self.shard {
            Some(shard) => {
                // Refused before any load by the harness and `cargo loadbench url`; here too, in
                // case a caller did not check, rather than run a shard with no user.
                if let Some(refusal) = shard.too_few_users(&workload.name, plan.concurrency) {
                    report.setup_error = Some(refusal);
                    return report;
                }
                let part = plan.shard(shard);
                report.share = Some(part.share_report());
                part
            }
            None => plan,
        };
        let connections = &self.connections;
        let target = match Target::resolve_with(url, &connections.options.connect_to, connections.tls.as_ref()) {
            Ok(target) => target.with_max_header_list_size(connections.options.max_header_list_size),
            Err(err) => {
                report.setup_error = Some(err.to_string());
                return report;
            }
        };
        // Shared connections are spread over the worker threads, at least one on each.
        let sockets = plan.transport.connections.unwrap_or(plan.concurrency);
        let threads = match self.worker_threads {
            Some(n) => n.min(sockets.max(1) as usize),
            None => engine::worker_threads(sockets, target.addr().ip().is_loopback()),
        };
        let server_here = self.server_here.as_deref() == Some(url);
        if let Err(needed) = limits::check_concurrency(sockets, threads, server_here, self.file_limit) {
            report.setup_error = Some(needed);
            return report;
        }
        report.config.connect_to = target.redirected_to().map(|addr| addr.to_string());
        let https = target.tls().is_some();
        if https {
            report.config.tls = Some(connections.options.tls.summary());
        }
        let progress = self.board.clone().map(|board| BoardPlace { board, position });
        let address = target.addr();
        let placement = Placement { target, threads, progress };
        let run = match engine::execute(workload, &plan, &placement, &self.stop) {
            Ok(run) => run,
            Err(err) => {
                report.setup_error = Some(format!("cannot start worker threads: {err}"));
                return report;
            }
        };
        let stats = run.stats;
        let histograms = self.histograms;
        report.started_at = rfc3339(run.started);
        report.started_unix_ms =
            run.started.duration_since(std::time::UNIX_EPOCH).ok().and_then(|t| u64::try_from(t.as_millis()).ok());
        report.duration_us = u64::try_from(run.wall.as_micros()).unwrap_or(u64::MAX);
        report.interrupted = run.interrupted;
        report.generator = Some(run.generator);
        report.failed = stats.errors.total();
        report.ok = stats.ok;
        report.cancelled = stats.cancelled;
        report.iterations = stats.ok + report.failed + stats.cancelled;
        report.errors = stats.errors;
        report.causes = stats.causes_report();
        let mut percentiles = self.percentiles.clone();
        percentiles.extend(config.thresholds.iter().filter_map(|t| t.metric.percentile()));
        report.latency_us = stats.latency_report(&percentiles, histograms);
        report.http = stats.http.clone();
        let per_second = |n: u64| if run.wall.is_zero() { 0.0 } else { n as f64 / run.wall.as_secs_f64() };
        // req/s is what the server delivered: a server failing fast must not look fast.
        report.rps = per_second(report.ok);
        report.attempts_per_sec = per_second(report.ok + report.failed);
        report.dropped = stats.dropped;
        report.warmup_iterations = run.warmup_iterations;
        report.timeline = stats.timeline_report(histograms);
        report.steps = stats.steps_report(&percentiles, histograms);
        report.requests = stats.requests_report(&percentiles, histograms);
        report.checks = stats.checks.clone();
        report.user_setup = workload.setup.map(|_| stats.setup.clone());
        report.user_teardown = workload.teardown.map(|_| stats.teardown.clone());
        report.connect_us = stats.connections.connect_report(histograms);
        report.tls_handshake_us = stats.connections.handshake_report(histograms);
        report.tls = https.then(|| stats.connections.tls.clone());
        report.rate = plan.requested_rate().zip(run.schedule).map(|(requested, schedule)| RateReport {
            requested,
            achieved: if schedule.is_zero() { 0.0 } else { report.iterations as f64 / schedule.as_secs_f64() },
        });
        // One smoke iteration measures nothing by design.
        if !matches!(self.sizing, Sizing::Smoke) {
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
