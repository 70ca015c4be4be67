//! The bench binary's entry point, [`Harness`]: reads its command line (`args`), selects and lists
//! scenarios, decides their targets (`targets`, starting a default server process if needed),
//! runs them one batch at a time (`batches`; a group's scenarios together) through `runner`,
//! and reports to the terminal or to `cargo loadbench`, with the exit code the run earns
//! (`outcome`). One-shot runs (`oneshot`) and the process sampler (`watch`) stand beside it.
//!
//! Uses the engine, the report and `cli`; only the crate's front (`lib.rs`) uses it.

mod args;
mod batches;
mod feeds;
mod limits;
mod list;
mod measured;
pub mod oneshot;
mod outcome;
mod process;
mod runner;
mod targets;
pub mod watch;

use std::io::Write as _;
use std::path::PathBuf;
use std::process::{Command, ExitCode};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, SystemTime};

use clap::Parser;

use self::args::BenchArgs;
use self::batches::{Numbering, Selected, batches};
use self::feeds::load_feeds;
use self::runner::{Connections, RunSettings};
use self::targets::DefaultTarget;
use self::watch::{Sampler, Watch};
use crate::cli::{
    self, Filter, NoMatch, OUTPUT_ENV, PERCENTILES_ENV, PROGRESS_ENV, SCALE_ENV, Shard, StartAt, interrupt,
};
use crate::console::{self, err};
use crate::engine::registry::{self, ScenarioEntry, Workload};
use crate::engine::{Board, LoadPlan, Sizing, StopFlags, parse_scale};
use crate::exit_code;
use crate::feed::{Feed, FeedError, FeedSource};
use crate::http::{ClientOptions, TargetError, TlsSetupError};
use crate::report::{
    self, LatencyColumns, RunReport, ScenarioReport, ShardReport, StartReport, WatchReport, check, table,
};

/// Why a run could not start. Each maps to exit code 2 (usage or configuration).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HarnessError {
    /// The binary holds no `#[scenario]` functions.
    #[error("this binary has no #[loadbench::scenario] functions")]
    NoScenarios,
    /// Two scenarios have the same name.
    #[error("two scenarios are named `{name}` ({first} and {second}); give one of them `name = \"…\"`")]
    DuplicateName {
        /// The shared name.
        name: String,
        /// `file:line` of the first.
        first: String,
        /// `file:line` of the second.
        second: String,
    },
    /// The filters matched nothing.
    #[error(transparent)]
    NoMatch(#[from] NoMatch),
    /// A scenario has no target from any source.
    #[error(
        "scenario `{scenario}` has no target: pass --target URL, set LOADBENCH_TARGET, or add target = \"…\" to its attribute"
    )]
    NoTarget {
        /// The scenario's name.
        scenario: String,
    },
    /// A target URL is malformed or unsupported.
    #[error(transparent)]
    Target(#[from] TargetError),
    /// `LOADBENCH_PERCENTILES` is not a list of percentiles.
    #[error("LOADBENCH_PERCENTILES: {0}")]
    Percentiles(String),
    /// The embedded server given to [`Harness::default_target`] failed to start.
    #[error("the default target failed to start: {0}")]
    DefaultTarget(std::io::Error),
    /// `LOADBENCH_SCALE` is not a scale factor.
    #[error("LOADBENCH_SCALE: {0}")]
    Scale(String),
    /// A TLS file (`--cacert`, `--cert`, `--key`) cannot be used.
    #[error(transparent)]
    Tls(#[from] TlsSetupError),
    /// A scenario's feed file is missing, unreadable, empty or malformed, or too short for
    /// `feed_mode = "per_user"`.
    #[error(transparent)]
    Feed(#[from] FeedError),
    /// A selected scenario has fewer virtual users than `--shard` has shards.
    #[error("{0}")]
    Shard(String),
}

/// Runs the scenarios registered in this binary.
///
/// `loadbench::main!()` is `Harness::new().run()`. Write `main` yourself to give a default target,
/// for instance a server embedded in the bench file:
///
/// ```no_run
/// fn main() -> std::process::ExitCode {
///     loadbench::Harness::new()
///         // Called only when no --target, LOADBENCH_TARGET or attribute target is given.
///         .default_target(|| Ok("http://127.0.0.1:8080".to_string()))
///         .run()
/// }
/// ```
#[must_use]
pub struct Harness {
    default_target: Option<DefaultTarget>,
    target: Option<String>,
    scale: Option<f64>,
    watches: Vec<Watch>,
    filters: Vec<String>,
    exact: bool,
    smoke: bool,
    progress: bool,
    worker_threads: Option<usize>,
    grace: Option<Duration>,
    stop: StopFlags,
    client: ClientOptions,
    /// The table's latency columns (`--percentiles`), also measured.
    columns: LatencyColumns,
    /// `--fail-on-warning`.
    fail_on_warning: bool,
    /// `--allow-inconclusive` and `--allow-failures`.
    allow: outcome::Allow,
    /// Feeds given with [`Harness::feed`], by scenario name.
    feeds: Vec<(String, FeedSource)>,
    /// `--shard I/N`: this process runs part I of N of every scenario's load.
    shard: Option<Shard>,
    /// `--start-at TIME`: the first scenario's load starts at this instant.
    start_at: Option<StartAt>,
    /// `--histograms`: the reports carry their latencies' HdrHistograms (always with a shard).
    histograms: bool,
    /// `--run-id ID`: the run's name, recorded in the results.
    run_id: Option<String>,
}

impl std::fmt::Debug for Harness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Harness")
            .field("target", &self.target)
            .field("filters", &self.filters)
            .field("exact", &self.exact)
            .field("smoke", &self.smoke)
            .field("scale", &self.scale)
            .field("watches", &self.watches)
            .field("grace", &self.grace)
            .field("client", &self.client)
            .field("feeds", &self.feeds)
            .field("shard", &self.shard)
            .field("start_at", &self.start_at)
            .field("histograms", &self.histograms)
            .field("run_id", &self.run_id)
            .finish_non_exhaustive()
    }
}

