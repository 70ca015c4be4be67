//! The bench binary's entry point: reads its command line, runs the selected scenarios and
//! reports, either to the terminal or to `cargo loadbench`.

use std::path::PathBuf;
use std::process::{Command, ExitCode};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::SystemTime;

use clap::Parser;

use crate::config::{Load, ScenarioConfig};
use crate::executor::{self, RunPlan};
use crate::process::ServerProcess;
use crate::registry::{self, ScenarioEntry, Workload};
use crate::report::{
    self, ConfigReport, RateReport, RunReport, SCHEMA_VERSION, ScenarioInfo, ScenarioList, ScenarioReport, WatchReport,
};
use crate::scale::{self, Size};
use crate::target::{Target, TargetError};
use crate::watch::{Sampler, Watch};
use crate::{exit_code, limits, table, threshold};

/// Environment variable naming the file where a bench binary writes its results (or its list,
/// with `--list`) for `cargo loadbench`; when set, the binary prints no table of its own.
pub const OUTPUT_ENV: &str = "LOADBENCH_OUTPUT";

/// Environment variable giving the target base URL when `--target` is not passed.
pub const TARGET_ENV: &str = "LOADBENCH_TARGET";

/// Environment variable giving the scale factor when `--scale` is not passed: every scenario
/// runs at this fraction of its attribute's load (users, count, duration, rate), as CI runs the
/// examples.
pub const SCALE_ENV: &str = "LOADBENCH_SCALE";

/// Command line of a bench binary (`cargo bench --bench NAME -- …`, or run by `cargo loadbench`).
#[derive(Debug, Parser)]
#[command(about = "Runs the loadbench scenarios of this bench target.", disable_version_flag = true)]
struct BenchArgs {
    /// Run only scenarios whose name contains one of these strings.
    filters: Vec<String>,
    /// Match filters against whole scenario names.
    #[arg(long)]
    exact: bool,
    /// List the scenarios instead of running them.
    #[arg(long)]
    list: bool,
    /// Run the full load; passed by `cargo bench`. Without it (as under `cargo test --benches`)
    /// each scenario runs once, as a smoke test.
    #[arg(long)]
    bench: bool,
    /// Base URL of the server under test; overrides LOADBENCH_TARGET and the attribute.
    #[arg(long, value_name = "URL")]
    target: Option<String>,
    /// Run every scenario at this fraction (above 0, at most 1) of its load: users, count,
    /// duration and rate, each at least 1 (100 ms); overrides LOADBENCH_SCALE. Without --bench,
    /// the scaled load replaces the single smoke-test iteration.
    #[arg(long, value_name = "FACTOR", value_parser = scale::parse)]
    scale: Option<f64>,
    /// Also write the results as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// No progress output.
    #[arg(long, short)]
    quiet: bool,
    // Passed by cargo's test harness conventions; accepted and ignored.
    #[arg(long, hide = true)]
    nocapture: bool,
    #[arg(long, hide = true)]
    show_output: bool,
}

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
    #[error("no scenario matches {filters}; available: {available}")]
    NoMatch {
        /// The filters, quoted.
        filters: String,
        /// Every scenario name.
        available: String,
    },
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
    /// The embedded server given to [`Harness::default_target`] failed to start.
    #[error("the default target failed to start: {0}")]
    DefaultTarget(std::io::Error),
    /// `LOADBENCH_SCALE` is not a scale factor.
    #[error("LOADBENCH_SCALE: {0}")]
    Scale(String),
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
    stop: Arc<AtomicBool>,
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
            .finish_non_exhaustive()
    }
}

