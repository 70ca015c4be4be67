//! `--target`, given once or as several `NAME=URL`s that run side by side: parsing, the order in
//! which (scenario, target) pairs run, and the comparison of every target with the first.
//!
//! Side by side, every selected scenario runs against every target, and each target's figures
//! are compared with the first target's as if the first were a baseline: the same bootstrap
//! verdict ([`compare::compare`]), with the runs of both interleaved in time so that the
//! machine's drift hits them alike.

use std::ops::ControlFlow;

use cargo_loadbench::{Results, Verdict};

use crate::compare;
use crate::error::Error;

/// One `--target`: a bare `URL`, or `NAME=URL` for runs that compare several servers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetArg {
    /// The name before `=`; `None` for a bare URL.
    pub name: Option<String>,
    /// The base URL.
    pub url: String,
}

impl TargetArg {
    /// Parses `fast=http://127.0.0.1:8080` or `http://127.0.0.1:8080`, checking the URL's syntax
    /// (not whether anything answers there).
    pub fn parse(text: &str) -> Result<TargetArg, String> {
        let (name, url) = match text.split_once('=') {
            // A `=` after the scheme belongs to the URL's path, not to a name.
            Some((name, url)) if !name.contains("://") => (Some(name), url),
            _ => (None, text),
        };
        if let Some(name) = name {
            check_name(name)?;
        }
        loadbench::http::Target::check_syntax(url).map_err(|e| e.to_string())?;
        Ok(TargetArg { name: name.map(str::to_owned), url: url.to_owned() })
    }

    /// The name, or the URL for an unnamed target.
    pub fn label(&self) -> &str {
        self.name.as_deref().unwrap_or(&self.url)
    }
}

/// A target name shows in tables and file names' worth of places, so it is kept to characters
/// that need no quoting anywhere.
fn check_name(name: &str) -> Result<(), String> {
    let safe = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if name.is_empty() || !name.chars().all(safe) {
        return Err(format!(
            "`{name}` is not a target name: write NAME=URL, with a name of letters, digits, `-`, `_` and `.`"
        ));
    }
    Ok(())
}

/// The `--target`s of a run, checked together: none (each scenario's own target), one, or
/// several with distinct names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Targets(Vec<TargetArg>);

impl Targets {
    /// Checks what clap cannot see one value at a time: with several targets, each needs a name
    /// (the table and the JSON tell them apart by it) and no name may be given twice.
    pub fn new(targets: &[TargetArg]) -> Result<Targets, Error> {
        if targets.len() > 1 {
            if let Some(bare) = targets.iter().find(|t| t.name.is_none()) {
                return Err(Error::Targets(format!(
                    "`{}` has no name; with several targets write each as NAME=URL",
                    bare.url
                )));
            }
            for (i, target) in targets.iter().enumerate() {
                if targets[..i].iter().any(|earlier| earlier.name == target.name) {
                    return Err(Error::Targets(format!(
                        "the name `{}` is given twice; each target needs a name of its own",
                        target.label()
                    )));
                }
            }
        }
        Ok(Targets(targets.to_vec()))
    }

    /// Every target, in the order given; the first is the one the others are compared with.
    pub fn list(&self) -> &[TargetArg] {
        &self.0
    }

    /// Whether scenarios run against several targets, side by side.
    pub fn side_by_side(&self) -> bool {
        self.0.len() > 1
    }

    /// Refuses `--baseline` and `--save-baseline` side by side: a baseline holds one server's
    /// figures per scenario, and which of several servers' figures to keep or to compare with
    /// would be a guess.
    pub fn check_baselines(&self, baseline: Option<&str>, save_baseline: Option<&str>) -> Result<(), Error> {
        let flag = match (baseline, save_baseline) {
            _ if !self.side_by_side() => return Ok(()),
            (Some(_), _) => "--baseline",
            (None, Some(_)) => "--save-baseline",
            (None, None) => return Ok(()),
        };
        Err(Error::Targets(format!(
            "{flag} works with one target; with several, each is compared with the first instead"
        )))
    }
}

