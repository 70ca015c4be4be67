//! The `cargo loadbench` pipeline: discover → read the baseline → build → list → select → run
//! (in rounds; against several targets, side by side) → thresholds → compare → report → save
//! the baseline → exit code. The tail from the thresholds on, [`finish`], is shared with
//! `cargo loadbench url` ([`crate::oneshot`]).

use std::io::Write;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::SystemTime;

use loadbench::exit_code;
use loadbench::report::table;
use loadbench::report::{MachineInfo, RunReport, ScenarioInfo, ScenarioList, ScenarioReport, WatchReport};
use loadbench::watch::Sampler;

use crate::baseline::{Baseline, Baselines};
use crate::build::{self, Executable};
use crate::cli::Args;
use crate::discover;
use crate::error::Error;
use crate::gate::{self, CliThreshold, GateResult};
use crate::output::{self, Context, Format, OutputSpec};
use crate::run::{self, Outcome, RunOptions};
use crate::settings::{DEFAULT_NOISE_PERCENT, Settings};
use crate::targets::{self, TargetArg, Targets};
use crate::{compare, merge};

/// Environment variable GitHub Actions sets to a file whose Markdown it shows on the run's
/// summary page.
const STEP_SUMMARY_ENV: &str = "GITHUB_STEP_SUMMARY";

/// The gating settings in force: the command line over `[workspace.metadata.loadbench]` over
/// the defaults.
#[derive(Debug)]
pub struct Gating {
    /// `--runs`.
    pub runs: u32,
    /// A fraction: 0.05 for 5 %.
    noise: f64,
    fail_on_regression: bool,
    /// Where baselines are read and saved.
    pub baselines: Baselines,
}

impl Gating {
    /// The settings in force, with baselines under `target_dir` unless `--baseline-dir` is given.
    pub fn resolve(args: &Args, target_dir: &Path, settings: &Settings) -> Gating {
        let dir = args.baseline_dir.clone().unwrap_or_else(|| target_dir.join("loadbench").join("baselines"));
        Gating {
            runs: args.runs.or(settings.runs).unwrap_or(1),
            noise: args.noise_threshold.or(settings.noise_threshold).unwrap_or(DEFAULT_NOISE_PERCENT) / 100.0,
            fail_on_regression: match (args.fail_on_regression, args.no_fail_on_regression) {
                (true, _) => true,
                (_, true) => false,
                _ => settings.fail_on_regression.unwrap_or(false),
            },
            baselines: Baselines::new(dir),
        }
    }
}

/// Runs `cargo loadbench` with `args` and returns the exit code. Errors that stop the run before
/// any result exists are returned as [`Error`]s.
pub fn run(args: &Args) -> Result<u8, Error> {
    let targets = Targets::new(&args.targets)?;
    targets.check_baselines(args.baseline.as_deref(), args.save_baseline.as_deref())?;
    let manifest_path = args.manifest_path.as_deref();
    let workspace = discover::discover(manifest_path, &args.packages, &args.benches)?;
    let gating = Gating::resolve(args, &workspace.target_dir, &workspace.settings);
    // Before building: a missing or broken baseline should cost seconds, not a build and a run.
    let baseline = args.baseline.as_deref().map(|name| gating.baselines.load(name)).transpose()?;
    let executables = build::build(manifest_path, &workspace.targets)?;

    let scratch = tempfile::Builder::new().prefix("cargo-loadbench-").tempdir().map_err(Error::TempDir)?;
    let mut listed = Vec::with_capacity(executables.len());
    for (i, exe) in executables.into_iter().enumerate() {
        // Asked unfiltered, so that a filter matching nothing can list what is available.
        if let Some(list) = run::list(&exe, &scratch.path().join(format!("list-{i}.json")))? {
            listed.push((exe, list));
        }
    }
    let plan = select(&listed, &args.filters, args.exact)?;
    let selected: Vec<&str> = plan.iter().flat_map(|(_, s)| s.iter().map(|info| info.name.as_str())).collect();
    gate::check_scenarios(&args.thresholds, &selected)?;

    if args.list {
        print_list(&plan, &targets, &args.thresholds);
        return Ok(exit_code::OK);
    }

    install_interrupt_handler(false);
    let options = RunOptions { target: None, quiet: args.quiet, watches: args.watched() };
    let (report, code) = run_rounds(&plan, &targets, &options, scratch.path(), gating.runs);
    if report.scenarios.is_empty() && code != exit_code::OK {
        return Ok(code);
    }
    Ok(finish(args, &gating, baseline.as_ref(), report, code))
}

