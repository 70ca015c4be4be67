//! Runs one workload under its load plan and turns what the executor measured into a
//! [`ScenarioReport`]: the one path from a load to a report, for registered scenarios and one-shot
//! runs alike.

use std::sync::Arc;
use std::time::Duration;

use super::limits;
use super::measured::Measured;
use crate::cli::Shard;
use crate::config::ScenarioConfig;
use crate::engine::registry::Workload;
use crate::engine::{self, Board, BoardPlace, LoadPlan, Placement, Position, Sizing, StopFlags};
use crate::feed::Feed;
use crate::http::{ClientOptions, Target, TlsClient, TlsSetupError};
use crate::report::{FeedConfigReport, ScenarioReport};
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
    /// Where live metrics go (`--remote-write`), when they are pushed.
    #[cfg(feature = "remote-write")]
    pub(crate) remote_write: Option<engine::LivePush>,
}

impl RunSettings {
    /// Runs `workload` under `plan` (built from `config` with these settings' sizing) against
    /// `url`, and reports it; its progress line says it is scenario `position` of the run. A run
    /// that cannot start comes back with [`ScenarioReport::setup_error`] set.
    pub(crate) fn run(
        &self,
        workload: &Workload,
        plan: &LoadPlan,
        config: &ScenarioConfig,
        url: &str,
        position: Position,
    ) -> ScenarioReport {
        // The command line's overrides, on this run's copy of the plan.
        let mut plan = plan.clone();
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
        // Refused before any load by the harness and `cargo loadbench url`; here too, as the
        // shard is, rather than let a lane asking for QUIC speak TCP.
        if let Some(refusal) = http3_refusal(plan.transport.protocol, &workload.name, url) {
            report.setup_error = Some(refusal);
            return report;
        }
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
        let mut percentiles = self.percentiles.clone();
        let rows = config.row_thresholds.iter().map(|t| &t.threshold);
        percentiles.extend(config.thresholds.iter().chain(rows).filter_map(|t| t.metric.percentile()));
        let progress = self.board.clone().map(|board| BoardPlace { board, position });
        let address = target.addr();
        let placement = Placement {
            target,
            threads,
            progress,
            #[cfg(feature = "remote-write")]
            remote_write: self.remote_write.clone(),
        };
        let run = match engine::execute(workload, &plan, &placement, &self.stop) {
            Ok(run) => run,
            Err(err) => {
                report.setup_error = Some(format!("cannot start worker threads: {err}"));
                return report;
            }
        };
        let measured = Measured {
            plan: &plan,
            workload,
            percentiles: &percentiles,
            histograms: self.histograms,
            https,
            sizing: self.sizing,
            address,
        };
        ScenarioReport::from_run(report, run, &measured)
    }
}

/// Why scenario `name` cannot speak `protocol` to `url`, if it is HTTP/3 and cannot: QUIC needs
/// the `http3` feature and an `https://` target (it always runs over TLS).
pub fn http3_refusal(protocol: crate::config::Protocol, name: &str, url: &str) -> Option<String> {
    if !protocol.is_http3() {
        return None;
    }
    if !cfg!(feature = "http3") {
        return Some(format!(
            "`{name}` asks for HTTP/3, which is not built into this bench: it needs loadbench-runtime's `http3` feature (`features = [\"http3\"]` on its line in Cargo.toml)"
        ));
    }
    let https = url.get(..8).is_some_and(|scheme| scheme.eq_ignore_ascii_case("https://"));
    (!https).then(|| {
        format!("`{name}` asks for HTTP/3, which runs over QUIC and TLS: its target must be https://, not {url}")
    })
}

#[cfg(test)]
mod tests {
    use super::http3_refusal;
    use crate::config::Protocol;

    #[test]
    fn http3_is_refused_on_http_and_without_the_feature_naming_the_scenario() {
        assert_eq!(http3_refusal(Protocol::Http2, "a", "http://127.0.0.1:1/"), None);
        let on_http = http3_refusal(Protocol::Http3, "api", "http://127.0.0.1:1/");
        let on_https = http3_refusal(Protocol::Http3, "api", "https://localhost:1/");
        if cfg!(feature = "http3") {
            let expected = "`api` asks for HTTP/3, which runs over QUIC and TLS: its target must be https://, not http://127.0.0.1:1/";
            assert_eq!(on_http.as_deref(), Some(expected));
            assert_eq!(on_https, None);
        } else {
            for refused in [on_http, on_https] {
                let refused = refused.unwrap_or_default();
                assert!(refused.starts_with("`api` asks for HTTP/3, which is not built into this bench"), "{refused}");
                assert!(refused.contains("features = [\"http3\"]"), "{refused}");
            }
        }
    }
}
