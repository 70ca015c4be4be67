//! Saved baselines: `<dir>/<NAME>/report.json`, where `<dir>` is `--baseline-dir` or
//! `<target-dir>/loadbench/baselines`.
//!
//! A baseline is an ordinary results document ([`Results`], the same schema as `--format
//! json`), holding each scenario's summary and, in [`ScenarioResult::runs`], the figures of each
//! run that the verdict needs. Saving replaces the scenarios that ran and keeps the others, so a
//! filtered run updates its part of a baseline; the file is written to a temporary file and then
//! renamed, so a reader never sees half of one.

use std::path::{Path, PathBuf};

use cargo_loadbench::{Results, ScenarioResult};
use loadbench::console::err;
use loadbench::report;

use crate::error::Error;
use crate::plausible;
use crate::versioned::{self, ReadError};

/// The file in a baseline's directory.
pub const FILE: &str = "report.json";

/// The directory that holds every baseline.
#[derive(Debug, Clone)]
pub struct Baselines {
    dir: PathBuf,
}

/// A baseline read back.
#[derive(Debug, Clone)]
pub struct Baseline {
    /// Its name.
    pub name: String,
    /// What it holds.
    pub report: Results,
}

impl Baseline {
    /// The baseline's entry for `scenario`: the same package, bench target and name.
    pub fn scenario(&self, scenario: &ScenarioResult) -> Option<&ScenarioResult> {
        self.report.scenarios.iter().find(|s| s.same_scenario(scenario))
    }
}

impl Baselines {
    /// Baselines under `dir`.
    pub fn new(dir: PathBuf) -> Baselines {
        Baselines { dir }
    }

    /// `<dir>/<name>/report.json`.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name).join(FILE)
    }

    /// Reads baseline `name`. A missing baseline is an error (naming where it was looked for),
    /// never a silent "nothing to compare with": a CI job whose baseline step failed must not
    /// pass every pull request. So is one whose figures no run could have measured, or whose
    /// success rate is below [`plausible::SUCCESS_FLOOR`] (see [`plausible::check_baseline`]).
    pub fn load(&self, name: &str) -> Result<Baseline, Error> {
        let path = self.path(name);
        if !self.dir.join(name).is_dir() {
            return Err(Error::BaselineMissing { name: name.to_owned(), dir: self.dir.clone() });
        }
        let report = versioned::read::<Results>(&path).map_err(|err| {
            let reason = match err {
                ReadError::Io(e) if e.kind() == std::io::ErrorKind::NotFound => "the file is missing".to_owned(),
                ReadError::Version(v) => {
                    format!("{}; save the baseline again with this version", ReadError::Version(v))
                }
                other => other.to_string(),
            };
            Error::BaselineUnreadable { name: name.to_owned(), path: path.clone(), reason }
        })?;
        if let Some(problem) = plausible::check_baseline(&report) {
            let reason = format!("{problem}; save it again from a healthy run");
            return Err(Error::BaselineUnreadable { name: name.to_owned(), path, reason });
        }
        Ok(Baseline { name: name.to_owned(), report })
    }

    /// Saves the scenarios of `report` that ran as baseline `name`, over their earlier entries;
    /// entries of scenarios that did not run this time are kept. Returns the file and how many
    /// scenarios it now holds.
    ///
    /// An unreadable earlier file is replaced, with a note: saving is how a broken baseline is
    /// repaired.
    pub fn save(&self, name: &str, report: &Results) -> Result<(PathBuf, usize), String> {
        let path = self.path(name);
        let mut saved = report.clone();
        // A scenario that did not run or was cut short has no figures worth comparing with.
        saved.scenarios.retain(|s| s.setup_error.is_none() && !s.interrupted);
        for scenario in &mut saved.scenarios {
            // The verdict was against another baseline; it is not part of this one.
            scenario.comparison = None;
        }
        if path.exists() {
            match versioned::read::<Results>(&path) {
                Ok(old) => {
                    let kept = old
                        .scenarios
                        .into_iter()
                        .filter(|old| !saved.scenarios.iter().any(|new| new.same_scenario(old)));
                    saved.scenarios.extend(kept.collect::<Vec<_>>());
                }
                Err(err) => err!("note: replacing unreadable baseline {}: {err}", path.display()),
            }
        }
        let dir = path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        report::write_json_atomic(&path, &saved).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        Ok((path, saved.scenarios.len()))
    }
}

