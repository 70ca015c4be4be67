//! One scenario's figures, as a run measured them: counts by kind, HTTP, latency percentiles,
//! steps, the timeline, the generator's self-check, the processes watched, thresholds.

use loadbench_grammar::{RowThreshold, Threshold};
use serde::{Deserialize, Serialize};

use super::causes::Causes;
use super::error_counts::ErrorCounts;
use super::feed::{FeedConfigReport, FeedRanOut};
use super::http::HttpReport;
use super::latency::LatencyReport;
use super::outcome::ThresholdOutcome;
use super::quic::QuicReport;
use super::refused::NothingListening;
use super::remote_write::RemoteWriteReport;
use super::saturation::GeneratorLimit;
use super::tls::{TlsConfigReport, TlsReport};
use super::warnings::Warning;
use super::watch::WatchReport;
use crate::error::Result;

/// `time` as RFC 3339 in UTC, to the second.
pub fn rfc3339(time: std::time::SystemTime) -> String {
    humantime::format_rfc3339_seconds(time).to_string()
}

/// The result of one scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScenarioReport {
    /// The scenario's name (the function name unless `name = "…"` was given).
    pub name: String,
    /// The load that was asked for.
    pub config: ConfigReport,
    /// Wall-clock start of this scenario, RFC 3339 in UTC.
    pub started_at: String,
    /// The same instant in milliseconds since the Unix epoch, which aligns the timelines of a
    /// distributed run's shards; absent in files from before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_unix_ms: Option<u64>,
    /// With `--shard I/N`: this shard's part of the load (`config` holds the whole scenario's);
    /// absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share: Option<ShareReport>,
    /// Wall time from the first iteration's start to the last one's end, in microseconds.
    pub duration_us: u64,
    /// True when the run was stopped early (Ctrl-C); the figures cover what did run.
    pub interrupted: bool,
    /// Set when the scenario could not run at all (bad target, too few file descriptors, …).
    pub setup_error: Option<String>,
    /// Iterations (runs of the scenario body) started in the measured part:
    /// `ok + failed + cancelled`.
    pub iterations: u64,
    /// Iterations whose body returned `Ok`.
    pub ok: u64,
    /// Iterations whose body returned an error; the sum of [`ScenarioReport::errors`].
    pub failed: u64,
    /// Failed iterations by kind.
    pub errors: ErrorCounts,
    /// Why iterations failed: the distinct messages, most frequent first, with their counts.
    #[serde(default, skip_serializing_if = "Causes::is_empty")]
    pub causes: Causes,
    /// HTTP exchanges made by the scenario body.
    pub http: HttpReport,
    /// Latency of successful iterations; `None` when no iteration succeeded.
    pub latency_us: Option<LatencyReport>,
    /// Successful iterations per second of wall time (`ok / duration`): what the server
    /// delivered. Failed iterations are not in it, so a server that fails fast does not look
    /// fast; thresholds on `rps` and baseline verdicts use this figure.
    pub rps: f64,
    /// Attempted iterations per second of wall time (`(ok + failed) / duration`): the load
    /// offered, failures included. Equal to [`ScenarioReport::rps`] when nothing failed.
    #[serde(default)]
    pub attempts_per_sec: f64,
    /// How loaded the generator itself was; `None` when the scenario did not run.
    #[serde(default)]
    pub generator: Option<GeneratorReport>,
    /// Server processes sampled while the scenario ran (`cargo loadbench --watch NAME=PID`,
    /// `Harness::watch`, `Harness::default_target_process`).
    #[serde(default)]
    pub watched: Vec<WatchReport>,
    /// Whether each of [`ConfigReport::thresholds`] held, in the same order; empty when the
    /// scenario has none, did not run, or ran as a smoke test. A failed condition on the
    /// generator (`dropped`, `rate`, `saturated`) does not fail the scenario: it is also in
    /// [`ScenarioReport::inconclusive`].
    #[serde(default)]
    pub thresholds: Vec<ThresholdOutcome>,
    /// The conditions on the generator that failed, which make the scenario's figures
    /// inconclusive: its own thresholds on `dropped`, `rate` and `saturated`, and for each of
    /// those it has none on, the default (`dropped <= 1%`, `rate >= 95%`, `saturated < 1`). Empty
    /// when the figures are the server's, or when nothing was judged (a smoke run).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inconclusive: Vec<ThresholdOutcome>,
    /// Open model: arrivals that found every virtual user busy and were not run (k6's
    /// `dropped_iterations`). Always 0 in the closed model.
    #[serde(default)]
    pub dropped: u64,
    /// Iterations still in flight when the run was cut short (the grace period after its
    /// duration or the first stop signal ran out, or a second signal came): they were cancelled,
    /// and are neither failures nor in the latency.
    #[serde(default)]
    pub cancelled: u64,
    /// Iterations run during the warmup: they reached the server but are in no other figure.
    #[serde(default)]
    pub warmup_iterations: u64,
    /// Iterations asked for that were never started because every attempt so far had found
    /// nothing listening at the target (connection refused), and the run stopped early rather
    /// than hammer a closed port: not sent, so in no other count.
    #[serde(default)]
    pub not_started: u64,
    /// Open model: the requested and the achieved arrival rate.
    #[serde(default)]
    pub rate: Option<RateReport>,
    /// Per-second figures from the start of the run, by the second each iteration ended in.
    #[serde(default)]
    pub timeline: Vec<TimelineSecond>,
    /// Named steps (`ctx.step`) of the measured iterations, in the order first run.
    #[serde(default)]
    pub steps: Vec<StepReport>,
    /// Named requests (`.name("GET /items/{id}")`) of the measured iterations, in the order first
    /// sent: each name's requests as one row, like a step's.
    #[serde(default)]
    pub requests: Vec<StepReport>,
    /// Checks (`ctx.check("has id", …)`) of the measured iterations, in the order first made:
    /// passes and failures by name; a failed check does not fail its iteration.
    #[serde(default)]
    pub checks: Vec<CheckReport>,
    /// The per-user setup (`setup = …`), when the scenario has one.
    #[serde(default)]
    pub user_setup: Option<HookReport>,
    /// The per-user teardown (`teardown = …`), when the scenario has one.
    #[serde(default)]
    pub user_teardown: Option<HookReport>,
    /// TCP connect time of the connections opened (k6's `http_req_connecting`); `None` when none
    /// was opened, and over HTTP/3, which opens no TCP connection.
    #[serde(default)]
    pub connect_us: Option<LatencyReport>,
    /// TLS handshake time of the connections opened, after their TCP connect (k6's
    /// `http_req_tls_handshaking`); over HTTP/3, the QUIC handshake with its connect, one
    /// figure; `None` for `http://` or when no handshake completed.
    #[serde(default)]
    pub tls_handshake_us: Option<LatencyReport>,
    /// TLS handshakes, for an `https://` target; `None` for `http://`.
    #[serde(default)]
    pub tls: Option<TlsReport>,
    /// What the QUIC connections of an HTTP/3 scenario measured (0-RTT, time to first byte);
    /// absent for the other protocols.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quic: Option<QuicReport>,
    /// Why the run may have measured nothing (no HTTP exchange, iterations faster than a round
    /// trip); empty for a sound run, a smoke run, or one that did not run.
    #[serde(default)]
    pub warnings: Vec<Warning>,
    /// A feed with `feed_end = "stop"` that ran out, and the iterations it left unstarted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feed_ran_out: Option<FeedRanOut>,
    /// Nothing was listening at the target: every attempt was a refused connection, and the run
    /// stopped early (the iterations a count asked for and never started are
    /// [`ScenarioReport::not_started`]); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nothing_listening: Option<NothingListening>,
    /// The live metrics pushed while it ran (`--remote-write`): samples sent and dropped; absent
    /// without the flag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote_write: Option<RemoteWriteReport>,
}

