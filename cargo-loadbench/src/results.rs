//! One scenario as `cargo loadbench` reports it: the bench binary's report, and what the
//! subcommand adds to it.

use std::ops::{Deref, DerefMut};

use loadbench::report::{RunReport, ScenarioReport};
use serde::{Deserialize, Serialize};

use crate::comparison::Comparison;
use crate::runs::RunSample;

/// The document `cargo loadbench` writes: the runtime's header (schema version, tool, machine,
/// start) with one [`ScenarioResult`] per scenario and target, in the order they ran.
pub type Results = RunReport<ScenarioResult>;

/// One scenario's entry: what its bench binary measured, plus what only `cargo loadbench` knows.
///
/// In JSON the two are one object (the report's fields, then these); in code a `ScenarioResult`
/// reads as the report it extends (`result.iterations`), through `Deref`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScenarioResult {
    /// What the bench binary (or a one-shot run) measured.
    #[serde(flatten)]
    pub report: ScenarioReport,
    /// The bench target that holds the scenario; `None` for `cargo loadbench url`.
    #[serde(default)]
    pub bench: Option<String>,
    /// The package that holds the bench target; `None` for `cargo loadbench url`.
    #[serde(default)]
    pub package: Option<String>,
    /// The name of the `--target NAME=URL` this entry ran against, when several were given;
    /// absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_name: Option<String>,
    /// The figures of each run when `--runs N` repeated the scenario (the report's own figures
    /// then summarise them: see "Repeated runs" in docs/ci.md); empty for a single run.
    #[serde(default)]
    pub runs: Vec<RunSample>,
    /// The comparison with a baseline, with `--baseline NAME`.
    #[serde(default)]
    pub comparison: Option<Comparison>,
    /// With several `--target NAME=URL`, the comparison of this entry with the same scenario
    /// against the first target, as if that were the baseline ([`Comparison::baseline`] is then
    /// the first target's name, and each metric's `new / old` is the ratio to it); absent for the
    /// first target itself and in every other run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub side_by_side: Option<Comparison>,
    /// How `cargo loadbench` judged this scenario, as every output marks it; absent in a bench
    /// binary's document and in files from before it was written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<ScenarioVerdict>,
}

/// A scenario's verdict: its mark and the phrases that explain it, as the Markdown, JUnit and HTML
/// say them.
///
/// ```
/// # use cargo_loadbench::{ScenarioVerdict, VerdictStatus};
/// let json = r#"{"status":"inconclusive","reasons":["reached 812/s of the 1,000/s asked, 81.2% (limit: at least 95%)"]}"#;
/// let verdict: ScenarioVerdict = serde_json::from_str(json).unwrap();
/// assert_eq!(verdict.status, VerdictStatus::Inconclusive);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScenarioVerdict {
    /// Passed, a warning, inconclusive or failed.
    pub status: VerdictStatus,
    /// Why: the failures when it failed, the conditions on the generator that failed when
    /// inconclusive, the warnings when it passed with some; empty when it simply passed.
    #[serde(default)]
    pub reasons: Vec<String>,
}

/// What a scenario's figures earned ([`ScenarioVerdict::status`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VerdictStatus {
    /// Nothing to look at.
    Passed,
    /// Passed, with something worth a look (a regression or warning that does not gate, failed
    /// iterations no threshold judged).
    Warning,
    /// The figures are the generator's, not the server's (exit code 4 unless
    /// `--allow-inconclusive`).
    Inconclusive,
    /// A threshold, a gating regression, no successful iteration, not run or interrupted (exit
    /// code 1, 3 or 130).
    Failed,
}

impl ScenarioResult {
    /// `report` as run from no bench target, against no named server, once, compared with
    /// nothing.
    pub fn new(report: ScenarioReport) -> ScenarioResult {
        ScenarioResult {
            report,
            bench: None,
            package: None,
            target_name: None,
            runs: Vec::new(),
            comparison: None,
            side_by_side: None,
            verdict: None,
        }
    }

    /// Whether `other` is the same scenario, from the same bench target and package (against
    /// whichever server).
    pub fn same_scenario(&self, other: &ScenarioResult) -> bool {
        self.name == other.name && self.bench == other.bench && self.package == other.package
    }
}

impl Deref for ScenarioResult {
    type Target = ScenarioReport;

    fn deref(&self) -> &ScenarioReport {
        &self.report
    }
}

impl DerefMut for ScenarioResult {
    fn deref_mut(&mut self) -> &mut ScenarioReport {
        &mut self.report
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use loadbench::report::ConfigReport;

    fn json(result: &ScenarioResult) -> serde_json::Value {
        serde_json::to_value(result).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn one_json_object_that_reads_back_whole() {
        let mut result = ScenarioResult::new(ScenarioReport::not_started("hello", ConfigReport::default()));
        result.http.status = [(200, 9), (503, 1)].into_iter().collect();
        result.bench = Some("api".into());
        let value = json(&result);
        assert_eq!(
            (&value["name"], &value["bench"], &value["http"]["status"]["503"]),
            (&"hello".into(), &"api".into(), &1.into())
        );
        let back: ScenarioResult = serde_json::from_value(value).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back, result);
    }

    #[test]
    fn side_by_side_fields_appear_only_side_by_side() {
        let mut result = ScenarioResult::new(ScenarioReport::not_started("hello", ConfigReport::default()));
        let keys: Vec<String> = json(&result).as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default();
        assert!(!keys.iter().any(|k| k == "target_name" || k == "side_by_side"), "{keys:?}");
        // A file written before these fields existed reads as one without them.
        let old: ScenarioResult = serde_json::from_value(json(&result)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(old, result);

        result.target_name = Some("fast".into());
        let value = json(&result);
        assert_eq!(value["target_name"], "fast");
        let back: ScenarioResult = serde_json::from_value(value).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back.target_name.as_deref(), Some("fast"));
    }
}