/// Where the default target comes from.
enum DefaultTarget {
    /// A function that starts a server (in this process, say) and returns its URL.
    Start(Box<dyn FnOnce() -> std::io::Result<String>>),
    /// A server process to start, watch as `name` and stop at the end.
    Process { name: String, command: Box<Command> },
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
            stop: Arc::new(AtomicBool::new(false)),
        }
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
    /// instead of one per CPU, as `LOADBENCH_THREADS` does.
    pub fn worker_threads(mut self, threads: usize) -> Harness {
        self.worker_threads = Some(threads.max(1));
        self
    }

    /// Shows or hides progress output.
    pub fn progress(mut self, show: bool) -> Harness {
        self.progress = show;
        self
    }

    /// Reads the command line, runs, reports, and returns the exit code: 0 when every selected
    /// scenario ran (request errors are counted, not fatal), 1 when a scenario missed one of its
    /// `thresholds(…)`, 2 for a usage or configuration error, 3 when a scenario could not run,
    /// 130 when stopped by Ctrl-C (the partial results are still reported).
    pub fn run(mut self) -> ExitCode {
        let args = match BenchArgs::try_parse_from(std::env::args_os()) {
            Ok(args) => args,
            Err(err) => return report_usage_error(&err),
        };
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
        let output = std::env::var_os(OUTPUT_ENV).map(PathBuf::from);

        if args.list {
            return self.list(output);
        }

        // First Ctrl-C: stop starting iterations and report what ran. Second: leave at once.
        let stop = Arc::clone(&self.stop);
        let _ = ctrlc::set_handler(move || {
            if stop.swap(true, Ordering::Relaxed) {
                std::process::exit(130);
            }
            eprintln!("interrupted: finishing in-flight requests; press Ctrl-C again to quit");
        });

        let smoke = self.smoke;
        let report = match self.run_report() {
            Ok(report) => report,
            Err(err) => {
                eprintln!("error: {err}");
                return ExitCode::from(exit_code::USAGE);
            }
        };
        for path in output.iter().chain(args.json.iter()) {
            if let Err(err) = report::write_json_atomic(path, &report) {
                eprintln!("error: cannot write results to {}: {err}", path.display());
                return ExitCode::from(exit_code::USAGE);
            }
        }
        if output.is_none() {
            print!("{}", table::render(&report));
            let failed: Vec<&str> =
                report.scenarios.iter().filter(|s| threshold::any_failed(s)).map(|s| s.name.as_str()).collect();
            if !failed.is_empty() {
                eprintln!("error: thresholds failed: {} (see above)", failed.join(", "));
            }
        }
        if smoke {
            // Under `cargo test --benches` this run is a test: each scenario must have run and
            // succeeded every iteration, and one bounded by a count must have run exactly that
            // many (one, unless scaled), or the test fails.
            let broken: Vec<&str> = report
                .scenarios
                .iter()
                .filter(|s| s.ok == 0 || s.failed > 0 || s.config.count.is_some_and(|count| s.iterations != count))
                .map(|s| s.name.as_str())
                .collect();
            if !broken.is_empty() {
                let size = match report.scenarios.iter().find_map(|s| s.config.scale) {
                    Some(factor) => format!("at scale {factor}"),
                    None => "one iteration each".to_owned(),
                };
                eprintln!("error: smoke run failed ({size}, without --bench): {}", broken.join(", "));
                return ExitCode::from(exit_code::GATE_FAILED);
            }
        }
        ExitCode::from(report_exit_code(&report))
    }

    fn list(self, output: Option<PathBuf>) -> ExitCode {
        let entries = match registered() {
            Ok(entries) => entries,
            Err(err) => {
                eprintln!("error: {err}");
                return ExitCode::from(exit_code::USAGE);
            }
        };
        let selected = registry::select(&entries, &self.filters, self.exact);
        let list = ScenarioList {
            schema_version: SCHEMA_VERSION,
            scenarios: selected
                .iter()
                .map(|e| ScenarioInfo {
                    name: e.name.to_owned(),
                    module_path: e.module_path.to_owned(),
                    file: e.file.to_owned(),
                    line: e.line,
                    config: config_report(&e.config, &Size::declared(&e.config), None, e.config.target),
                })
                .collect(),
        };
        match output {
            Some(path) => {
                if let Err(err) = report::write_json_atomic(&path, &list) {
                    eprintln!("error: cannot write the scenario list to {}: {err}", path.display());
                    return ExitCode::from(exit_code::USAGE);
                }
            }
            None => {
                for s in &list.scenarios {
                    println!("{}: {}", s.name, table::describe_config(&s.config));
                }
            }
        }
        ExitCode::SUCCESS
    }

    /// Runs the selected scenarios and returns the report, without printing a table.
    ///
    /// Scenarios that cannot run (their target does not resolve, too few file descriptors) are in
    /// the report with [`ScenarioReport::setup_error`] set; the others still run.
    pub fn run_report(mut self) -> Result<RunReport, HarnessError> {
        let entries = registered()?;
        let selected = registry::select(&entries, &self.filters, self.exact);
        if selected.is_empty() {
            return Err(HarnessError::NoMatch {
                filters: self.filters.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", "),
                available: entries.iter().map(|e| e.name).collect::<Vec<_>>().join(", "),
            });
        }

        // Decide every scenario's target before running any, so a configuration mistake costs
        // no load-test time.
        let env_target = std::env::var(TARGET_ENV).ok().filter(|t| !t.is_empty());
        let scale = match self.scale {
            Some(factor) => Some(factor),
            None => match std::env::var(SCALE_ENV).ok().filter(|s| !s.trim().is_empty()) {
                Some(text) => Some(scale::parse(&text).map_err(HarnessError::Scale)?),
                None => None,
            },
        };
        let mut fallback: Option<String> = None;
        // The default target's process, when it is one: it lives until the run's end.
        let mut server: Option<ServerProcess> = None;
        let mut targets = Vec::with_capacity(selected.len());
        for entry in &selected {
            let url = match (&self.target, &env_target, entry.config.target) {
                (Some(t), _, _) | (None, Some(t), _) => t.clone(),
                (None, None, Some(t)) => t.to_owned(),
                (None, None, None) => match (&fallback, self.default_target.take()) {
                    (Some(url), _) => url.clone(),
                    (None, Some(DefaultTarget::Start(start))) => {
                        let url = start().map_err(HarnessError::DefaultTarget)?;
                        fallback = Some(url.clone());
                        url
                    }
                    (None, Some(DefaultTarget::Process { name, command })) => {
                        let process = ServerProcess::start(*command).map_err(HarnessError::DefaultTarget)?;
                        self.watches.push(Watch { name, pid: process.pid() });
                        let url = process.url().to_owned();
                        server = Some(process);
                        fallback = Some(url.clone());
                        url
                    }
                    (None, None) => return Err(HarnessError::NoTarget { scenario: entry.name.to_owned() }),
                },
            };
            Target::check_syntax(&url)?;
            targets.push(url);
        }

        let file_limit = limits::raise_open_files();
        let started_at = SystemTime::now();
        let settings = RunSettings {
            smoke: self.smoke,
            scale,
            progress: self.progress,
            worker_threads: self.worker_threads,
            stop: Arc::clone(&self.stop),
        };
        let mut scenarios = Vec::with_capacity(selected.len());
        for batch in batches(selected.into_iter().zip(targets).collect()) {
            if self.stop.load(Ordering::Relaxed) {
                break;
            }
            // Sampled per batch: the scenarios of a group share one server, busy with all of them.
            let samplers: Vec<Sampler> = self.watches.iter().map(Sampler::start).collect();
            let reports: Vec<ScenarioReport> = match batch.as_slice() {
                [(entry, url)] => vec![settings.run_one(entry, url, file_limit)],
                // A group runs as one workload: every scenario at once, each on worker threads
                // of its own. Progress bars of several scenarios would overwrite each other.
                group => {
                    let quiet = RunSettings { progress: false, ..settings.clone() };
                    std::thread::scope(|scope| {
                        let runs: Vec<_> = group
                            .iter()
                            .map(|(entry, url)| {
                                let quiet = &quiet;
                                (entry, scope.spawn(move || quiet.run_one(entry, url, file_limit)))
                            })
                            .collect();
                        runs.into_iter()
                            .map(|(entry, run)| {
                                run.join().unwrap_or_else(|_| {
                                    let size = Size { concurrency: 0, ..Size::declared(&entry.config) };
                                    let mut report = ScenarioReport::not_started(
                                        entry.name,
                                        config_report(&entry.config, &size, scale, Some(url_of(group, entry))),
                                    );
                                    report.setup_error = Some("its runner thread panicked".to_owned());
                                    report
                                })
                            })
                            .collect()
                    })
                }
            };
            let watched: Vec<WatchReport> = samplers.into_iter().map(Sampler::finish).collect();
            for (mut report, (entry, _)) in reports.into_iter().zip(&batch) {
                if report.setup_error.is_none() {
                    report.watched.clone_from(&watched);
                }
                // A smoke run (one iteration, one user) says nothing about latency or throughput.
                if !self.smoke {
                    report.thresholds = threshold::evaluate(&report);
                }
                if let Some(err) = &report.setup_error {
                    eprintln!("error: scenario `{}` could not run: {err}", entry.name);
                }
                scenarios.push(report);
            }
        }
        // Stopped only now that every scenario has run.
        drop(server);
        let mut report = RunReport::new(started_at);
        report.scenarios = scenarios;
        Ok(report)
    }
}