impl Default for Harness {
    fn default() -> Self {
        Harness::new()
    }
}

impl Harness {
    /// A harness with no target, no filter and progress shown.
    pub fn new() -> Harness {
        Harness {
            default_target: None,
            target: None,
            scale: None,
            watches: Vec::new(),
            filters: Vec::new(),
            exact: false,
            smoke: false,
            progress: true,
            worker_threads: None,
            grace: None,
            stop: StopFlags::default(),
            client: ClientOptions::default(),
            columns: LatencyColumns::default(),
            fail_on_warning: false,
            allow: outcome::Allow::default(),
            feeds: Vec::new(),
            shard: None,
            start_at: None,
            histograms: false,
            run_id: None,
        }
    }

    /// How connections are made: TLS settings (a private CA, a client certificate) and
    /// `--connect-to` rules. Flags on the command line are applied over these.
    ///
    /// ```no_run
    /// use loadbench::http::{ClientOptions, TlsOptions};
    /// fn main() -> std::process::ExitCode {
    ///     let tls = TlsOptions::default().ca_file("certs/staging-ca.pem");
    ///     loadbench::Harness::new().client(ClientOptions { tls, ..ClientOptions::default() }).run()
    /// }
    /// ```
    pub fn client(mut self, options: ClientOptions) -> Harness {
        self.client = options;
        self
    }

    /// The target to use when neither `--target`, `LOADBENCH_TARGET` nor the scenario's
    /// attribute names one. `start` runs at most once, and only if it is needed.
    pub fn default_target(mut self, start: impl FnOnce() -> std::io::Result<String> + 'static) -> Harness {
        self.default_target = Some(DefaultTarget::Start(Box::new(start)));
        self
    }

    /// The default target (see [`Harness::default_target`]) is a server process: `command` is
    /// started only if a scenario needs it, must print its base URL as the first line of its
    /// standard output once it accepts connections, and is killed when the run ends. While each
    /// scenario (or group) runs, the process and its children are sampled as
    /// [`Harness::watch`] does, under `name`, so that the server's CPU and memory are reported
    /// apart from the load generator's. Its standard input is a pipe that closes when the bench
    /// process exits, however it exits: a server that stops at the end of its input never
    /// outlives the bench.
    ///
    /// ```no_run
    /// fn main() -> std::process::ExitCode {
    ///     loadbench::Harness::new()
    ///         .default_target_process("app", std::process::Command::new("target/release/my-server"))
    ///         .run()
    /// }
    /// ```
    pub fn default_target_process(mut self, name: impl Into<String>, command: Command) -> Harness {
        self.default_target = Some(DefaultTarget::Process { name: name.into(), command: Box::new(command) });
        self
    }