/// The tail of every pipeline (the workspace's scenarios and `url`): thresholds → compare with
/// the baseline → outputs → save the baseline → exit code, which is at least `code`.
pub fn finish(args: &Args, gating: &Gating, baseline: Option<&Baseline>, mut report: RunReport, mut code: u8) -> u8 {
    gate::apply_thresholds(&mut report, &args.thresholds);
    if let Some(first) = targets::reference(&report).map(str::to_owned) {
        targets::compare_with_first(&mut report, &first, gating.noise);
    }
    let mut notes = Vec::new();
    if let Some(baseline) = baseline {
        for scenario in &mut report.scenarios {
            let old = baseline.scenario(scenario);
            scenario.comparison = Some(compare::compare(scenario, old, &baseline.name, gating.noise));
        }
        notes.extend(machine_note(baseline, &report.machine));
    }
    let interrupted = interrupted() || report.scenarios.iter().any(|s| s.interrupted);

    let mut cx = Context::new(&report, gating.runs, args.baseline.as_deref(), gating.fail_on_regression);
    cx.notes = notes;
    code = code.max(write_outputs(args, &cx));

    if let Some(name) = &args.save_baseline {
        if interrupted {
            eprintln!("note: baseline `{name}` not saved: the run was interrupted");
        } else {
            match gating.baselines.save(name, &report) {
                Ok((path, n)) => {
                    let noun = if n == 1 { "scenario" } else { "scenarios" };
                    eprintln!("note: saved baseline `{name}` ({n} {noun}) to {}", path.display());
                }
                Err(err) => {
                    eprintln!("error: cannot save baseline `{name}`: {err}");
                    code = code.max(exit_code::USAGE);
                }
            }
        }
    }

    let gate = GateResult::of(&report, &cx.labels);
    if gate.failed(gating.fail_on_regression) {
        eprintln!("error: {}", gate.describe(gating.fail_on_regression, args.baseline.as_deref()));
        code = code.max(exit_code::GATE_FAILED);
    } else if !gate.regressions.is_empty() {
        eprintln!(
            "note: regressed against baseline `{}`: {}; add --fail-on-regression to fail the run on it",
            args.baseline.as_deref().unwrap_or_default(),
            gate.regressions.join(", ")
        );
    }
    if report.scenarios.iter().any(|s| s.setup_error.is_some()) {
        code = code.max(exit_code::SCENARIO_FAILED);
    }
    if interrupted {
        code = exit_code::INTERRUPTED;
    }
    code
}

/// Prints the `--format` output, writes every `--output` (and `--json`) file and appends the
/// Markdown summary to `GITHUB_STEP_SUMMARY` when it is set. Returns [`exit_code::USAGE`] if
/// anything could not be written (each failure is one `error:` line), else [`exit_code::OK`].
fn write_outputs(args: &Args, cx: &Context) -> u8 {
    let mut code = exit_code::OK;
    match output::render(args.format, cx) {
        // A closed pipe (`| head`) is not worth a panic; the exit code still tells.
        Ok(text) => {
            let _ = std::io::stdout().lock().write_all(text.as_bytes());
        }
        Err(err) => {
            eprintln!("error: cannot render the results as {:?}: {err}", args.format);
            code = exit_code::USAGE;
        }
    }
    let json = args.json.iter().map(|path| OutputSpec { format: Format::Json, path: path.clone() });
    for spec in args.outputs.iter().cloned().chain(json) {
        let written = output::render(spec.format, cx)
            .and_then(|text| output::write_atomic(&spec.path, &text).map_err(|e| e.to_string()));
        if let Err(err) = written {
            eprintln!("error: cannot write {}: {err}", spec.path.display());
            code = exit_code::USAGE;
        }
    }
    if let Some(path) = std::env::var_os(STEP_SUMMARY_ENV).filter(|p| !p.is_empty()).map(PathBuf::from) {
        let written = output::render(Format::Markdown, cx)
            .and_then(|markdown| output::append(&path, &markdown).map_err(|e| e.to_string()));
        if let Err(err) = written {
            eprintln!("error: cannot append to {STEP_SUMMARY_ENV} ({}): {err}", path.display());
            code = exit_code::USAGE;
        }
    }
    code
}

/// A note when the baseline was recorded on a machine that differs in what matters for speed.
fn machine_note(baseline: &Baseline, now: &MachineInfo) -> Option<String> {
    let then = &baseline.report.machine;
    let describe = |m: &MachineInfo| {
        format!("{} {}, {} CPUs, host {}", m.os, m.arch, m.cpus, m.hostname.as_deref().unwrap_or("unknown"))
    };
    let same =
        (then.os == now.os) && (then.arch == now.arch) && (then.cpus == now.cpus) && then.hostname == now.hostname;
    (!same).then(|| {
        format!(
            "Baseline `{}` was recorded on another machine ({}; now {}): differences may not be the code's.",
            baseline.name,
            describe(then),
            describe(now)
        )
    })
}

