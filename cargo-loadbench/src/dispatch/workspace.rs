//! `cargo loadbench`: discover → read the baseline → build → list → select → run (in rounds;
//! against several targets, side by side) → the shared tail, [`crate::finish`]: thresholds,
//! comparisons, outputs, the baseline and the exit code.

use loadbench::console::err;
use loadbench::http::ClientOptions;
use std::ops::ControlFlow;
use std::path::Path;
use std::time::SystemTime;

use cargo_loadbench::Results;
use loadbench::cli::{Filter, StartAt, interrupt};
use loadbench::exit_code;
use loadbench::report::{ScenarioInfo, ShardReport, WatchReport, table};
use loadbench::watch::Sampler;

use crate::build::{self, Executable};
use crate::cli::Args;
use crate::discover;
use crate::error::Error;
use crate::finish::{self, Gating};
use crate::gate::{self, CliThreshold};
use crate::rounds;
use crate::run::{self, Outcome, RunOptions};
use crate::scenarios::{did_not_run, ran_in, select};
use crate::targets::{self, TargetArg, Targets};

/// Runs `cargo loadbench` with `args` and returns the exit code. Errors that stop the run before
/// any result exists are returned as [`Error`]s.
pub fn run(args: &Args) -> Result<u8, Error> {
    let targets = Targets::new(&args.targets)?;
    targets.check_baselines(args.baseline.as_deref(), args.save_baseline.as_deref())?;
    let manifest_path = args.selection.manifest_path.as_deref();
    let (mut workspace, selected) = discover::read(manifest_path, &args.selection.packages, &args.selection.benches)?;
    // Nothing to run is an error now, or (with --allow-no-scenarios) a note once the outputs and
    // the baseline have been checked.
    let selected = match selected {
        Err(err) if !tolerated(args, &err) => return Err(err),
        other => other,
    };
    let gating = Gating::resolve(args, &workspace.target_dir, &workspace.settings);
    finish::check_outputs(args, &gating)?;
    // Before building: a TLS file that cannot be used is refused by every bench binary anyway.
    args.client.apply(ClientOptions::default()).tls.check()?;
    // Before building: a missing or broken baseline should cost seconds, not a build and a run.
    let baseline = args.baseline.as_deref().map(|name| gating.baselines.load(name)).transpose()?;
    workspace.targets = match selected {
        Ok(targets) => targets,
        Err(err) => return Ok(finish::without_scenarios(args, &gating, baseline.as_ref(), &err)),
    };
    let executables = build::build(manifest_path, &workspace.targets).inspect_err(|err| {
        if matches!(err, Error::BuildFailed) {
            for fix in crate::mistakes::missing_main(&workspace.targets) {
                err!("hint: {fix}");
            }
        }
    })?;

    let scratch = tempfile::Builder::new().prefix("cargo-loadbench-").tempdir().map_err(Error::TempDir)?;
    let mut listed = Vec::with_capacity(executables.len());
    for (i, exe) in executables.into_iter().enumerate() {
        // Asked unfiltered, so that a filter matching nothing can list what is available.
        if let Some(list) = run::list(&exe, &scratch.path().join(format!("list-{i}.json")))? {
            listed.push((exe, list));
        }
    }
    let plan = match select(&listed, &Filter::new(args.filters.clone(), args.exact)) {
        Ok(plan) => plan,
        Err(err) if tolerated(args, &err) => {
            return Ok(finish::without_scenarios(args, &gating, baseline.as_ref(), &err));
        }
        Err(err) => return Err(err),
    };
    let selected: Vec<&str> = plan.iter().flat_map(|(_, s)| s.iter().map(|info| info.name.as_str())).collect();
    gate::check_scenarios(&args.thresholds, &selected)?;

    if args.list {
        print_list(&plan, &targets, &args.thresholds);
        return Ok(exit_code::OK);
    }
    // A scenario whose attribute declares fewer users than shards is refused before any binary
    // runs its load; each binary checks again, after `LOADBENCH_SCALE`, before its own.
    if let Some(shard) = args.distributed.shard {
        let refusal = plan.iter().flat_map(|(_, s)| s).find_map(|s| shard.too_few_users(&s.name, s.config.concurrency));
        if let Some(refusal) = refusal {
            err!("error: {refusal}");
            return Ok(exit_code::USAGE);
        }
    }

    // Signals are forwarded to the bench binary running (in a process group of its own), which
    // stops and reports on its own, so only it announces them; we stay alive to print what it
    // measured.
    if let Err(err) = interrupt::install(false) {
        err!("warning: {err}; an interrupted run will show no results");
    }
    let options = RunOptions {
        target: None,
        quiet: args.quiet,
        grace: args.grace,
        watches: args.watched(),
        // Bench binaries run in their package's directory.
        client: args.client.absolute(),
        percentiles: args.measured_percentiles(),
        progress: None,
        distributed: args.distributed.clone(),
        remote_write: args.remote_write.clone(),
    };
    let (report, code) = run_rounds(&plan, &targets, &options, scratch.path(), gating.runs);
    if report.scenarios.is_empty() && code != exit_code::OK {
        return Ok(code);
    }
    Ok(finish::finish(args, &gating, baseline.as_ref(), report, code))
}