    /// Samples process `pid` (and its children) while each scenario, or group, runs: its CPU
    /// (average and busiest 250 ms, in percent of one core) and resident memory (at the start, at
    /// its peak, at the end), reported in the table and under `watched` in the JSON, as
    /// `cargo loadbench --watch NAME=PID` does. Linux only; elsewhere, or when no such process
    /// exists, the report carries a note instead.
    pub fn watch(mut self, name: impl Into<String>, pid: u32) -> Harness {
        self.watches.push(Watch { name: name.into(), pid });
        self
    }

    /// Runs every scenario at `factor` (above 0, at most 1) of its declared load, as
    /// `--scale FACTOR` and `LOADBENCH_SCALE` do: users, counts, durations, rates and ramps are
    /// multiplied by it, users and counts rounded and kept at least 1, durations at least 100 ms.
    /// A factor outside `(0, 1]` is ignored.
    pub fn scale(mut self, factor: f64) -> Harness {
        self.scale = (factor > 0.0 && factor <= 1.0).then_some(factor);
        self
    }

    /// The target for every scenario, as `--target` would give it.
    pub fn target(mut self, url: impl Into<String>) -> Harness {
        self.target = Some(url.into());
        self
    }

    /// Runs only the scenario with exactly this name (may be repeated).
    pub fn only(mut self, name: impl Into<String>) -> Harness {
        self.filters.push(name.into());
        self.exact = true;
        self
    }

    /// Runs the virtual users on this many worker threads (never more than there are users)
    /// instead of one per CPU (half of them for a server on this machine), as
    /// `LOADBENCH_THREADS` does.
    pub fn worker_threads(mut self, threads: usize) -> Harness {
        self.worker_threads = Some(threads.max(1));
        self
    }

    /// How long iterations in flight may go on after a duration-bound run's end, or after a
    /// stop, before they are cancelled, for every scenario, as `--grace` gives it (which wins
    /// over this); otherwise each scenario's `grace = "…"`, else 5 s.
    pub fn grace(mut self, grace: Duration) -> Harness {
        self.grace = Some(grace);
        self
    }

    /// Stops the runs when `stop` is set, as a first Ctrl-C does (when the harness cannot
    /// install its own handler, say because the program handles signals itself); `cancel`
    /// cancels what is in flight at once, as a second one does.
    pub fn stop_flags(mut self, stop: Arc<AtomicBool>, cancel: Arc<AtomicBool>) -> Harness {
        self.stop = StopFlags { graceful: stop, now: cancel };
        self
    }

    /// Runs part `shard` of every scenario's load, as `--shard I/N` does: one machine's part of
    /// a distributed run. Users, counts, rates and ramps are split so that the N shards add up to
    /// the whole exactly (the remainders on the first shards), users are numbered across the
    /// shards (`ctx.user()` of shard 1 of 3 of 7 users is 3 or 4), and the results carry their
    /// histograms, which a merge adds up. A scenario with fewer users than shards is refused
    /// before any load.
    pub fn shard(mut self, shard: Shard) -> Harness {
        self.shard = Some(shard);
        self
    }

    /// Waits until `at` before the first scenario starts its load, as `--start-at TIME` does,
    /// so that the shards of a distributed run start together; already past, it starts at once.
    pub fn start_at(mut self, at: StartAt) -> Harness {
        self.start_at = Some(at);
        self
    }

    /// Writes every latency's HdrHistogram into the results, as `--histograms` does (always on
    /// for a shard).
    pub fn histograms(mut self, on: bool) -> Harness {
        self.histograms = on;
        self
    }

    /// Shows or hides progress output.
    pub fn progress(mut self, show: bool) -> Harness {
        self.progress = show;
        self
    }