/// Runs of a per-user setup or teardown.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookReport {
    /// Times it ran: once per virtual user.
    pub runs: u64,
    /// Of those, the ones that returned an error (or panicked). A user whose setup failed runs
    /// no iteration.
    pub failed: u64,
    /// The first error's message.
    pub first_error: Option<String>,
}

impl HookReport {
    /// Counts one run.
    pub(crate) fn record(&mut self, outcome: &Result<()>) {
        self.runs += 1;
        if let Err(err) = outcome {
            self.failed += 1;
            self.first_error.get_or_insert_with(|| err.to_string());
        }
    }

    /// Adds another worker's runs.
    pub(crate) fn merge(&mut self, other: HookReport) {
        self.runs += other.runs;
        self.failed += other.failed;
        if self.first_error.is_none() {
            self.first_error = other.first_error;
        }
    }
}

/// One named step of a scenario: `ctx.step("insert", …)`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepReport {
    /// The name given to `ctx.step`.
    pub name: String,
    /// Times the step ran to its end (successfully or not).
    pub iterations: u64,
    /// Runs that returned `Ok`.
    pub ok: u64,
    /// Runs that returned an error; the sum of `errors`.
    pub failed: u64,
    /// Failed runs by kind.
    pub errors: ErrorCounts,
    /// Why runs failed: the distinct messages, most frequent first, with their counts.
    #[serde(default, skip_serializing_if = "Causes::is_empty")]
    pub causes: Causes,
    /// Latency of successful runs, from the step's start to its end; `None` when none succeeded.
    pub latency_us: Option<LatencyReport>,
}