/// Runs the plan `runs` times, in rounds: every selected scenario once per round, so that drift
/// of the machine over time (a neighbour starting, thermal throttling) touches every scenario
/// alike instead of whichever happened to run last. Returns the merged report and
/// [`exit_code::USAGE`] when a binary rejected its configuration, else [`exit_code::OK`].
fn run_rounds(
    plan: &[(&Executable, Vec<&ScenarioInfo>)],
    targets: &Targets,
    options: &RunOptions,
    scratch: &Path,
    runs: u32,
) -> (RunReport, u8) {
    let mut code = exit_code::OK;
    let report = in_rounds(runs, |round| {
        let (report, round_code) = run_plan(plan, targets, options, scratch, (round, runs));
        code = round_code;
        (report, if round_code == exit_code::OK { ControlFlow::Continue(()) } else { ControlFlow::Break(()) })
    });
    (report, code)
}

/// Runs `round` (numbered from 1) `runs` times, or until Ctrl-C or a round that breaks, and
/// merges the rounds' reports into one; shared by the scenarios and `cargo loadbench url`.
pub fn in_rounds(runs: u32, mut round: impl FnMut(u32) -> (RunReport, ControlFlow<()>)) -> RunReport {
    let started_at = SystemTime::now();
    let mut rounds = Vec::with_capacity(runs as usize);
    for number in 1..=runs {
        if interrupted() {
            break;
        }
        let (report, flow) = round(number);
        rounds.push(report);
        if flow.is_break() {
            break;
        }
    }
    merge::merge(rounds, RunReport::new(started_at))
}

/// Runs each bench binary of `plan` in turn and merges what they report into one report, with
/// `package`, `bench` and the target's name filled in. Against several targets, each scenario
/// runs against each target in turn ([`targets::for_each_pair`]). The exit code is
/// [`exit_code::USAGE`] when a binary rejected its configuration (nothing more runs after that),
/// else [`exit_code::OK`].
fn run_plan(
    plan: &[(&Executable, Vec<&ScenarioInfo>)],
    targets: &Targets,
    options: &RunOptions,
    scratch: &Path,
    (round, runs): (u32, u32),
) -> (RunReport, u8) {
    let started_at = SystemTime::now();
    let mut merged: Option<RunReport> = None;
    let mut scenarios = Vec::new();
    let mut code = exit_code::OK;
    // No `--target`: each scenario's own; one: that one, unnamed or not.
    let run_against: Vec<Option<&TargetArg>> =
        if targets.list().is_empty() { vec![None] } else { targets.list().iter().map(Some).collect() };
    let of = if runs > 1 { format!(" [run {round} of {runs}]") } else { String::new() };
    let mut started = 0;
    for (i, (exe, selected)) in plan.iter().enumerate() {
        if interrupted() {
            eprintln!("note: interrupted; {} bench target(s) not started", plan.len() - i);
            break;
        }
        if !options.quiet && !targets.side_by_side() {
            eprintln!("     Running {exe} ({}){of}", exe.path.display(), exe = exe.target);
        }
        // Watched processes are sampled per scenario, and side by side each scenario runs against
        // each target in turn, so each scenario gets a start of its own binary; otherwise one
        // start runs them all.
        let batches: Vec<Vec<&ScenarioInfo>> = if options.watches.is_empty() && !targets.side_by_side() {
            vec![selected.clone()]
        } else {
            selected.iter().map(|info| vec![*info]).collect()
        };
        let flow = targets::for_each_pair(&batches, &run_against, |batch, target| {
            if interrupted() {
                return ControlFlow::Break(());
            }
            let mut options = options.clone();
            if let Some(target) = target {
                options.target = Some(target.url.clone());
            }
            let name = target.and_then(|t| t.name.clone());
            if !options.quiet && targets.side_by_side() {
                let scenario = batch.iter().map(|s| s.name.as_str()).collect::<Vec<_>>().join(", ");
                let against = target.map_or_else(String::new, |t| format!(" against {} ({})", t.label(), t.url));
                eprintln!("     Running {exe} {scenario}{against}{of}", exe = exe.target);
            }
            started += 1;
            let names: Vec<String> = batch.iter().map(|s| s.name.clone()).collect();
            let samplers: Vec<Sampler> = options.watches.iter().map(Sampler::start).collect();
            let output = scratch.join(format!("run-{round}-{i}-{started}.json"));
            let outcome = run::run(exe, &names, &options, &output);
            let watched: Vec<WatchReport> = samplers.into_iter().map(Sampler::finish).collect();
            match outcome {
                Outcome::Finished(mut report) => {
                    for scenario in &mut report.scenarios {
                        scenario.package = Some(exe.target.package.clone());
                        scenario.bench = Some(exe.target.bench.clone());
                        scenario.target_name.clone_from(&name);
                        // After what the binary watched itself (`Harness::watch`).
                        scenario.watched.extend(watched.iter().cloned());
                    }
                    scenarios.append(&mut report.scenarios);
                    // The first binary's header (tool, machine, start time) stands for the run.
                    merged.get_or_insert(report);
                }
                Outcome::UsageError => {
                    // The binary has printed the reason; say which binary, and run nothing more:
                    // the same mistake would most likely stop the others too.
                    eprintln!("error: {} rejected its configuration; see above", exe.target);
                    code = exit_code::USAGE;
                    return ControlFlow::Break(());
                }
                Outcome::CouldNotRun(reason) => {
                    eprintln!("error: {}: {reason}; its scenarios did not run", exe.target);
                    scenarios.extend(batch.iter().map(|info| {
                        let mut report = did_not_run(exe, info, &options, &reason);
                        report.target_name.clone_from(&name);
                        report
                    }));
                }
            }
            ControlFlow::Continue(())
        });
        if flow.is_break() {
            break;
        }
    }
    let mut report = merged.unwrap_or_else(|| RunReport::new(started_at));
    report.scenarios = scenarios;
    (report, code)
}

