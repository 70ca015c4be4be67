//! The tail every command shares once it has results, whether from a workspace's bench binaries
//! ([`crate::dispatch::workspace`]) or from `cargo loadbench url` ([`crate::dispatch::url`]):
//! thresholds → comparison with the first server (side by side) and with the baseline → outputs
//! → saving the baseline → exit code.

use std::path::{Path, PathBuf};

use cargo_loadbench::Results;
use loadbench::cli::interrupt;
use loadbench::console::err;
use loadbench::exit_code;
use loadbench::report::{GateReport, LatencyColumns, MachineInfo, check};

use crate::baseline::{Baseline, Baselines};
use crate::cli::Args;
use crate::error::Error;
use crate::gate::{self, GateResult};
use crate::output::{self, Context, Format, OutputSpec};
use crate::settings::{DEFAULT_NOISE_PERCENT, Settings};
use crate::{compare, plausible, targets};

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
    /// `--baseline NAME`, or for saved results the baseline they were compared with.
    pub baseline_name: Option<String>,
    /// `--fail-on-warning`.
    pub fail_on_warning: bool,
    /// `--allow-inconclusive`.
    pub allow_inconclusive: bool,
    /// `--allow-failures`.
    pub allow_failures: bool,
    /// `--no-gate`.
    pub no_gate: bool,
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
            baseline_name: args.baseline.clone(),
            fail_on_warning: args.fail_on_warning,
            allow_inconclusive: args.allow_inconclusive,
            allow_failures: args.allow_failures,
            no_gate: args.no_gate,
        }
    }

    /// For saved results (`cargo loadbench report`): the settings their verdict was made with,
    /// where the command line does not say otherwise, so that a failed run renders failed again.
    pub fn saved(mut self, args: &Args, saved: Option<&GateReport>) -> Gating {
        let Some(saved) = saved else { return self };
        if !args.fail_on_regression && !args.no_fail_on_regression {
            self.fail_on_regression = saved.fail_on_regression;
        }
        if self.baseline_name.is_none() {
            self.baseline_name.clone_from(&saved.baseline);
        }
        self.fail_on_warning |= saved.fail_on_warning;
        self.allow_inconclusive |= saved.allow_inconclusive;
        self.allow_failures |= saved.allow_failures;
        self.no_gate |= saved.no_gate;
        self
    }

    /// The flag that lets a verdict pass: `--no-gate`, else `flag` when `allowed`.
    fn allowed_by(&self, allowed: bool, flag: &'static str) -> Option<&'static str> {
        if self.no_gate { Some("--no-gate") } else { allowed.then_some(flag) }
    }

    /// The settings as the results record them ([`Results::gate`]).
    fn report(&self) -> GateReport {
        GateReport {
            baseline: self.baseline_name.clone(),
            fail_on_regression: self.fail_on_regression,
            fail_on_warning: self.fail_on_warning,
            allow_inconclusive: self.allow_inconclusive,
            allow_failures: self.allow_failures,
            no_gate: self.no_gate,
        }
    }

    /// The noise threshold, a fraction: 0.05 for 5 %.
    pub fn noise(&self) -> f64 {
        self.noise
    }

    /// The settings of `cargo loadbench ab`: its rounds are the runs, and a regression against the
    /// base fails the run unless `--no-fail-on-regression` says otherwise (it is what the command
    /// is for). No baseline is read or saved.
    pub fn for_ab(args: &Args, target_dir: &Path, settings: &Settings, rounds: u32) -> Gating {
        Gating {
            runs: rounds,
            fail_on_regression: !args.no_fail_on_regression,
            ..Gating::resolve(args, target_dir, settings)
        }
    }
}

