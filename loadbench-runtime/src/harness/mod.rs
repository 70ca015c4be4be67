//! The bench binary's entry point, [`Harness`]: reads its command line (`args`), selects and lists
//! scenarios, decides their targets (`targets`, starting a default server process if needed),
//! runs them one batch at a time (`run`, `batches`; a group's scenarios together) through `runner`,
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
#[cfg(feature = "oneshot")]
pub mod oneshot;
mod outcome;
mod process;
mod run;
mod runner;
mod targets;
pub mod watch;

use std::path::PathBuf;
use std::process::{Command, ExitCode};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use clap::Parser;

use self::args::BenchArgs;
use self::run::registered;
use self::targets::DefaultTarget;
use self::watch::Watch;
use crate::cli::{self, Filter, NoMatch, OUTPUT_ENV, Shard, StartAt, interrupt};
use crate::console::{self, err};
use crate::engine::StopFlags;
use crate::exit_code;
use crate::feed::{FeedError, FeedSource};
use crate::http::{ClientOptions, TargetError, TlsSetupError};
use crate::report::{self, LatencyColumns, check, table};

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
    /// A selected scenario asks for HTTP/3 where it cannot run: a bench built without the
    /// `http3` feature, or an `http://` target.
    #[error("{0}")]
    Http3(String),
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
    /// `--remote-write URL` and its companions: live metrics pushed while scenarios run.
    #[cfg(feature = "remote-write")]
    remote_write: Option<cli::RemoteWriteConfig>,
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
            #[cfg(feature = "remote-write")]
            remote_write: None,
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

    #[doc(hidden)]
    /// Stops the runs when `stop` is set, as a first Ctrl-C does (when the harness cannot
    /// install its own handler, say because the program handles signals itself); `cancel`
    /// cancels what is in flight at once, as a second one does.
    pub fn stop_flags(mut self, stop: Arc<AtomicBool>, cancel: Arc<AtomicBool>) -> Harness {
        self.stop = StopFlags { graceful: stop, now: cancel };
        self
    }

    #[doc(hidden)]
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

    #[doc(hidden)]
    /// Waits until `at` before the first scenario starts its load, as `--start-at TIME` does,
    /// so that the shards of a distributed run start together; already past, it starts at once.
    pub fn start_at(mut self, at: StartAt) -> Harness {
        self.start_at = Some(at);
        self
    }

    #[doc(hidden)]
    /// Writes every latency's HdrHistogram into the results, as `--histograms` does (always on
    /// for a shard).
    pub fn histograms(mut self, on: bool) -> Harness {
        self.histograms = on;
        self
    }

    #[doc(hidden)]
    /// Names the run in its results, as `--run-id ID` does (and the `run` label of its live
    /// metrics).
    pub fn run_id(mut self, id: impl Into<String>) -> Harness {
        self.run_id = Some(id.into());
        self
    }

    #[doc(hidden)]
    #[cfg(feature = "remote-write")]
    /// Pushes live metrics while scenarios run, as `--remote-write URL` and its companions do.
    pub fn remote_write(mut self, config: cli::RemoteWriteConfig) -> Harness {
        self.remote_write = Some(config);
        self
    }

    #[doc(hidden)]
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
        // Refused before any load, and before a list: a bench that cannot push should say so.
        match args.remote_write.config() {
            #[cfg(feature = "remote-write")]
            Ok(Some(config)) => self.remote_write = Some(config),
            Ok(_) => {}
            Err(err) => {
                err!("error: {err}");
                return exit_code::USAGE;
            }
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
}
