//! The `cargo loadbench` pipeline: discover → build → list → select → run → report.

use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::SystemTime;

use loadbench::exit_code;
use loadbench::report::{self, RunReport, ScenarioInfo, ScenarioList, ScenarioReport};
use loadbench::table;

use crate::build::{self, Executable};
use crate::cli::Args;
use crate::discover;
use crate::error::Error;
use crate::run::{self, Outcome, RunOptions};

/// Runs `cargo loadbench` with `args` and returns the exit code. Errors that stop the run before
/// any result exists are returned as [`Error`]s.
pub fn run(args: &Args) -> Result<u8, Error> {
    let manifest_path = args.manifest_path.as_deref();
    let targets = discover::discover(manifest_path, &args.packages, &args.benches)?;
    let executables = build::build(manifest_path, &targets)?;

    let scratch = tempfile::Builder::new().prefix("cargo-loadbench-").tempdir().map_err(Error::TempDir)?;
    let mut listed = Vec::with_capacity(executables.len());
    for (i, exe) in executables.into_iter().enumerate() {
        // Asked unfiltered, so that a filter matching nothing can list what is available.
        if let Some(list) = run::list(&exe, &scratch.path().join(format!("list-{i}.json")))? {
            listed.push((exe, list));
        }
    }
    let plan = select(&listed, &args.filters, args.exact)?;

    if args.list {
        print_list(&plan, args.target.as_deref());
        return Ok(exit_code::OK);
    }

    install_interrupt_handler();
    let options = RunOptions { target: args.target.clone(), quiet: args.quiet };
    let (report, mut code) = run_plan(&plan, &options, scratch.path());
    if report.scenarios.is_empty() && code != exit_code::OK {
        return Ok(code);
    }

    // A closed pipe (`| head`) is not worth a panic; the exit code still tells.
    let _ = std::io::stdout().lock().write_all(table::render(&report).as_bytes());
    if let Some(path) = &args.json
        && let Err(err) = report::write_json_atomic(path, &report)
    {
        eprintln!("error: cannot write {}: {err}", path.display());
        code = code.max(exit_code::USAGE);
    }
    if report.scenarios.iter().any(|s| s.setup_error.is_some()) {
        code = code.max(exit_code::SCENARIO_FAILED);
    }
    if interrupted() || report.scenarios.iter().any(|s| s.interrupted) {
        code = exit_code::INTERRUPTED;
    }
    Ok(code)
}

/// Runs each bench binary of `plan` in turn and merges what they report into one report, with
/// `package` and `bench` filled in. The exit code is [`exit_code::USAGE`] when a binary rejected
/// its configuration (nothing more runs after that), else [`exit_code::OK`].
fn run_plan(plan: &[(&Executable, Vec<&ScenarioInfo>)], options: &RunOptions, scratch: &Path) -> (RunReport, u8) {
    let started_at = SystemTime::now();
    let mut merged: Option<RunReport> = None;
    let mut scenarios = Vec::new();
    let mut code = exit_code::OK;
    for (i, (exe, selected)) in plan.iter().enumerate() {
        if interrupted() {
            eprintln!("note: interrupted; {} bench target(s) not started", plan.len() - i);
            break;
        }
        if !options.quiet {
            eprintln!("     Running {exe} ({})", exe.path.display(), exe = exe.target);
        }
        let names: Vec<String> = selected.iter().map(|s| s.name.clone()).collect();
        match run::run(exe, &names, options, &scratch.join(format!("run-{i}.json"))) {
            Outcome::Finished(mut report) => {
                for scenario in &mut report.scenarios {
                    scenario.package = Some(exe.target.package.clone());
                    scenario.bench = Some(exe.target.bench.clone());
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
                break;
            }
            Outcome::CouldNotRun(reason) => {
                eprintln!("error: {}: {reason}; its scenarios did not run", exe.target);
                scenarios.extend(selected.iter().map(|info| did_not_run(exe, info, options, &reason)));
            }
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

/// `basic/api: hello — concurrency 20, count 500, timeout 30s`, one line per scenario.
fn print_list(plan: &[(&Executable, Vec<&ScenarioInfo>)], target: Option<&str>) {
    let mut out = String::new();
    for (exe, scenarios) in plan {
        for info in scenarios {
            let mut config = info.config.clone();
            // Show the target the run would use.
            if let Some(target) = target {
                config.target = Some(target.to_owned());
            }
            out.push_str(&format!("{}: {} — {}\n", exe.target, info.name, table::describe_config(&config)));
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

/// Keeps the first Ctrl-C from killing us while a bench binary runs.
///
/// The binary is in our process group, so it receives the same SIGINT, stops starting
/// iterations and writes what it measured; we stay alive to print that. A second Ctrl-C means
/// "quit now", for us as for the binary.
fn install_interrupt_handler() {
    let installed = ctrlc::set_handler(|| {
        if INTERRUPTS.fetch_add(1, Ordering::SeqCst) > 0 {
            std::process::exit(i32::from(exit_code::INTERRUPTED));
        }
    });
    if let Err(err) = installed {
        eprintln!("warning: cannot handle Ctrl-C ({err}); an interrupted run will show no results");
    }
}

fn interrupted() -> bool {
    INTERRUPTS.load(Ordering::SeqCst) > 0
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
        let config =
            ConfigReport { concurrency: 2, count: Some(10), duration_ms: None, timeout_ms: 1_000, target: None };
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