/// The scenarios of each bench binary that the filters select, in binary order; binaries with
/// none are left out. A scenario matches when its name contains any filter (equals one, with
/// `exact`), as in the bench binaries themselves; no filter selects everything.
fn select<'a>(
    listed: &'a [(Executable, ScenarioList)],
    filters: &[String],
    exact: bool,
) -> Result<Vec<(&'a Executable, Vec<&'a ScenarioInfo>)>, Error> {
    let mut available: Vec<&str> =
        listed.iter().flat_map(|(_, list)| &list.scenarios).map(|s| s.name.as_str()).collect();
    if available.is_empty() {
        let targets = listed.iter().map(|(exe, _)| exe.target.to_string()).collect::<Vec<_>>();
        let targets = if targets.is_empty() { "any bench target".to_owned() } else { targets.join(", ") };
        return Err(Error::NoScenarios { targets });
    }
    let matches = |name: &str| {
        filters.is_empty() || filters.iter().any(|f| if exact { name == f } else { name.contains(f.as_str()) })
    };
    let plan: Vec<_> = listed
        .iter()
        .map(|(exe, list)| (exe, list.scenarios.iter().filter(|s| matches(&s.name)).collect::<Vec<_>>()))
        .filter(|(_, selected)| !selected.is_empty())
        .collect();
    if plan.is_empty() {
        available.sort_unstable();
        available.dedup();
        return Err(Error::NoMatch {
            filters: filters.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", "),
            available: available.join(", "),
        });
    }
    Ok(plan)
}

/// `basic/api: hello — concurrency 20, count 500, timeout 30s`, one line per scenario (and
/// target, `hello [fast]`, side by side).
fn print_list(plan: &[(&Executable, Vec<&ScenarioInfo>)], targets: &Targets, thresholds: &[CliThreshold]) {
    let mut out = String::new();
    for (exe, scenarios) in plan {
        for info in scenarios {
            let mut config = info.config.clone();
            // Show the target and thresholds the run would use.
            gate::add_to(&mut config, &info.name, thresholds);
            if targets.list().is_empty() {
                out.push_str(&format!("{}: {} — {}\n", exe.target, info.name, table::describe_config(&config)));
            }
            for target in targets.list() {
                config.target = Some(target.url.clone());
                let name = match &target.name {
                    Some(name) if targets.side_by_side() => format!("{} [{name}]", info.name),
                    _ => info.name.clone(),
                };
                out.push_str(&format!("{}: {name} — {}\n", exe.target, table::describe_config(&config)));
            }
        }
    }
    let _ = std::io::stdout().lock().write_all(out.as_bytes());
}

/// The report entry for a scenario whose binary died before reporting.
fn did_not_run(exe: &Executable, info: &ScenarioInfo, options: &RunOptions, reason: &str) -> ScenarioReport {
    let mut config = info.config.clone();
    if let Some(target) = &options.target {
        config.target = Some(target.clone());
    }
    let mut report = ScenarioReport::not_started(info.name.clone(), config);
    report.bench = Some(exe.target.bench.clone());
    report.package = Some(exe.target.package.clone());
    report.setup_error = Some(reason.to_owned());
    report
}

