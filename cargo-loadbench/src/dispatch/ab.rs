//! `cargo loadbench ab BASE_REV`: the working tree (or `--head REV`) against `BASE_REV`.
//!
//! locate the bench crate → check outputs → check out the sides → build and list them → start
//! their services (`--serve`) → run the rounds (each scenario on both sides, back to back) →
//! stop the services → compare each scenario of the head with the base's by paired ratios → the
//! shared tail, [`crate::finish`]: thresholds (the head's), outputs, the exit code.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use cargo_loadbench::{Commit, Commits, Results};
use loadbench::cli::{Filter, interrupt};
use loadbench::console::err;
use loadbench::exit_code;
use loadbench::http::ClientOptions;

use crate::ab::git::{self, Repo};
use crate::ab::locate;
use crate::ab::plan::{self, Unit};
use crate::ab::schedule::{self, Rounds};
use crate::ab::serve::{self, Launch, Service};
use crate::ab::side::{Listed, Selection, Side, Which};
use crate::cli::{AbArgs, Args, DEFAULT_ROUNDS, ScenarioSide};
use crate::discover::{self, Workspace};
use crate::error::Error;
use crate::finish::{self, Gating};
use crate::run::RunOptions;
use crate::toolchain::Toolchain;
use crate::{compare, gate, rounds};

/// Runs `cargo loadbench ab` and returns the exit code; errors that stop it before any result
/// are returned as [`Error`]s.
pub fn run(args: &Args, ab: &AbArgs) -> Result<u8, Error> {
    refuse_flags(args)?;
    let cwd = std::env::current_dir()
        .and_then(std::fs::canonicalize)
        .map_err(|e| Error::Ab(format!("cannot read the current directory: {e}")))?;
    let (after, before) = (&ab.selection, &args.selection);
    let given = after.manifest_path.as_deref().or(before.manifest_path.as_deref()).map(|p| cwd.join(p));
    let repo = Repo::discover(&cwd)?;
    let base_commit = repo.commit(&ab.base)?;
    let head_commit = match &ab.head {
        Some(rev) => repo.commit(rev)?,
        None => repo.working_tree()?,
    };
    let selection = Selection {
        packages: if after.packages.is_empty() { &before.packages } else { &after.packages },
        benches: if after.benches.is_empty() { &before.benches } else { &after.benches },
    };
    // The crate, found in the working tree: its place is the same in both sides' checkouts.
    let (manifest, workspace) = head_crate(&repo, &cwd, given.as_deref(), selection)?;
    let place = locate::relative(repo.toplevel(), &manifest)?;
    let rounds_counted = ab.rounds.unwrap_or(DEFAULT_ROUNDS);
    let gating = Gating::for_ab(args, &workspace.target_dir, &workspace.settings, rounds_counted);
    finish::check_outputs(args, &gating)?;
    args.client.apply(ClientOptions::default()).tls.check()?;

    let ab_dir = workspace.target_dir.join("loadbench").join("ab").join(repo.key());
    let _lock = git::lock(&ab_dir, args.quiet).map_err(Error::Ab)?;
    let left = serve::stop_leftovers(&ab_dir);
    if left > 0 {
        err!("note: stopped {left} service(s) an interrupted `cargo loadbench ab` left running");
    }
    let target_dir = &workspace.target_dir;
    let base = checkout(&repo, (Which::Base, base_commit), &ab_dir, &place, target_dir)?;
    let head = match &ab.head {
        Some(_) => checkout(&repo, (Which::Head, head_commit), &ab_dir, &place, target_dir)?,
        None => Side {
            which: Which::Head,
            commit: head_commit,
            root: repo.toplevel().to_owned(),
            manifest,
            target_dir: target_dir.clone(),
        },
    };
    let toolchain = Toolchain::pinned(&head.root)
        .map_err(|reason| Error::Ab(format!("cannot find the toolchain that builds the head: {reason}")))?;

    let scratch = tempfile::Builder::new().prefix("cargo-loadbench-ab-").tempdir().map_err(Error::TempDir)?;
    let serving = ab.serve.is_some();
    let mut notes = Vec::new();
    // With --serve one side's scenarios run on both; without it each side's binary runs its own.
    let from_base = serving && ab.scenarios == ScenarioSide::Base;
    let source_side = if from_base { &base } else { &head };
    let source = match source_side.list(&toolchain, selection, scratch.path())? {
        Listed::Scenarios(listed) => listed,
        Listed::Nothing(why) => return Err(Error::Ab(format!("{source_side} has no scenario to run: {why}"))),
    };
    let base_listed = if serving {
        None
    } else {
        match base.list(&toolchain, selection, scratch.path())? {
            Listed::Scenarios(listed) => Some(listed),
            Listed::Nothing(why) => {
                notes.push(format!(
                    "base `{}` has no scenarios ({why}): nothing to compare; the head's ran alone",
                    base.commit.short
                ));
                Some(Vec::new())
            }
        }
    };
    let filter = Filter::new(ab.filters.clone(), ab.exact || args.exact);
    let units = plan::units(&source, base_listed.as_deref(), &filter)?;
    let selected: Vec<&str> = units.iter().flat_map(|u| u.infos.iter().map(|s| s.name.as_str())).collect();
    gate::check_scenarios(&args.thresholds, &selected)?;
    if !serving {
        let env = std::env::var(loadbench::cli::TARGET_ENV).ok();
        let warnings = one_server_warnings(&units, env.as_deref());
        // On stderr before the run, which takes a while, and under the table after it.
        for warning in &warnings {
            err!("{warning}");
        }
        notes.extend(warnings);
    }

    if let Err(err) = interrupt::install(false) {
        err!("warning: {err}; an interrupted run will show no results");
    }
    let mut services = Vec::new();
    let mut targets = [None, None];
    if let Some(command) = &ab.serve {
        let launch = Launch {
            command,
            ab_dir: &ab_dir,
            timeout: ab.serve_timeout.unwrap_or(serve::DEFAULT_TIMEOUT),
            quiet: args.quiet,
        };
        for (i, side) in [&base, &head].into_iter().enumerate() {
            if !args.quiet {
                err!("     Serving {side}: `{command}` in {}", side.root.display());
            }
            let service =
                Service::start(side.which.name(), &side.root, &launch).map_err(|reason| side.failed(reason))?;
            targets[i] = Some(service.url().to_owned());
            services.push((side.which, service));
        }
    }
    let warmup = ab.warmup_rounds.unwrap_or(u32::from(serving));
    if !args.quiet {
        let warmups = if warmup > 0 { format!(" after {warmup} warmup round(s)") } else { String::new() };
        err!("   Comparing {head} with {base}: {rounds_counted} paired round(s){warmups}");
    }
    let rounds = Rounds { warmup, counted: rounds_counted, sides: [&base, &head], targets };
    let started = SystemTime::now();
    let measured = schedule::run(&units, &rounds, &run_options(args), scratch.path(), &mut services)?;
    for (_, service) in &mut services {
        service.stop();
    }
    drop(services);
    if measured.code != exit_code::OK && measured.head.iter().all(|r| r.scenarios.is_empty()) {
        return Ok(measured.code);
    }
    let commits = Commits { base: base.commit.clone(), head: head.commit.clone() };
    let report = verdict(measured.base, measured.head, &commits, gating.noise(), started);
    Ok(finish::finish_ab(args, &gating, report, measured.code, notes))
}