/// Calls `run` for every item against every target, in the order that keeps a comparison fair:
/// item by item, each against the first target, the second, … in turn. Called once per round of
/// `--runs N`, that makes the runs A B A B …, so that whatever the machine does meanwhile (a
/// neighbour starting, throttling) hits every target alike. Stops when `run` breaks, and says so.
///
/// An item is whatever one start of a run covers: a bench binary's scenario for `cargo
/// loadbench`, a URL's load for a one-shot run.
pub fn for_each_pair<I, T>(
    items: &[I],
    targets: &[T],
    mut run: impl FnMut(&I, &T) -> ControlFlow<()>,
) -> ControlFlow<()> {
    for item in items {
        for target in targets {
            run(item, target)?;
        }
    }
    ControlFlow::Continue(())
}

/// The name of the first target, when `report` ran against several (as
/// [`ScenarioResult::target_name`](loadbench::report::ScenarioResult::target_name) tells).
pub fn reference(report: &Results) -> Option<&str> {
    let first = report.scenarios.iter().find_map(|s| s.target_name.as_deref())?;
    report.scenarios.iter().any(|s| s.target_name.as_deref().is_some_and(|t| t != first)).then_some(first)
}

/// Fills in [`ScenarioResult::side_by_side`](loadbench::report::ScenarioResult::side_by_side)
/// of every entry that ran against another target than `first`: its comparison with the same
/// scenario against `first`, by [`compare::compare`] as if that were the baseline. `noise` is a
/// fraction (0.05 for 5 %).
pub fn compare_with_first(report: &mut Results, first: &str, noise: f64) {
    let references: Vec<_> =
        report.scenarios.iter().filter(|s| s.target_name.as_deref() == Some(first)).cloned().collect();
    for scenario in &mut report.scenarios {
        if scenario.target_name.is_none() || scenario.target_name.as_deref() == Some(first) {
            continue;
        }
        let reference = references.iter().find(|r| r.same_scenario(scenario));
        let mut comparison = compare::compare(scenario, reference, first, noise);
        let against = format!("against `{first}`");
        if comparison.verdict == Verdict::New {
            // Only an interrupted run leaves a scenario without its first target's run.
            comparison.verdict = Verdict::NotComparable;
            comparison.reason = Some(format!("it did not run {against}"));
        }
        comparison.reason = comparison.reason.map(|reason| reason.replace("in the baseline", &against));
        scenario.side_by_side = Some(comparison);
    }
}

#[cfg(test)]
// A failed expectation is a failed test; `expect` says which.
#[allow(clippy::expect_used)]
mod tests {
    use super::*;
    use cargo_loadbench::ScenarioResult;

