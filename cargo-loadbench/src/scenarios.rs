//! The scenarios that a workspace's bench binaries list: which of them a filter selects, and
//! their entries in the results once a binary ran them (or could not). Shared by `cargo
//! loadbench` ([`crate::dispatch::workspace`]) and `cargo loadbench ab`, whose rounds run them on
//! each side.

use cargo_loadbench::ScenarioResult;
use loadbench::cli::Filter;
use loadbench::report::{ScenarioInfo, ScenarioList, ScenarioReport, WatchReport};

use crate::build::Executable;
use crate::error::Error;
use crate::run::RunOptions;

/// The scenarios of each bench binary that `filter` selects, in binary order; binaries with none
/// are left out.
pub fn select<'a>(
    listed: &'a [(Executable, ScenarioList)],
    filter: &Filter,
) -> Result<Vec<(&'a Executable, Vec<&'a ScenarioInfo>)>, Error> {
    let available = || listed.iter().flat_map(|(_, list)| &list.scenarios).map(|s| s.name.as_str());
    if available().next().is_none() {
        let targets = listed.iter().map(|(exe, _)| exe.target.to_string()).collect::<Vec<_>>();
        let targets = if targets.is_empty() { "any bench target".to_owned() } else { targets.join(", ") };
        return Err(Error::NoScenarios { targets });
    }
    let plan: Vec<_> = listed
        .iter()
        .map(|(exe, list)| (exe, list.scenarios.iter().filter(|s| filter.matches(&s.name)).collect::<Vec<_>>()))
        .filter(|(_, selected)| !selected.is_empty())
        .collect();
    if plan.is_empty() {
        return Err(filter.no_match(available()).into());
    }
    Ok(plan)
}

/// `measured` as the entry of bench target `exe`, against the target named `target_name` (side by
/// side), with what `--watch` saw after what the binary watched itself (`Harness::watch`).
pub fn ran_in(
    exe: &Executable,
    target_name: Option<String>,
    mut measured: ScenarioReport,
    watched: &[WatchReport],
) -> ScenarioResult {
    measured.watched.extend(watched.iter().cloned());
    let mut result = ScenarioResult::new(measured);
    result.package = Some(exe.target.package.clone());
    result.bench = Some(exe.target.bench.clone());
    result.target_name = target_name;
    result
}

/// The report entry for a scenario whose binary died before reporting.
pub fn did_not_run(info: &ScenarioInfo, options: &RunOptions, reason: &str) -> ScenarioReport {
    let mut config = info.config.clone();
    if let Some(target) = &options.target {
        config.target = Some(target.clone());
    }
    let mut report = ScenarioReport::not_started(info.name.clone(), config);
    report.setup_error = Some(reason.to_owned());
    report
}

#[cfg(test)]
// A failed expectation is a failed test; `expect` says which.
#[allow(clippy::expect_used)]
mod tests {
    use super::*;
    use loadbench::report::ConfigReport;

    fn exe(bench: &str, scenarios: &[&str]) -> (Executable, ScenarioList) {
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
        (Executable::example(bench), ScenarioList { schema_version: 1, scenarios })
    }

    fn names(plan: &[(&Executable, Vec<&ScenarioInfo>)]) -> Vec<String> {
        plan.iter().flat_map(|(exe, s)| s.iter().map(move |s| format!("{}/{}", exe.target.bench, s.name))).collect()
    }

    #[test]
    fn filters_select_across_binaries() {
        let listed = [exe("api", &["hello", "login", "checkout"]), exe("admin", &["hello_admin"])];
        let all = select(&listed, &Filter::default()).expect("all");
        assert_eq!(names(&all), ["api/hello", "api/login", "api/checkout", "admin/hello_admin"]);
        let some = select(&listed, &Filter::new(vec!["hello".into()], false)).expect("substring");
        assert_eq!(names(&some), ["api/hello", "admin/hello_admin"]);
        let exact = select(&listed, &Filter::new(vec!["hello".into(), "login".into()], true)).expect("exact");
        assert_eq!(names(&exact), ["api/hello", "api/login"]);
    }

    #[test]
    fn a_filter_matching_nothing_lists_what_exists() {
        let listed = [exe("api", &["login", "hello"]), exe("admin", &["hello"])];
        let err = select(&listed, &Filter::new(vec!["xyz".into()], false)).expect_err("no match");
        assert_eq!(err.to_string(), "no scenario matches `xyz`; available: hello, login");
    }

    #[test]
    fn binaries_without_scenarios_are_an_error() {
        let listed = [exe("api", &[])];
        let err = select(&listed, &Filter::default()).expect_err("no scenarios");
        assert_eq!(err.to_string(), "no #[loadbench::scenario] functions in shop/api");
        let err = select(&[], &Filter::default()).expect_err("no loadbench binaries");
        assert_eq!(err.to_string(), "no #[loadbench::scenario] functions in any bench target");
    }
}