/// The flags of `cargo loadbench` that `ab` refuses rather than ignores.
fn refuse_flags(args: &Args) -> Result<(), Error> {
    let same_run = "ab compares with BASE_REV, measured in the same run";
    let refused = [
        (
            "--target",
            !args.targets.is_empty(),
            "it would send both sides to one server; start each side's with --serve CMD, or let each bench binary start its own",
        ),
        ("--runs", args.runs.is_some(), "give --rounds N"),
        ("--baseline", args.baseline.is_some(), same_run),
        ("--save-baseline", args.save_baseline.is_some(), same_run),
        ("--baseline-dir", args.baseline_dir.is_some(), same_run),
        ("--watch", !args.watches.is_empty() || !args.watch_pids.is_empty(), "each side has a server of its own"),
        ("--shard", args.distributed.shard.is_some(), "ab runs on one machine"),
        ("--start-at", args.distributed.start_at.is_some(), "ab runs on one machine"),
        ("--remote-write", args.remote_write.given(), "both sides would push the same series"),
        ("--list", args.list, "run `cargo loadbench --list` to list the head's scenarios"),
        ("--allow-no-scenarios", args.allow_no_scenarios, "a base without scenarios passes anyway, with a note"),
        ("a filter before `ab`", !args.filters.is_empty(), "give filters after BASE_REV"),
    ];
    match refused.into_iter().find(|(_, given, _)| *given) {
        Some((flag, _, why)) => Err(Error::NotForAb { flag, why }),
        None => Ok(()),
    }
}

/// The head's bench crate, found in the working tree: `given`, else the `Cargo.toml` nearest
/// `cwd` if its workspace has loadbench bench targets, else the one crate of the repository that
/// uses loadbench. Returns its manifest and its workspace (target directory, settings).
fn head_crate(
    repo: &Repo,
    cwd: &Path,
    given: Option<&Path>,
    selection: Selection,
) -> Result<(PathBuf, Workspace), Error> {
    let running = Toolchain::running();
    let read = |manifest: &Path| discover::read_with(&running, Some(manifest), selection.packages, selection.benches);
    if let Some(given) = given {
        let (workspace, _) = read(given)?;
        return Ok((given.to_owned(), workspace));
    }
    let nearest = locate::nearest(repo.toplevel(), cwd);
    let mut why_not = None;
    if let Some(nearest) = &nearest {
        let (workspace, targets) = read(nearest)?;
        match targets {
            Ok(_) => return Ok((nearest.clone(), workspace)),
            Err(err) if err.is_no_scenarios() => why_not = Some(err),
            Err(err) => return Err(err),
        }
    }
    match locate::search(repo, repo.toplevel())? {
        Some(found) if Some(&found) != nearest.as_ref() => {
            let shown = found.strip_prefix(repo.toplevel()).unwrap_or(&found).display().to_string();
            err!("note: measuring the crate of {shown}, the one in the repository that uses loadbench (--manifest-path chooses another)");
            let (workspace, _) = read(&found)?;
            Ok((found, workspace))
        }
        _ => Err(why_not.unwrap_or_else(|| {
            Error::Ab(format!(
                "no crate that uses loadbench-runtime in {} (none at or above {}, none in the repository's files); name one with --manifest-path",
                repo.toplevel().display(),
                cwd.display()
            ))
        })),
    }
}

