//! What makes a scenario's figures inconclusive, said once for every output: the table, Markdown,
//! JUnit and HTML all call [`reasons`], so they say the same thing about the generator.

use loadbench_grammar::{Metric, Op, Threshold};

use super::units::{rate, thousands};
use super::{ScenarioReport, ThresholdOutcome};

/// One sentence per failed condition on the generator ([`ScenarioReport::inconclusive`]):
///
/// - `generator busy: its worker threads were at 97% CPU (1 thread); these figures may be its own
///   limit, not the server's` (the self-check's line, `report::saturation`);
/// - `3.2% of the arrivals dropped (412 of 12,900): no virtual user was free (limit: at most 1%)`;
/// - `reached 812/s of the 1,000/s asked, 81.2% (limit: at least 95%)`.
pub fn reasons(s: &ScenarioReport) -> Vec<String> {
    s.inconclusive.iter().map(|o| reason(s, o)).collect()
}

/// The self-check's line for a saturated generator that did not make the scenario inconclusive
/// (a threshold of its own on `saturated` allowed it), as a warning: `warning: generator busy:
/// …`; `None` when the generator was not saturated, or when [`reasons`] says it instead.
pub fn saturation_warning(s: &ScenarioReport) -> Option<String> {
    if s.inconclusive.iter().any(|o| o.threshold.metric == Metric::Saturated) {
        return None;
    }
    s.generator.as_ref().and_then(super::saturation::line)
}

fn reason(s: &ScenarioReport, outcome: &ThresholdOutcome) -> String {
    let limit = limit(&outcome.threshold);
    match outcome.threshold.metric {
        Metric::Saturated => {
            let line = s.generator.as_ref().and_then(super::saturation::line);
            let line = line.as_deref().map(|l| l.strip_prefix("warning: ").unwrap_or(l));
            line.unwrap_or("the generator was saturated").to_owned()
        }
        Metric::Dropped => {
            let due = s.iterations + s.dropped;
            format!(
                "{} of the arrivals dropped ({} of {}): no virtual user was free (limit: {limit})",
                percent(outcome.actual.unwrap_or(0.0)),
                thousands(s.dropped),
                thousands(due)
            )
        }
        Metric::Rate => match s.rate {
            Some(r) => format!(
                "reached {}/s of the {}/s asked, {} (limit: {limit})",
                rate(r.achieved),
                rate(r.requested),
                percent(outcome.actual.unwrap_or(0.0))
            ),
            None => format!("the arrival rate was not reached (limit: {limit})"),
        },
        // A condition of a later grammar: its threshold and value, as thresholds are written.
        _ => outcome.to_string(),
    }
}

/// `at most 1%`, `at least 95%`: a condition's limit in words.
fn limit(t: &Threshold) -> String {
    let bound = match t.op {
        Op::Lt => "below",
        Op::Le => "at most",
        Op::Gt => "above",
        Op::Ge => "at least",
    };
    match t.metric {
        Metric::Dropped | Metric::Rate => format!("{bound} {}", percent(t.value)),
        _ => t.to_string(),
    }
}

/// `3.2%`, `95%`: a fraction as a percentage, to one decimal unless whole.
fn percent(fraction: f64) -> String {
    let p = fraction * 100.0;
    if (p - p.round()).abs() < 0.05 { format!("{:.0}%", p) } else { format!("{p:.1}%") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::check;
    use crate::report::{ConfigReport, RateReport};

    fn open(requested: f64, achieved: f64, iterations: u64, dropped: u64) -> ScenarioReport {
        let config = ConfigReport { concurrency: 10, rate: Some(requested), ..ConfigReport::default() };
        let mut s = ScenarioReport::not_started("open", config);
        s.iterations = iterations;
        s.ok = iterations;
        s.dropped = dropped;
        s.rate = Some(RateReport { requested, achieved });
        s
    }

    #[test]
    fn a_short_rate_and_dropped_arrivals_are_said_with_their_figures_and_limits() {
        let mut s = open(1_000.0, 812.0, 12_488, 412);
        check::judge(&mut s);
        assert_eq!(
            reasons(&s),
            [
                "3.2% of the arrivals dropped (412 of 12,900): no virtual user was free (limit: at most 1%)",
                "reached 812/s of the 1,000/s asked, 81.2% (limit: at least 95%)",
            ]
        );
    }

    #[test]
    fn a_scenarios_own_condition_replaces_the_default() {
        let mut s = open(1_000.0, 900.0, 9_000, 0);
        check::judge(&mut s);
        assert_eq!(s.inconclusive.len(), 1, "{:?}", s.inconclusive);
        s.config.thresholds = vec!["rate >= 85%".parse().unwrap_or_else(|e| panic!("{e}"))];
        check::judge(&mut s);
        assert!(s.inconclusive.is_empty(), "{:?}", s.inconclusive);
        // A condition on the generator is not a threshold on the server: nothing failed.
        assert!(!check::any_failed(&s));
        s.config.thresholds = vec!["rate >= 95%".parse().unwrap_or_else(|e| panic!("{e}"))];
        check::judge(&mut s);
        assert_eq!(reasons(&s), ["reached 900/s of the 1,000/s asked, 90% (limit: at least 95%)"]);
        assert!(!check::any_failed(&s), "inconclusive, not failed");
    }

    #[test]
    fn the_closed_model_is_judged_only_on_saturation() {
        let config = ConfigReport { concurrency: 10, count: Some(100), ..ConfigReport::default() };
        let mut s = ScenarioReport::not_started("closed", config);
        s.iterations = 100;
        s.ok = 100;
        check::judge(&mut s);
        assert!(s.inconclusive.is_empty(), "{:?}", s.inconclusive);
    }
}