/// Whether `err` is one that `--allow-no-scenarios` turns into a note.
fn tolerated(args: &Args, err: &Error) -> bool {
    args.allow_no_scenarios && err.is_no_scenarios()
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
) -> (Results, u8) {
    let mut code = exit_code::OK;
    // `--start-at` is the first binary's alone: the others start when the one before them ends.
    let mut start_at = options.distributed.start_at;
    let report = rounds::in_rounds(runs, |round| {
        let (report, round_code) = run_plan(plan, targets, options, scratch, (round, runs), &mut start_at);
        code = round_code;
        (report, if round_code == exit_code::OK { ControlFlow::Continue(()) } else { ControlFlow::Break(()) })
    });
    (report, code)
}

/// Runs each bench binary of `plan` in turn and merges what they report into one report, with
/// `package`, `bench` and the target's name filled in. Against several targets, each scenario
/// runs against each target in turn ([`targets::for_each_pair`]). `start_at`, while still there,
/// is taken by the first binary to run. The exit code is
/// [`exit_code::USAGE`] when a binary rejected its configuration (nothing more runs after that),
/// else [`exit_code::OK`].
fn run_plan(
    plan: &[(&Executable, Vec<&ScenarioInfo>)],
    targets: &Targets,
    options: &RunOptions,
    scratch: &Path,
    (round, runs): (u32, u32),
    start_at: &mut Option<StartAt>,
) -> (Results, u8) {
    let started_at = SystemTime::now();
    let mut header: Option<Results> = None;
    let mut scenarios = Vec::new();
    let mut code = exit_code::OK;
    // No `--target`: each scenario's own; one: that one, unnamed or not.
    let run_against: Vec<Option<&TargetArg>> =
        if targets.list().is_empty() { vec![None] } else { targets.list().iter().map(Some).collect() };
    let of = if runs > 1 { format!(" [run {round} of {runs}]") } else { String::new() };
    let mut started = 0;
    // The `[i/n]` of the progress lines counts every scenario run of this round, across binaries
    // (and targets, side by side).
    let total: usize = plan.iter().map(|(_, selected)| selected.len()).sum::<usize>() * run_against.len();
    let mut scenarios_started = 0;
    for (i, (exe, selected)) in plan.iter().enumerate() {
        if interrupt::interrupted() {
            err!("note: interrupted; {} bench target(s) not started", plan.len() - i);
            break;
        }
        if !options.quiet && !targets.side_by_side() {
            err!("     Running {exe} ({}){of}", exe.path.display(), exe = exe.target);
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
            if interrupt::interrupted() {
                return ControlFlow::Break(());
            }
            let mut options = options.clone();
            options.distributed.start_at = start_at.take();
            if let Some(target) = target {
                options.target = Some(target.url.clone());
            }
            let name = target.and_then(|t| t.name.clone());
            if !options.quiet && targets.side_by_side() {
                let scenario = batch.iter().map(|s| s.name.as_str()).collect::<Vec<_>>().join(", ");
                let against = target.map_or_else(String::new, |t| format!(" against {} ({})", t.label(), t.url));
                err!("     Running {exe} {scenario}{against}{of}", exe = exe.target);
            }
            started += 1;
            options.progress = Some((scenarios_started, total));
            scenarios_started += batch.len();
            let names: Vec<String> = batch.iter().map(|s| s.name.clone()).collect();
            let samplers: Vec<Sampler> = options.watches.iter().map(Sampler::start).collect();
            let output = scratch.join(format!("run-{round}-{i}-{started}.json"));
            let outcome = run::run(exe, &names, &options, &output);
            let watched: Vec<WatchReport> = samplers.into_iter().map(Sampler::finish).collect();
            match outcome {
                Outcome::Finished(mut report) => {
                    let measured = std::mem::take(&mut report.scenarios);
                    scenarios.extend(measured.into_iter().map(|m| ran_in(exe, name.clone(), m, &watched)));
                    // The first binary's header (tool, machine, start time) stands for the run.
                    header.get_or_insert(report.with_scenarios(Vec::new()));
                }
                Outcome::UsageError => {
                    // The binary has printed the reason; say which binary, and run nothing more:
                    // the same mistake would most likely stop the others too.
                    err!("error: {} rejected its configuration; see above", exe.target);
                    code = exit_code::USAGE;
                    return ControlFlow::Break(());
                }
                Outcome::CouldNotRun(reason) => {
                    err!("error: {}: {reason}; its scenarios did not run", exe.target);
                    scenarios.extend(batch.iter().map(|info| {
                        let report = did_not_run(info, &options, &reason);
                        ran_in(exe, name.clone(), report, &[])
                    }));
                }
            }
            ControlFlow::Continue(())
        });
        if flow.is_break() {
            break;
        }
    }
    let mut report = header.unwrap_or_else(|| Results::new(started_at));
    // Said by the binaries' headers, unless the first one to report was not the first to run.
    if report.shard.is_none() {
        report.shard = options.distributed.shard.map(|s| ShardReport { index: s.index(), count: s.count() });
    }
    if report.run_id.is_none() {
        report.run_id.clone_from(&options.distributed.run_id);
    }
    report.scenarios = scenarios;
    (report, code)
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
    loadbench::console::print(&out);
}