/// Checks, before any build or load, that every file the run will write can be written: each
/// `--output` and `--json` file, and the baseline `--save-baseline` saves; and that none of the
/// outputs is the baseline `--baseline` compares with ([`check_not_inputs`]).
pub fn check_outputs(args: &Args, gating: &Gating) -> Result<(), Error> {
    let compared = args.baseline.as_deref().map(|name| gating.baselines.path(name));
    check_not_inputs(args, compared.as_slice())?;
    let baseline = args.save_baseline.as_deref().map(|name| gating.baselines.path(name));
    for path in output_paths(args).chain(baseline) {
        loadbench::report::check_writable(&path).map_err(|reason| Error::Output { path, reason })?;
    }
    Ok(())
}

/// Refuses an `--output` or `--json` file that is one of `inputs` (the files `report` and `merge`
/// read, the baseline compared with), by any name: the same file through a symlink, a hard link
/// or `..` ([`loadbench::report::same_file`]). Writing it would replace the input with the
/// results, and a shard of a distributed run cannot be made again. (`--save-baseline` over the
/// baseline compared with is how a baseline is updated: it keeps what it does not replace.)
pub fn check_not_inputs(args: &Args, inputs: &[PathBuf]) -> Result<(), Error> {
    for path in output_paths(args) {
        if let Some(input) = inputs.iter().find(|input| loadbench::report::same_file(&path, input)) {
            let named = if *input == path { String::new() } else { format!(" ({})", input.display()) };
            let reason =
                format!("it is also an input of this command{named}, which it would replace: name another file");
            return Err(Error::Output { path, reason });
        }
    }
    Ok(())
}

/// Every `--output` file, then the `--json` file.
fn output_paths(args: &Args) -> impl Iterator<Item = PathBuf> + '_ {
    args.outputs.iter().map(|o| o.path.clone()).chain(args.json.iter().cloned())
}

/// `--allow-no-scenarios` when `why` says there is nothing to run: one note, then the tail of an
/// empty run (its JSON and other `--output` files, an empty baseline saved with
/// `--save-baseline`), without the empty table on stdout. Exit code 0 unless an output or the
/// baseline cannot be written.
pub fn without_scenarios(args: &Args, gating: &Gating, baseline: Option<&Baseline>, why: &Error) -> u8 {
    err!("note: no scenario to run ({why}); nothing measured (--allow-no-scenarios)");
    let report = Results::new(std::time::SystemTime::now());
    tail(args, gating, baseline, report, exit_code::OK, Tail { print: false, saved: false }, Vec::new())
}

/// Thresholds → compare → outputs → save the baseline → the exit code, which is at least `code`.
pub fn finish(args: &Args, gating: &Gating, baseline: Option<&Baseline>, report: Results, code: u8) -> u8 {
    tail(args, gating, baseline, report, code, Tail { print: true, saved: false }, Vec::new())
}

/// [`finish`] for `cargo loadbench ab`, whose scenarios already hold their comparison with the
/// base, with `notes` (the base had nothing to compare, one server measured for both…) under the
/// table, in the Markdown and in the HTML.
pub fn finish_ab(args: &Args, gating: &Gating, report: Results, code: u8, notes: Vec<String>) -> u8 {
    tail(args, gating, None, report, code, Tail { print: true, saved: false }, notes)
}

/// [`finish`] for saved results (`cargo loadbench report`, `merge`): they print on stdout only
/// with an explicit `--format` or without any `--output`, a run that was interrupted back then
/// neither sets the exit code nor blocks `--save-baseline` now, and `notes` (how the results were
/// put together) go with the run's own under the table, in the Markdown and in the HTML.
pub fn finish_saved(
    args: &Args,
    gating: &Gating,
    baseline: Option<&Baseline>,
    report: Results,
    notes: Vec<String>,
) -> u8 {
    let print = args.outputs.is_empty() && args.json.is_none() || args.format != Format::Table;
    tail(args, gating, baseline, report, exit_code::OK, Tail { print, saved: true }, notes)
}

/// How [`tail`] differs between a run and saved results.
#[derive(Debug, Clone, Copy)]
struct Tail {
    /// Whether the `--format` output goes to stdout.
    print: bool,
    /// Saved results, rendered again: their `interrupted` mark is shown, not acted on.
    saved: bool,
}