/// One named check of a scenario: `ctx.check("has id", …)` (k6's `check`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckReport {
    /// The name given to `ctx.check`.
    pub name: String,
    /// Times the condition held.
    pub passes: u64,
    /// Times it did not.
    pub fails: u64,
}

/// The arrival rate of an open-model scenario.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RateReport {
    /// Iterations per second asked for.
    pub requested: f64,
    /// Iterations per second that did start: those run (not dropped) over the time the schedule
    /// took, which is longer than planned when the generator fell behind.
    pub achieved: f64,
}

/// One shard's part of a scenario's load (`--shard I/N`): the whole load split so that the shards
/// add up to it exactly, remainders on the first shards.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ShareReport {
    /// This shard's virtual users.
    pub concurrency: u32,
    /// This shard's iterations, when the scenario is count-bound.
    pub count: Option<u64>,
    /// This shard's arrivals per second, in the open model.
    pub rate: Option<f64>,
    /// The number (`ctx.user()`) of this shard's first user: users are numbered across shards.
    pub first_user: u32,
}

/// One second of a scenario's run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimelineSecond {
    /// Seconds since the start of the run (0 is the first).
    pub second: u64,
    /// Iterations that ended in this second.
    pub requests: u64,
    /// Of those, the failed ones.
    pub errors: u64,
    /// Open model: arrivals due in this second that were dropped.
    #[serde(default)]
    pub dropped: u64,
    /// Median latency of this second's successful iterations (2 significant digits); `None`
    /// when none succeeded.
    pub p50_us: Option<f64>,
    /// Their 90th percentile (`None` in files from before it was kept).
    #[serde(default)]
    pub p90_us: Option<f64>,
    /// Their 99th percentile.
    pub p99_us: Option<f64>,
    /// Their latencies, in microseconds, as an HdrHistogram in its standard compressed encoding
    /// (base64 of the V2 deflate format), when histograms were asked for (`--histograms`, and
    /// always with `--shard`); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histogram: Option<String>,
}

impl ScenarioReport {
    /// `n` per second of this scenario's wall time (`duration_us`); 0 for a scenario that took
    /// none.
    pub fn per_second(&self, n: u64) -> f64 {
        if self.duration_us == 0 { 0.0 } else { n as f64 * 1e6 / self.duration_us as f64 }
    }

    /// The table's `req/s`: HTTP responses received whole per second of the wall time, every
    /// status counted. Computed from `http.responses` and `duration_us`, so a document of any
    /// schema version shows it; [`ScenarioReport::rps`] stays successful iterations per second.
    pub fn responses_per_sec(&self) -> f64 {
        self.per_second(self.http.responses)
    }

    /// A report of a scenario before it has run: every count zero, no latency.
    pub fn not_started(name: impl Into<String>, config: ConfigReport) -> ScenarioReport {
        ScenarioReport {
            name: name.into(),
            config,
            started_at: rfc3339(std::time::SystemTime::now()),
            started_unix_ms: None,
            share: None,
            duration_us: 0,
            interrupted: false,
            setup_error: None,
            iterations: 0,
            ok: 0,
            failed: 0,
            errors: ErrorCounts::default(),
            causes: Causes::default(),
            http: HttpReport::default(),
            latency_us: None,
            rps: 0.0,
            attempts_per_sec: 0.0,
            generator: None,
            watched: Vec::new(),
            thresholds: Vec::new(),
            inconclusive: Vec::new(),
            dropped: 0,
            cancelled: 0,
            warmup_iterations: 0,
            not_started: 0,
            rate: None,
            timeline: Vec::new(),
            steps: Vec::new(),
            requests: Vec::new(),
            checks: Vec::new(),
            user_setup: None,
            user_teardown: None,
            connect_us: None,
            tls_handshake_us: None,
            tls: None,
            quic: None,
            warnings: Vec::new(),
            feed_ran_out: None,
            nothing_listening: None,
            remote_write: None,
        }
    }
}