/// What running one scenario needs from the [`Harness`]; `Sync`, so that the scenarios of a
/// group can run on threads of their own at the same time.
#[derive(Debug, Clone)]
pub(crate) struct RunSettings {
    pub(crate) smoke: bool,
    pub(crate) scale: Option<f64>,
    pub(crate) progress: bool,
    pub(crate) worker_threads: Option<usize>,
    pub(crate) stop: Arc<AtomicBool>,
}

impl RunSettings {
    fn run_one(&self, entry: &'static ScenarioEntry, url: &str, file_limit: Option<u64>) -> ScenarioReport {
        self.run_workload(&Workload::from(entry), &entry.config, url, file_limit)
    }

    /// Runs `workload` with the load of `config` against `url` and reports it: the one path from
    /// a load to a [`ScenarioReport`], for registered scenarios and one-shot runs alike.
    pub(crate) fn run_workload(
        &self,
        entry: &Workload,
        config: &ScenarioConfig,
        url: &str,
        file_limit: Option<u64>,
    ) -> ScenarioReport {
        // A smoke run is one iteration of the closed model, whatever the attribute asks, unless a
        // scale asks for more.
        let one = self.smoke && self.scale.is_none();
        let size = match self.scale {
            _ if one => Size::smoke(),
            Some(factor) => Size::declared(config).scaled(factor),
            None => Size::declared(config),
        };
        let Size { concurrency, load, rate, warmup, stages, rate_stages } = size;
        let timeout = config.timeout();
        let mut report = ScenarioReport::not_started(&*entry.name, config_report(config, &size, self.scale, Some(url)));
        if let Err(needed) = limits::check_concurrency(concurrency, file_limit) {
            report.setup_error = Some(needed);
            return report;
        }
        let target = match Target::resolve(url) {
            Ok(target) => target,
            Err(err) => {
                report.setup_error = Some(err.to_string());
                return report;
            }
        };
        let plan = RunPlan {
            concurrency,
            load,
            rate,
            rate_stages,
            stages,
            warmup,
            think_time: if one { None } else { config.think_time },
            timeout,
            target,
            threads: match self.worker_threads {
                Some(n) => n.min(concurrency.max(1) as usize),
                None => executor::worker_threads(concurrency),
            },
            show_progress: self.progress,
        };
        match executor::execute(entry, &plan, &self.stop) {
            Ok(run) => {
                let stats = run.stats;
                report.duration_us = u64::try_from(run.wall.as_micros()).unwrap_or(u64::MAX);
                report.interrupted = run.interrupted;
                report.generator = Some(run.generator);
                report.failed = stats.errors.total();
                report.ok = stats.ok;
                report.iterations = stats.ok + report.failed;
                report.errors = stats.errors;
                report.latency_us = stats.latency_report();
                report.http = stats.http.clone();
                report.rps = if run.wall.is_zero() { 0.0 } else { report.iterations as f64 / run.wall.as_secs_f64() };
                report.dropped = stats.dropped;
                report.warmup_iterations = run.warmup_iterations;
                report.timeline = stats.timeline_report();
                report.steps = stats.steps_report();
                report.user_setup = entry.setup.map(|_| stats.setup.clone());
                report.user_teardown = entry.teardown.map(|_| stats.teardown.clone());
                let requested = match (rate, rate_stages) {
                    (Some(rate), _) => Some(rate.per_second()),
                    (None, []) => None,
                    // A ramp asks for its mean rate: all its arrivals over its length.
                    (None, stages) => {
                        let length: f64 = stages.iter().map(|s| s.duration.as_secs_f64()).sum();
                        Some(crate::config::rate_stages_arrivals(stages) / length.max(f64::MIN_POSITIVE))
                    }
                };
                report.rate = requested.zip(run.schedule).map(|(requested, schedule)| RateReport {
                    requested,
                    achieved: if schedule.is_zero() { 0.0 } else { report.iterations as f64 / schedule.as_secs_f64() },
                });
                if self.progress {
                    // One example per kind, so a wall of failures comes with a reason.
                    for (kind, message) in &stats.first_errors {
                        eprintln!("{}: first {kind} error: {message}", entry.name);
                    }
                }
            }
            Err(err) => report.setup_error = Some(format!("cannot start worker threads: {err}")),
        }
        report
    }
}