/// The tail of [`finish`] and [`finish_saved`].
fn tail(
    args: &Args,
    gating: &Gating,
    baseline: Option<&Baseline>,
    mut report: Results,
    mut code: u8,
    how: Tail,
    mut notes: Vec<String>,
) -> u8 {
    let print = how.print;
    gate::apply_thresholds(&mut report, &args.thresholds);
    if let Some(first) = targets::reference(&report).map(str::to_owned) {
        targets::compare_with_first(&mut report, &first, gating.noise);
    }
    if let Some(baseline) = baseline.filter(|b| !b.report.scenarios.is_empty()) {
        for scenario in &mut report.scenarios {
            let old = baseline.scenario(scenario);
            scenario.comparison = Some(compare::compare_with_rows(scenario, old, &baseline.name, gating.noise));
        }
        notes.extend(machine_note(baseline, &report.machine));
    } else if let Some(baseline) = baseline {
        // Saved by a run with --allow-no-scenarios: the base of the pull request that brings
        // loadbench in. Every scenario is new; there is nothing to judge, so nothing fails.
        notes.push(format!("no baseline: nothing to compare (baseline `{}` holds no scenario)", baseline.name));
    }
    let marked = report.interrupted || report.scenarios.iter().any(|s| s.interrupted);
    report.interrupted = interrupt::interrupted() || marked;
    // Saved results keep their mark in every output, but only this process's signal counts here.
    let interrupted = interrupt::interrupted() || (marked && !how.saved);

    report.gate = Some(gating.report());
    let verdicts = {
        let cx = context(&report, gating, args);
        output::verdicts(&cx)
    };
    for (scenario, verdict) in report.scenarios.iter_mut().zip(verdicts) {
        scenario.verdict = Some(verdict);
    }
    let mut cx = context(&report, gating, args);
    cx.notes = notes;
    cx.saves_as = args.save_baseline.as_deref();
    cx.html_reports = args.outputs.iter().filter(|o| o.format == Format::Html).map(|o| o.path.clone()).collect();
    code = code.max(write_outputs(args, &cx, print));
    for hint in loadbench::report::hints(report.scenarios.iter().map(|s| &s.report)) {
        err!("{hint}");
    }

    if let Some(name) = &args.save_baseline {
        if interrupted {
            err!("note: baseline `{name}` not saved: the run was interrupted");
        } else if !report.scenarios.is_empty() && report.scenarios.iter().all(|s| s.setup_error.is_some()) {
            // An empty baseline would later read as "nothing to compare" and pass everything.
            err!("note: baseline `{name}` not saved: no scenario ran");
        } else if let Some(why) = plausible::below_success_floor(&report) {
            // Every later verdict would be judged against a failing server.
            err!("error: baseline `{name}` not saved: {why}");
            code = code.max(exit_code::USAGE);
        } else {
            match gating.baselines.save(name, &report) {
                Ok((path, n)) => {
                    let noun = if n == 1 { "scenario" } else { "scenarios" };
                    err!("note: saved baseline `{name}` ({n} {noun}) to {}", path.display());
                }
                Err(err) => {
                    err!("error: cannot save baseline `{name}`: {err}");
                    code = code.max(exit_code::USAGE);
                }
            }
        }
    }

    let gate = GateResult::of(&report, &cx.labels);
    let against = cx.against();
    if gate.failed(gating.fail_on_regression) && gating.no_gate {
        err!("note: {}; not failing the run (--no-gate)", gate.describe(gating.fail_on_regression, against.as_deref()));
    } else if gate.failed(gating.fail_on_regression) {
        err!("error: {}", gate.describe(gating.fail_on_regression, against.as_deref()));
        code = code.max(exit_code::GATE_FAILED);
    } else if !gate.regressions.is_empty() {
        err!(
            "note: regressed against {}: {}; add --fail-on-regression to fail the run on it",
            against.as_deref().unwrap_or("the baseline"),
            gate.regressions.join(", ")
        );
    }
    let warned: Vec<&str> = report
        .scenarios
        .iter()
        .zip(&cx.labels)
        .filter(|(s, _)| !s.warnings.is_empty())
        .map(|(_, l)| l.as_str())
        .collect();
    if !warned.is_empty() {
        if gating.fail_on_warning && !gating.no_gate {
            err!("error: --fail-on-warning: {} measured nothing (see the warnings)", warned.join(", "));
            code = code.max(exit_code::GATE_FAILED);
        } else {
            err!(
                "note: {} measured nothing (see the warnings); add --fail-on-warning to fail the run on it",
                warned.join(", ")
            );
        }
    }
    code = code.max(measured_nothing(&report, &cx.labels, gating, args.quiet));
    if report.scenarios.iter().any(|s| s.setup_error.is_some()) {
        code = code.max(exit_code::SCENARIO_FAILED);
    }
    // Inconclusive only when nothing worse: a regression in the same run still exits 1.
    if inconclusive(&report, &cx.labels, gating, args.quiet) && code == exit_code::OK {
        code = exit_code::INCONCLUSIVE;
    }
    if interrupted {
        code = interrupt::exit_code().unwrap_or(exit_code::INTERRUPTED);
    }
    code
}