    /// Reads the command line, runs, reports, and returns the exit code: 0 when every selected
    /// scenario ran (request errors are counted, not fatal), 1 when a scenario missed one of its
    /// `thresholds(…)` (or, with `--fail-on-warning`, earned a warning that it measured nothing),
    /// 2 for a usage or configuration error or an output that could not be written (a results
    /// file, stdout, stderr: the rest is still written), 3 when a scenario could not run,
    /// 130 when stopped by Ctrl-C (SIGINT), 143 by SIGTERM, 129 by SIGHUP (the partial results
    /// are still reported, written to their files before anything is printed).
    pub fn run(self) -> ExitCode {
        // Started by `cargo loadbench`: never outlive it.
        interrupt::die_with_parent();
        let args = match BenchArgs::try_parse_from(std::env::args_os()) {
            Ok(args) => args,
            Err(err) => return cli::report_usage_error(&err),
        };
        let code = self.run_with(args);
        // A stdout or stderr that could not be written fails the run, whatever it measured; but
        // not a run for `cargo loadbench`, which shares them, says so itself, and would take the
        // exit code for a usage error and leave the results unread.
        let for_cargo_loadbench = std::env::var_os(OUTPUT_ENV).is_some();
        ExitCode::from(if for_cargo_loadbench { code } else { console::exit_code(code) })
    }

    /// [`Harness::run`] once the command line is read: the exit code.
    fn run_with(mut self, args: BenchArgs) -> u8 {
        self.filters = args.filters;
        self.exact = args.exact;
        self.smoke = !args.bench;
        self.progress = !args.quiet;
        if args.target.is_some() {
            self.target = args.target;
        }
        if args.scale.is_some() {
            self.scale = args.scale;
        }
        if args.grace.is_some() {
            self.grace = args.grace;
        }
        self.client = args.client.apply(std::mem::take(&mut self.client));
        if let Some(percentiles) = args.percentiles {
            self.columns = LatencyColumns::new(percentiles);
        }
        self.fail_on_warning = args.fail_on_warning;
        self.allow = outcome::Allow { inconclusive: args.allow_inconclusive, failures: args.allow_failures };
        if args.distributed.shard.is_some() {
            self.shard = args.distributed.shard;
        }
        if args.distributed.start_at.is_some() {
            self.start_at = args.distributed.start_at;
        }
        self.histograms |= args.distributed.histograms;
        if args.distributed.run_id.is_some() {
            self.run_id = args.distributed.run_id;
        }
        let output = std::env::var_os(OUTPUT_ENV).map(PathBuf::from);

        if args.list {
            return match registered() {
                Ok(entries) => list::list(&entries, &self.filter(), output.as_deref()),
                Err(err) => {
                    err!("error: {err}");
                    exit_code::USAGE
                }
            };
        }

        // Before any load: a result file that cannot be written should cost nothing.
        for path in output.iter().chain(args.json.iter()) {
            if let Err(reason) = report::check_writable(path) {
                err!("error: cannot write results to {}: {reason}", path.display());
                return exit_code::USAGE;
            }
        }
        // Signals stop the run through the process's handler (one per process, see
        // `cli::interrupt`); failing to install it, the flags given to `stop_flags` stay.
        match interrupt::install(true) {
            Ok(()) => self.stop = StopFlags { graceful: interrupt::stop_flag(), now: interrupt::cancel_flag() },
            Err(err) => err!("warning: {err}; a stopped run will show no results"),
        }
        let smoke = self.smoke;
        let (columns, fail_on_warning, allow) = (self.columns.clone(), self.fail_on_warning, self.allow);
        let report = match self.run_report() {
            Ok(report) => report,
            Err(err) => {
                err!("error: {err}");
                return exit_code::USAGE;
            }
        };
        // A file that cannot be written (a full disk, a full device) loses nothing else: the
        // table is still printed, and the exit code says it.
        let mut unwritten = false;
        for path in output.iter().chain(args.json.iter()) {
            if let Err(err) = report::write_json_atomic(path, &report) {
                err!("error: cannot write results to {}: {err}", path.display());
                unwritten = true;
            }
        }
        if output.is_none() {
            console::print(&table::render_with(&report, &columns));
            let failed: Vec<&str> =
                report.scenarios.iter().filter(|s| check::any_failed(s)).map(|s| s.name.as_str()).collect();
            if !failed.is_empty() {
                err!("error: thresholds failed: {} (see above)", failed.join(", "));
            }
            // With an output file (as `cargo loadbench` runs it), the reader of the file says it.
            if !smoke {
                for line in outcome::verdict_lines(&report, allow) {
                    err!("{line}");
                }
            }
        }
        for hint in report::hints(&report.scenarios) {
            err!("{hint}");
        }
        let unwritten = if unwritten { exit_code::USAGE } else { exit_code::OK };
        if smoke && let Some(failure) = outcome::smoke_failure(&report) {
            err!("error: {failure}");
            return exit_code::GATE_FAILED.max(unwritten);
        }
        let code = outcome::exit_code(&report, allow);
        if fail_on_warning
            && code == exit_code::OK
            && let Some(line) = outcome::warning_failure(&report)
        {
            err!("error: {line}");
            return exit_code::GATE_FAILED.max(unwritten);
        }
        code.max(unwritten)
    }