/// `which`'s side checked out at `commit` in its worktree under `ab_dir`, its crate at `place`,
/// built in a target directory of its own beside `target_dir`'s own builds (`loadbench-base`,
/// `loadbench-head`): there the build cache that keeps `target_dir` keeps it too.
fn checkout(
    repo: &Repo,
    (which, commit): (Which, Commit),
    ab_dir: &Path,
    place: &Path,
    target_dir: &Path,
) -> Result<Side, Error> {
    let root = ab_dir.join(which.name());
    let target_dir = target_dir.join(format!("loadbench-{}", which.name()));
    let side = Side { which, manifest: root.join(place), root, commit, target_dir };
    repo.check_out(&side.root, &side.commit.sha)
        .map_err(|reason| side.failed(format!("cannot check it out: {reason}")))?;
    Ok(side)
}

/// The options every bench binary of the rounds gets (the target is set per side).
fn run_options(args: &Args) -> RunOptions {
    RunOptions {
        target: None,
        quiet: args.quiet,
        grace: args.grace,
        watches: Vec::new(),
        // Bench binaries run in their package's directory.
        client: args.client.absolute(),
        percentiles: args.measured_percentiles(),
        progress: None,
        distributed: args.distributed.clone(),
        remote_write: loadbench::cli::RemoteWriteArgs::default(),
    }
}

/// Without `--serve`, each side's bench binary picks its server: a scenario whose requests go to
/// one fixed server on both sides (`LOADBENCH_TARGET`, given as `env`, or its attribute's
/// `target`) measures that server twice, and no change of the server's code can show. One
/// warning per such scenario.
fn one_server_warnings(units: &[Unit], env: Option<&str>) -> Vec<String> {
    let env = env.filter(|t| !t.is_empty());
    units
        .iter()
        .flat_map(|u| &u.infos)
        .filter_map(|info| {
            let (target, from) = match (env, &info.config.target) {
                (Some(target), _) => (target, loadbench::cli::TARGET_ENV),
                (None, Some(target)) => (target.as_str(), "its `target`"),
                (None, None) => return None,
            };
            Some(format!(
                "warning: {}: base and head both send to {target} ({from}): one server measured twice, so a change of its code cannot show; start each side's with --serve CMD",
                info.name
            ))
        })
        .collect()
}

/// The head's rounds merged, each scenario holding its comparison with the base's by paired
/// ratios, both commits named in it.
fn verdict(base: Vec<Results>, head: Vec<Results>, commits: &Commits, noise: f64, started: SystemTime) -> Results {
    let base = rounds::merge(base, Results::new(started));
    let mut head = rounds::merge(head, Results::new(started));
    for scenario in &mut head.scenarios {
        let old = base.scenarios.iter().find(|b| b.same_scenario(scenario));
        let mut comparison = compare::compare_paired(scenario, old, &commits.base.short, noise);
        comparison.commits = Some(commits.clone());
        scenario.comparison = Some(comparison);
    }
    head
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::Executable;
    use loadbench::report::{ConfigReport, ScenarioInfo};

    #[test]
    fn a_scenario_sent_to_one_fixed_server_on_both_sides_is_warned_of() {
        let info = |name: &str, target: Option<&str>| ScenarioInfo {
            name: name.into(),
            module_path: "api".into(),
            file: "benches/api.rs".into(),
            line: 1,
            config: ConfigReport { target: target.map(str::to_owned), ..ConfigReport::default() },
        };
        let exe = Executable::example("api");
        let (fixed, own) = (info("fixed", Some("http://127.0.0.1:8080")), info("own", None));
        let part = |name: &str| crate::ab::plan::Part { exe: &exe, names: vec![name.to_owned()] };
        let units = [
            Unit { infos: vec![&fixed], base: Some(part("fixed")), head: part("fixed") },
            Unit { infos: vec![&own], base: Some(part("own")), head: part("own") },
        ];
        assert_eq!(
            one_server_warnings(&units, None),
            [
                "warning: fixed: base and head both send to http://127.0.0.1:8080 (its `target`): one server measured twice, so a change of its code cannot show; start each side's with --serve CMD"
            ]
        );
        let both = one_server_warnings(&units, Some("http://127.0.0.1:9000"));
        assert_eq!(both.len(), 2, "{both:?}");
        assert!(
            both[1].starts_with("warning: own: base and head both send to http://127.0.0.1:9000 (LOADBENCH_TARGET)")
        );
        assert_eq!(one_server_warnings(&units[1..], Some("")), Vec::<String>::new());
    }
}