/// The outputs' context of `report` under `gating`.
fn context<'a>(report: &'a Results, gating: &'a Gating, args: &Args) -> Context<'a> {
    let mut cx = Context::new(report, gating.runs, gating.baseline_name.as_deref(), gating.fail_on_regression);
    cx.columns = LatencyColumns::new(args.percentiles.clone().unwrap_or_default());
    cx.fail_on_warning = gating.fail_on_warning;
    cx.allow_failures = gating.allow_failures;
    cx.allow_inconclusive = gating.allow_inconclusive;
    cx
}

/// One line per scenario that ran and had no successful iteration: an `error:` that makes the
/// exit code [`exit_code::GATE_FAILED`] (returned), or a `note:` under `--allow-failures` or
/// `--no-gate` (left out with `--quiet`: the outputs mark the scenario all the same).
fn measured_nothing(report: &Results, labels: &[String], gating: &Gating, quiet: bool) -> u8 {
    let allowed_by = gating.allowed_by(gating.allow_failures, "--allow-failures");
    let mut code = exit_code::OK;
    for (scenario, label) in report.scenarios.iter().zip(labels).filter(|(s, _)| check::measured_nothing(s)) {
        if allowed_by.is_none() || !quiet {
            err!("{}", check::measured_nothing_verdict(label, scenario, allowed_by));
        }
        if allowed_by.is_none() {
            code = exit_code::GATE_FAILED;
        }
    }
    code
}

/// Says which scenarios were inconclusive (an allowed run's note is left out with `--quiet`);
/// whether that sets the exit code (not under `--allow-inconclusive` or `--no-gate`).
fn inconclusive(report: &Results, labels: &[String], gating: &Gating, quiet: bool) -> bool {
    let names: Vec<&str> = report
        .scenarios
        .iter()
        .zip(labels)
        .filter(|(s, _)| !s.inconclusive.is_empty())
        .map(|(_, l)| l.as_str())
        .collect();
    if names.is_empty() {
        return false;
    }
    let allowed_by = gating.allowed_by(gating.allow_inconclusive, "--allow-inconclusive");
    if allowed_by.is_none() || !quiet {
        err!("{}", check::inconclusive_verdict(&names, allowed_by));
    }
    allowed_by.is_none()
}

/// Whether this run appends its Markdown to `GITHUB_STEP_SUMMARY`, so that a pull request's
/// summary holds one block per comparison however many steps ran loadbench:
///
/// - a run that only saves a baseline (`--save-baseline` without `--baseline`, the base commit's
///   step) writes nothing: its figures appear in the comparison that reads them;
/// - a run that compares (`--baseline`) writes one block, headed with the baseline's name
///   (`loadbench: `head` compared with baseline `base``);
/// - a run that neither compares nor saves writes one block, `loadbench results`.
pub fn writes_step_summary(args: &Args) -> bool {
    !(args.save_baseline.is_some() && args.baseline.is_none())
}