    /// The scenario filter in force.
    fn filter(&self) -> Filter {
        Filter::new(self.filters.clone(), self.exact)
    }

    /// Runs the selected scenarios and returns the report, without printing a table.
    ///
    /// Scenarios that cannot run (their target does not resolve, too few file descriptors) are in
    /// the report with [`ScenarioReport::setup_error`] set; the others still run.
    pub fn run_report(mut self) -> Result<RunReport, HarnessError> {
        let entries = registered()?;
        let filter = self.filter();
        let selected = registry::select(&entries, &filter);
        if selected.is_empty() {
            return Err(filter.no_match(entries.iter().map(|e| e.name)).into());
        }
        let scale = match self.scale {
            Some(factor) => Some(factor),
            None => match std::env::var(SCALE_ENV).ok().filter(|s| !s.trim().is_empty()) {
                Some(text) => Some(parse_scale(&text).map_err(HarnessError::Scale)?),
                None => None,
            },
        };
        let resolved = targets::resolve(&selected, self.target.as_deref(), self.default_target.take())?;
        // The default target's process, when it is one, lives until the run's end and is watched.
        let server = resolved.server.map(|(process, watch)| {
            self.watches.push(watch);
            process
        });

        // Measured beyond the fixed percentiles: the table's columns, and what `cargo loadbench`
        // asks for to evaluate its `--threshold`s and show its `--percentiles`.
        let mut percentiles = self.columns.percentiles().to_vec();
        if let Some(text) = std::env::var(PERCENTILES_ENV).ok().filter(|s| !s.trim().is_empty()) {
            let asked = cli::parse_percentiles(&text).map_err(|e| HarnessError::Percentiles(e.to_string()))?;
            percentiles.extend(asked);
        }
        let sizing = match scale {
            Some(factor) => Sizing::Scaled(factor),
            None if self.smoke => Sizing::Smoke,
            None => Sizing::Declared,
        };
        // Each scenario's plan, built here once: the shard check, its feed and its run read it.
        let selected: Vec<Selected> = selected
            .into_iter()
            .zip(resolved.urls)
            .map(|(entry, url)| Selected { entry, url, plan: LoadPlan::new(&entry.config, sizing) })
            .collect();
        // Every shard needs a user of each scenario: refused before any load, in any batch.
        if let Some(shard) = self.shard {
            for scenario in &selected {
                if let Some(refusal) = shard.too_few_users(scenario.entry.name, scenario.plan.concurrency) {
                    return Err(HarnessError::Shard(refusal));
                }
            }
        }
        // Every selected scenario's feed, read before any load, so that a bad file costs nothing.
        let feeds = match load_feeds(&selected, &self.feeds, &self.stop.graceful)? {
            Ok(feeds) => feeds,
            Err(file) => {
                // Stopped before any load: the results say so, with no scenario. Said without a
                // check: the terminal may be gone (SIGHUP), and the results must still be written.
                let _ = writeln!(std::io::stderr(), "interrupted while reading feed {file}: no scenario ran");
                let mut report = RunReport::new(SystemTime::now());
                report.interrupted = true;
                report.shard = self.shard.map(|shard| ShardReport { index: shard.index(), count: shard.count() });
                return Ok(report);
            }
        };
        let connections =
            Connections::new(std::mem::take(&mut self.client), selected.iter().map(|scenario| scenario.url.as_str()))?;
        // Every check is done: wait for the common start, then run.
        let start = self.start_at.map(|at| {
            if self.progress {
                let left = at.time().duration_since(SystemTime::now()).unwrap_or_default();
                if !left.is_zero() {
                    err!("     Waiting {:.1}s for --start-at {}", left.as_secs_f64(), at.millis());
                }
            }
            let late = at.wait(&self.stop.graceful);
            StartReport { at: at.millis(), late_ms: u64::try_from(late.as_millis()).unwrap_or(u64::MAX) }
        });
        let started_at = SystemTime::now();
        let settings = RunSettings {
            // A smoke run is one iteration of the closed model, whatever the attribute asks,
            // unless a scale asks for more.
            sizing,
            board: self.progress.then(Board::for_stderr),
            worker_threads: self.worker_threads,
            file_limit: limits::raise_open_files(),
            server_here: resolved.started_here,
            stop: self.stop.clone(),
            grace: self.grace,
            connections,
            percentiles,
            shard: self.shard,
            histograms: self.histograms || self.shard.is_some(),
        };
        let mut scenarios = Vec::with_capacity(selected.len());
        let batches = batches(selected);
        // Numbered in the order they run, a group's members one after the other.
        let run = std::env::var(PROGRESS_ENV).ok().and_then(|text| cli::parse_progress(&text));
        let numbering = Numbering::new(batches.iter().flatten(), run);
        for batch in batches {
            if self.stop.any() {
                break;
            }
            // Sampled per batch: the scenarios of a group share one server, busy with all of them.
            let samplers: Vec<Sampler> = self.watches.iter().map(Sampler::start).collect();
            let reports = run_batch(&settings, &batch, &feeds, &numbering);
            let watched: Vec<WatchReport> = samplers.into_iter().map(Sampler::finish).collect();
            for (mut report, Selected { entry, .. }) in reports.into_iter().zip(&batch) {
                if report.setup_error.is_none() {
                    report.watched.clone_from(&watched);
                }
                // A smoke run (one iteration, one user) says nothing about latency or throughput.
                if !self.smoke {
                    check::judge(&mut report);
                }
                if let Some(err) = &report.setup_error {
                    err!("error: scenario `{}` could not run: {err}", entry.name);
                }
                scenarios.push(report);
            }
        }
        // Stopped only now that every scenario has run.
        drop(server);
        let mut report = RunReport::new(started_at);
        report.interrupted = self.stop.any();
        report.shard = self.shard.map(|shard| ShardReport { index: shard.index(), count: shard.count() });
        report.start = start;
        report.run_id = self.run_id.clone();
        report.scenarios = scenarios;
        Ok(report)
    }
}