#[cfg(test)]
// A failed expectation is a failed test; `expect` says which.
#[allow(clippy::expect_used)]
mod tests {
    use super::*;
    use loadbench::report::{ConfigReport, ScenarioReport};

    fn scenario(name: &str, rps: f64) -> ScenarioResult {
        let config = ConfigReport { concurrency: 1, count: Some(1), timeout_ms: 1_000, ..ConfigReport::default() };
        let mut s = ScenarioResult::new(ScenarioReport::not_started(name, config));
        s.package = Some("shop".into());
        s.bench = Some("api".into());
        (s.iterations, s.ok, s.rps, s.attempts_per_sec) = (1, 1, rps, rps);
        s
    }

    fn report(scenarios: Vec<ScenarioResult>) -> Results {
        let mut report = Results::new(std::time::SystemTime::now());
        report.scenarios = scenarios;
        report
    }

    #[test]
    fn saving_replaces_what_ran_and_keeps_the_rest() {
        let dir = tempfile::tempdir().expect("tempdir");
        let baselines = Baselines::new(dir.path().join("baselines"));
        let (path, n) = baselines.save("main", &report(vec![scenario("a", 1.0), scenario("b", 2.0)])).expect("save");
        assert_eq!((path.clone(), n), (dir.path().join("baselines/main/report.json"), 2));

        let mut broken = scenario("c", 0.0);
        broken.setup_error = Some("refused".into());
        baselines.save("main", &report(vec![scenario("b", 20.0), broken])).expect("save again");
        let loaded = baselines.load("main").expect("load");
        let figures: Vec<(String, f64)> = loaded.report.scenarios.iter().map(|s| (s.name.clone(), s.rps)).collect();
        assert_eq!(figures, [("b".to_owned(), 20.0), ("a".to_owned(), 1.0)]);
        assert_eq!(loaded.scenario(&scenario("a", 0.0)).map(|s| s.rps), Some(1.0));
        assert!(loaded.scenario(&scenario("c", 0.0)).is_none(), "a scenario that did not run is not saved");
    }

    #[test]
    fn missing_and_unreadable_baselines_are_named() {
        let dir = tempfile::tempdir().expect("tempdir");
        let baselines = Baselines::new(dir.path().to_owned());
        let err = baselines.load("main").expect_err("missing");
        assert_eq!(
            err.to_string(),
            format!("no baseline named `main` in {}; save one with --save-baseline main", dir.path().display())
        );

        std::fs::create_dir_all(dir.path().join("main")).expect("mkdir");
        let path = dir.path().join("main/report.json");
        let err = baselines.load("main").expect_err("no file");
        assert_eq!(
            err.to_string(),
            format!("cannot read baseline `main` from {}: the file is missing", path.display())
        );

        std::fs::write(&path, "{\"schema_version\": 1, \"scen").expect("write");
        let err = baselines.load("main").expect_err("corrupt");
        assert!(
            err.to_string()
                .starts_with(&format!("cannot read baseline `main` from {}: invalid JSON: ", path.display())),
            "{err}"
        );

        std::fs::write(&path, r#"{"schema_version": 7}"#).expect("write");
        let err = baselines.load("main").expect_err("future schema");
        assert!(err.to_string().ends_with(": it has result schema 7, this cargo-loadbench reads schemas 1 to 2; save the baseline again with this version"), "{err}");
    }
}