/// Prints the `--format` output (if `print`), writes every `--output` (and `--json`) file and appends the
/// Markdown summary to `GITHUB_STEP_SUMMARY` when it is set and [`writes_step_summary`] says so.
/// Returns [`exit_code::USAGE`] if anything could not be written (each failure is one `error:`
/// line), else [`exit_code::OK`].
fn write_outputs(args: &Args, cx: &Context, print: bool) -> u8 {
    let mut code = exit_code::OK;
    let render = |format: Format| output::render(format, cx);
    // The files first: after SIGHUP the terminal may be gone, and a write to it must not come
    // between the run and its results.
    let json = args.json.iter().map(|path| OutputSpec { format: Format::Json, path: path.clone() });
    for spec in args.outputs.iter().cloned().chain(json) {
        let written = render(spec.format)
            .and_then(|text| loadbench::report::write_atomic(&spec.path, text.as_bytes()).map_err(|e| e.to_string()));
        if let Err(err) = written {
            err!("error: cannot write {}: {err}", spec.path.display());
            code = exit_code::USAGE;
        }
    }
    match render(args.format).map(|text| if print { text } else { String::new() }) {
        // A closed pipe (`| head`) ends quietly; a full disk is an error line and the exit code.
        Ok(text) => loadbench::console::print(&text),
        Err(err) => {
            err!("error: cannot render the results as {:?}: {err}", args.format);
            code = exit_code::USAGE;
        }
    }
    let summary = std::env::var_os(STEP_SUMMARY_ENV).filter(|p| !p.is_empty() && writes_step_summary(args));
    if let Some(path) = summary.map(PathBuf::from) {
        let written =
            render(Format::Markdown).and_then(|markdown| output::append(&path, &markdown).map_err(|e| e.to_string()));
        if let Err(err) = written {
            err!("error: cannot append to {STEP_SUMMARY_ENV} ({}): {err}", path.display());
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

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use super::*;
    use crate::cli::Cargo;

    fn args(argv: &[&str]) -> Args {
        let all = ["cargo-loadbench", "loadbench"].iter().chain(argv).copied();
        let parsed = Cargo::try_parse_from(all);
        let Ok(Cargo::Loadbench(args)) = parsed else { panic!("{parsed:?}") };
        args
    }

    #[test]
    fn an_output_over_the_baseline_compared_with_is_refused_and_saving_it_is_not() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let baselines = dir.path().join("baselines");
        let file = baselines.join("main").join(crate::baseline::FILE);
        std::fs::create_dir_all(file.parent().unwrap_or(dir.path())).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(&file, "{}").unwrap_or_else(|e| panic!("{e}"));
        let dir_flag = baselines.to_str().unwrap_or_default();
        let over = dir.path().join("baselines/main/../main/report.json");
        let over = over.to_str().unwrap_or_default();

        let refused = args(&["--baseline", "main", "--baseline-dir", dir_flag, "-o", &format!("markdown:{over}")]);
        let gating = Gating::resolve(&refused, dir.path(), &Settings::default());
        let err = check_outputs(&refused, &gating).unwrap_err().to_string();
        assert!(err.contains("it is also an input of this command"), "{err}");

        let updated = args(&["--baseline", "main", "--save-baseline", "main", "--baseline-dir", dir_flag]);
        let gating = Gating::resolve(&updated, dir.path(), &Settings::default());
        assert!(check_outputs(&updated, &gating).is_ok(), "--save-baseline updates the baseline compared with");
        let elsewhere = args(&["--baseline", "main", "--baseline-dir", dir_flag, "--json", "out.json"]);
        let gating = Gating::resolve(&elsewhere, dir.path(), &Settings::default());
        assert!(check_outputs(&elsewhere, &gating).is_ok());
    }
}