    fn arg(text: &str) -> TargetArg {
        TargetArg::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn a_target_is_a_url_or_a_named_url() {
        assert_eq!(arg("http://127.0.0.1:8080"), TargetArg { name: None, url: "http://127.0.0.1:8080".into() });
        assert_eq!(
            arg("fast-1.v2=http://127.0.0.1:8080/api"),
            TargetArg { name: Some("fast-1.v2".into()), url: "http://127.0.0.1:8080/api".into() }
        );
        assert_eq!(arg("http://h/a=b").name, None, "a `=` in the path is the URL's");
    }

    #[test]
    fn bad_names_and_urls_are_named() {
        for (text, message) in [
            ("=http://h", "`` is not a target name"),
            ("my server=http://h", "`my server` is not a target name"),
            ("fast=127.0.0.1:80", "target `127.0.0.1:80` is not a valid URL"),
            ("fast=ftp://h", "target `ftp://h`: the scheme must be http:// or https://"),
            ("fast=", "target `` is not a valid URL"),
            ("nonsense", "target `nonsense` is not a valid URL"),
        ] {
            let err = TargetArg::parse(text).expect_err(text);
            assert!(err.starts_with(message), "{text}: {err}");
        }
    }

    #[test]
    fn several_targets_need_distinct_names() {
        let ok = Targets::new(&[arg("a=http://h:1"), arg("b=http://h:1")]).expect("distinct names");
        assert!(ok.side_by_side());
        assert!(!Targets::new(&[arg("http://h:1")]).expect("one bare").side_by_side());
        assert!(!Targets::new(&[]).expect("none").side_by_side());

        let twice = Targets::new(&[arg("a=http://h:1"), arg("b=http://h:2"), arg("a=http://h:3")]);
        assert_eq!(
            twice.expect_err("duplicate").to_string(),
            "--target: the name `a` is given twice; each target needs a name of its own"
        );
        let mixed = Targets::new(&[arg("a=http://h:1"), arg("http://h:2")]);
        assert_eq!(
            mixed.expect_err("mixed").to_string(),
            "--target: `http://h:2` has no name; with several targets write each as NAME=URL"
        );
    }

    #[test]
    fn baselines_are_for_one_target() {
        let two = Targets::new(&[arg("a=http://h:1"), arg("b=http://h:2")]).expect("two");
        assert_eq!(
            two.check_baselines(Some("main"), None).expect_err("--baseline").to_string(),
            "--target: --baseline works with one target; with several, each is compared with the first instead"
        );
        assert!(two.check_baselines(None, Some("main")).is_err());
        assert!(two.check_baselines(None, None).is_ok());
        let one = Targets::new(&[arg("a=http://h:1")]).expect("one");
        assert!(one.check_baselines(Some("main"), Some("next")).is_ok());
    }

    #[test]
    fn pairs_run_item_by_item_each_against_every_target_in_turn() {
        let mut order = Vec::new();
        let done = for_each_pair(&["hello", "login"], &["a", "b", "c"], |item, target| {
            order.push(format!("{item}@{target}"));
            ControlFlow::Continue(())
        });
        assert_eq!(done, ControlFlow::Continue(()));
        assert_eq!(order, ["hello@a", "hello@b", "hello@c", "login@a", "login@b", "login@c"]);

        let mut ran = 0;
        let stopped = for_each_pair(&[1, 2], &[1, 2], |_, _| {
            ran += 1;
            if ran == 3 { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
        });
        assert_eq!((stopped, ran), (ControlFlow::Break(()), 3));
    }

    /// `name` against `target`, with runs of these it/s and p50 = p99 latencies (µs).
    fn scenario(name: &str, target: &str, runs: &[(f64, f64)]) -> ScenarioResult {
        let mut s = crate::compare::tests::scenario_with_runs(name, runs);
        s.target_name = Some(target.into());
        s
    }

    #[test]
    fn every_target_but_the_first_is_compared_with_the_first() {
        let fast = [(3000.0, 2_000.0), (3100.0, 2_050.0), (2950.0, 1_990.0)];
        let slow = [(1000.0, 6_000.0), (1010.0, 6_100.0), (990.0, 5_950.0)];
        let mut broken = scenario("login", "slow", &[]);
        broken.setup_error = Some("refused".into());
        let mut report = Results::new(std::time::SystemTime::UNIX_EPOCH);
        report.scenarios = vec![
            scenario("hello", "fast", &fast),
            scenario("hello", "slow", &slow),
            scenario("hello", "same", &fast),
            scenario("login", "fast", &fast),
            broken,
        ];
        assert_eq!(reference(&report), Some("fast"));
        compare_with_first(&mut report, "fast", 0.05);

        assert_eq!(report.scenarios[0].side_by_side, None, "the first target is the reference");
        let slow = report.scenarios[1].side_by_side.as_ref().expect("slow compared");
        assert_eq!((slow.baseline.as_str(), slow.verdict), ("fast", Verdict::Regressed));
        let rps = slow.metrics.iter().find(|m| m.metric == cargo_loadbench::ComparedMetric::Rps).expect("it/s");
        assert!((rps.new / rps.old - 1000.0 / 3000.0).abs() < 1e-9, "{rps:?}");
        let same = report.scenarios[2].side_by_side.as_ref().expect("same compared");
        assert_eq!(same.verdict, Verdict::NoChange);
        let broken = report.scenarios[4].side_by_side.as_ref().expect("broken compared");
        assert_eq!((broken.verdict, broken.reason.as_deref()), (Verdict::NotComparable, Some("it did not run")));
    }

    #[test]
    fn one_target_is_no_side_by_side() {
        let mut report = Results::new(std::time::SystemTime::UNIX_EPOCH);
        report.scenarios = vec![scenario("hello", "fast", &[(1.0, 1.0)]), scenario("login", "fast", &[(1.0, 1.0)])];
        assert_eq!(reference(&report), None);
        report.scenarios[1].target_name = None;
        assert_eq!(reference(&report), None);
    }
}