/// Runs one batch: a scenario alone, or a group as one workload, every scenario at once, each on
/// worker threads of its own (their progress lines on one board, one line each).
fn run_batch(
    settings: &RunSettings,
    batch: &[Selected],
    feeds: &[(&str, Arc<Feed>)],
    numbering: &Numbering,
) -> Vec<ScenarioReport> {
    let run = |settings: &RunSettings, Selected { entry, url, plan }: &Selected| {
        let mut workload = Workload::from(*entry);
        workload.feed = feeds.iter().find(|(name, _)| *name == entry.name).map(|(_, feed)| Arc::clone(feed));
        settings.run(&workload, plan, &entry.config, url, numbering.position(entry.name))
    };
    if let [one] = batch {
        return vec![run(settings, one)];
    }
    std::thread::scope(|scope| {
        let runs: Vec<_> = batch.iter().map(|selected| (selected, scope.spawn(|| run(settings, selected)))).collect();
        runs.into_iter()
            .map(|(Selected { entry, url, plan }, handle)| {
                handle.join().unwrap_or_else(|_| {
                    let mut report =
                        ScenarioReport::not_started(entry.name, plan.config_report(&entry.config, Some(url)));
                    report.setup_error = Some("its runner thread panicked".to_owned());
                    report
                })
            })
            .collect()
    })
}

/// Every registered scenario, or why the set cannot be used.
fn registered() -> Result<Vec<&'static ScenarioEntry>, HarnessError> {
    let entries = registry::all();
    if entries.is_empty() {
        return Err(HarnessError::NoScenarios);
    }
    if let Some((first, second)) = registry::duplicate_name(&entries) {
        return Err(HarnessError::DuplicateName {
            name: first.name.to_owned(),
            first: format!("{}:{}", first.file, first.line),
            second: format!("{}:{}", second.file, second.line),
        });
    }
    Ok(entries)
}