/// The generator's view of itself during a scenario: whether loadbench, rather than the server,
/// may have been the limit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GeneratorReport {
    /// Worker threads that ran the virtual users.
    pub worker_threads: usize,
    /// CPU time the worker threads used, in seconds, where the platform reports it.
    pub cpu_seconds: Option<f64>,
    /// That CPU time over wall time × worker threads: 1.0 means every worker was busy all along.
    pub cpu_utilization: Option<f64>,
    /// 99th percentile of how late the workers' event loops woke for a timer, in microseconds.
    pub lag_p99_us: Option<u64>,
    /// The latest such wake-up, in microseconds.
    pub lag_max_us: Option<u64>,
    /// True when the workers were busy (CPU at 90 % or more) or late (lag p99 of 20 ms or more,
    /// or `late_reads`): the figures may then show the generator's limit rather than the
    /// server's.
    pub saturated: bool,
    /// Share of the run's time the worker threads were ready to run but waited for a CPU (which
    /// another thread or process had), averaged over them, where the platform tells (Linux's
    /// scheduler statistics); `None` in files written before it was measured.
    #[serde(default)]
    pub waited_for_cpu: Option<f64>,
    /// When `saturated`, what the figures say limited the run: the generator's own CPU, a busy
    /// machine, or the generator's event loop held up by a body; `None` when not saturated (and in
    /// files written before it was recorded).
    #[serde(default)]
    pub limit: Option<GeneratorLimit>,
    /// 99th percentile of how long what the server had sent waited in the workers' sockets before
    /// they read it, in microseconds, over sampled reads; `None` where not measured (not Linux,
    /// no read, or a file written before it was).
    #[serde(default)]
    pub read_delay_p99_us: Option<u64>,
    /// The longest such wait sampled, in microseconds.
    #[serde(default)]
    pub read_delay_max_us: Option<u64>,
    /// True when that wait flagged the run: a p99 of 1 ms or more and a fifth or more of the
    /// iterations' latency p99, so that the tail reported is largely the generator's own wait.
    #[serde(default)]
    pub late_reads: bool,
}

/// The load a scenario was configured with, after overrides.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ConfigReport {
    /// Virtual users (bodies in flight at once); with `rate`, the most that serve it.
    pub concurrency: u32,
    /// Open model: iterations started per second.
    #[serde(default)]
    pub rate: Option<f64>,
    /// Total iterations, when the scenario is bounded by count.
    pub count: Option<u64>,
    /// Run time in milliseconds, when the scenario is bounded by time.
    pub duration_ms: Option<u64>,
    /// Per-request timeout in milliseconds.
    pub timeout_ms: u64,
    /// How long in-flight iterations could finish after the run's end (or the first stop
    /// signal) before being cancelled, in milliseconds.
    #[serde(default)]
    pub grace_ms: u64,
    /// Iterations run first and left out of the figures, when the warmup is a count.
    #[serde(default)]
    pub warmup_count: Option<u64>,
    /// Time run first and left out of the figures, in milliseconds, when the warmup is a time.
    #[serde(default)]
    pub warmup_ms: Option<u64>,
    /// Closed model: each user's pause between iterations, `[min, max]` in milliseconds.
    #[serde(default)]
    pub think_time_ms: Option<(u64, u64)>,
    /// A ramp of virtual users: each stage's `[milliseconds, target users]`.
    #[serde(default)]
    pub stages: Vec<(u64, u32)>,
    /// A ramp of the arrival rate: each stage's `[milliseconds, iterations per second]`.
    #[serde(default)]
    pub rate_stages: Vec<(u64, u64)>,
    /// The group whose scenarios ran at the same time as this one (`group = "…"`).
    #[serde(default)]
    pub group: Option<String>,
    /// The factor the declared load was reduced by (`--scale`, `LOADBENCH_SCALE`); the other
    /// fields are the reduced figures.
    #[serde(default)]
    pub scale: Option<f64>,
    /// Base URL the requests went to.
    pub target: Option<String>,
    /// The address connections went to when a `--connect-to` rule chose it (`"127.0.0.1:8443"`).
    #[serde(default)]
    pub connect_to: Option<String>,
    /// TLS settings, for an `https://` target.
    #[serde(default)]
    pub tls: Option<TlsConfigReport>,
    /// Conditions the scenario must meet: from its attribute, plus `--threshold` ones given to
    /// `cargo loadbench`.
    #[serde(default)]
    pub thresholds: Vec<Threshold>,
    /// Conditions on the scenario's steps and named requests of a name (`thresholds("login":
    /// …)`, `--threshold '{login}:…'`), checked after [`ConfigReport::thresholds`]; absent when
    /// there are none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub row_thresholds: Vec<RowThreshold>,
    /// The scenario's feed (`feed = "…"`), when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feed: Option<FeedConfigReport>,
    /// `connections = N`: the connections the users shared; absent when each user had its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connections: Option<u32>,
    /// `pipeline = D`: the most HTTP/1.1 requests in flight on one shared connection; absent when
    /// not set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pipeline: Option<u32>,
    /// `http2 = true`: HTTP/2 was asked for (what was spoken is `http.version`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub http2: bool,
    /// `http3 = true`: HTTP/3 over QUIC was asked for (and is the only protocol spoken).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub http3: bool,
}