/// Ctrl-C presses seen since the handler was installed.
static INTERRUPTS: AtomicU32 = AtomicU32::new(0);

/// Set by the first Ctrl-C: the stop flag of a run made in this process (`url`).
static STOP: LazyLock<Arc<AtomicBool>> = LazyLock::new(Arc::default);

/// Keeps the first Ctrl-C from killing us while a bench binary runs.
///
/// The binary is in our process group, so it receives the same SIGINT, stops starting
/// iterations and writes what it measured; we stay alive to print that. A run in this process
/// stops through [`stop_flag`], and `announce` says so on the first press, as a bench binary
/// does. A second Ctrl-C means "quit now", for us as for the binary.
pub fn install_interrupt_handler(announce: bool) {
    let installed = ctrlc::set_handler(move || {
        if INTERRUPTS.fetch_add(1, Ordering::SeqCst) > 0 {
            std::process::exit(i32::from(exit_code::INTERRUPTED));
        }
        STOP.store(true, Ordering::SeqCst);
        if announce {
            eprintln!("interrupted: finishing in-flight requests; press Ctrl-C again to quit");
        }
    });
    if let Err(err) = installed {
        eprintln!("warning: cannot handle Ctrl-C ({err}); an interrupted run will show no results");
    }
}

/// Whether Ctrl-C was pressed.
pub fn interrupted() -> bool {
    INTERRUPTS.load(Ordering::SeqCst) > 0
}

/// The flag the first Ctrl-C sets, for a run made in this process.
pub fn stop_flag() -> Arc<AtomicBool> {
    Arc::clone(&STOP)
}

#[cfg(test)]
// A failed expectation is a failed test; `expect` says which.
#[allow(clippy::expect_used)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::discover::BenchTarget;
    use loadbench::report::ConfigReport;

    fn exe(bench: &str, scenarios: &[&str]) -> (Executable, ScenarioList) {
        let target = BenchTarget {
            package: "shop".into(),
            package_id: cargo_metadata::PackageId { repr: "shop".into() },
            bench: bench.into(),
            package_root: PathBuf::from("/shop"),
        };
        let config = ConfigReport { concurrency: 2, count: Some(10), timeout_ms: 1_000, ..ConfigReport::default() };
        let scenarios = scenarios
            .iter()
            .map(|name| ScenarioInfo {
                name: (*name).into(),
                module_path: bench.into(),
                file: format!("benches/{bench}.rs"),
                line: 1,
                config: config.clone(),
            })
            .collect();
        (
            Executable { target, path: PathBuf::from(format!("/bin/{bench}")) },
            ScenarioList { schema_version: 1, scenarios },
        )
    }

    fn names(plan: &[(&Executable, Vec<&ScenarioInfo>)]) -> Vec<String> {
        plan.iter().flat_map(|(exe, s)| s.iter().map(move |s| format!("{}/{}", exe.target.bench, s.name))).collect()
    }

    #[test]
    fn filters_select_across_binaries() {
        let listed = [exe("api", &["hello", "login", "checkout"]), exe("admin", &["hello_admin"])];
        let all = select(&listed, &[], false).expect("all");
        assert_eq!(names(&all), ["api/hello", "api/login", "api/checkout", "admin/hello_admin"]);
        let some = select(&listed, &["hello".into()], false).expect("substring");
        assert_eq!(names(&some), ["api/hello", "admin/hello_admin"]);
        let exact = select(&listed, &["hello".into(), "login".into()], true).expect("exact");
        assert_eq!(names(&exact), ["api/hello", "api/login"]);
    }

    #[test]
    fn a_filter_matching_nothing_lists_what_exists() {
        let listed = [exe("api", &["login", "hello"]), exe("admin", &["hello"])];
        let err = select(&listed, &["xyz".into()], false).expect_err("no match");
        assert_eq!(err.to_string(), "no scenario matches `xyz`; available: hello, login");
    }

    #[test]
    fn binaries_without_scenarios_are_an_error() {
        let listed = [exe("api", &[])];
        let err = select(&listed, &[], false).expect_err("no scenarios");
        assert_eq!(err.to_string(), "no #[loadbench::scenario] functions in shop/api");
        let err = select(&[], &[], false).expect_err("no loadbench binaries");
        assert_eq!(err.to_string(), "no #[loadbench::scenario] functions in any bench target");
    }
}