/// The selected scenarios in runs: each alone, except that the scenarios of one `group` run
/// together, at the place of the first of them.
fn batches(selected: Vec<(&'static ScenarioEntry, String)>) -> Vec<Vec<(&'static ScenarioEntry, String)>> {
    let mut batches: Vec<Vec<(&'static ScenarioEntry, String)>> = Vec::new();
    for (entry, url) in selected {
        let joins = entry.config.group.and_then(|group| {
            batches.iter_mut().find(|b| b.first().is_some_and(|(first, _)| first.config.group == Some(group)))
        });
        match joins {
            Some(batch) => batch.push((entry, url)),
            None => batches.push(vec![(entry, url)]),
        }
    }
    batches
}

/// The URL `entry` runs against within its batch.
fn url_of<'a>(batch: &'a [(&'static ScenarioEntry, String)], entry: &ScenarioEntry) -> &'a str {
    batch.iter().find(|(e, _)| std::ptr::eq(*e, entry)).map_or("", |(_, url)| url.as_str())
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

/// Reports a command-line error the way loadbench reports every usage error: one line naming the
/// problem, exit code 2. (`--help` and `--version` also arrive here, and print in full.)
#[doc(hidden)]
pub fn report_usage_error(err: &clap::Error) -> ExitCode {
    if !err.use_stderr() {
        let _ = err.print();
        return ExitCode::SUCCESS;
    }
    // clap adds a tip and the usage; the first line already names the flag and the problem.
    let message = err.to_string();
    let mut lines = message.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or("error: invalid arguments");
    // "the following required arguments were not provided:" names them on the lines below.
    match lines.next().filter(|_| first.ends_with(':')) {
        Some(named) => eprintln!("{first} {named} (see --help)"),
        None => eprintln!("{first} (see --help)"),
    }
    ExitCode::from(exit_code::USAGE)
}

/// The exit code a finished run earns: 130 if it was interrupted, 3 if any scenario could not
/// run, 1 if a threshold failed, else 0.
pub(crate) fn report_exit_code(report: &RunReport) -> u8 {
    if report.scenarios.iter().any(|s| s.interrupted) {
        exit_code::INTERRUPTED
    } else if report.scenarios.iter().any(|s| s.setup_error.is_some()) {
        exit_code::SCENARIO_FAILED
    } else if report.scenarios.iter().any(threshold::any_failed) {
        exit_code::GATE_FAILED
    } else {
        exit_code::OK
    }
}

/// The report of `config` as run: at `size` (which a smoke run or a `scale` lowers) and with
/// the `target` in force.
fn config_report(config: &ScenarioConfig, size: &Size, scale: Option<f64>, target: Option<&str>) -> ConfigReport {
    let Size { concurrency, load, rate, warmup, stages, rate_stages } = *size;
    let timeout = config.timeout();
    let millis = |d: std::time::Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    ConfigReport {
        concurrency,
        rate: rate.map(|r| r.per_second()),
        count: match load {
            Load::Count(n) => Some(n),
            Load::Duration(_) => None,
        },
        duration_ms: match load {
            Load::Count(_) => None,
            Load::Duration(d) => Some(millis(d)),
        },
        timeout_ms: millis(timeout),
        think_time_ms: config.think_time.map(|t| (millis(t.min), millis(t.max))),
        // A smoke run (one iteration, `load` lowered to a count) runs no ramp.
        stages: stages.iter().map(|s| (millis(s.duration), s.target)).collect(),
        rate_stages: rate_stages.iter().map(|s| (millis(s.duration), s.rate)).collect(),
        warmup_count: match warmup {
            Some(Load::Count(n)) => Some(n),
            _ => None,
        },
        warmup_ms: match warmup {
            Some(Load::Duration(d)) => Some(millis(d)),
            _ => None,
        },
        target: target.map(str::to_owned),
        thresholds: config.thresholds.to_vec(),
        group: config.group.map(str::to_owned),
        scale,
    }
}
