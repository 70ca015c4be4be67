//! Every iteration of a run accounted for, by outcome: what the fault suites (`tests/faults.rs`,
//! `tests/hostile_h2.rs`) assert after each hostile server.

use std::collections::BTreeMap;

use serde_json::Value;

/// The number at `path` (`errors.io`) in `v`; 0 when absent.
pub fn n(v: &Value, path: &str) -> u64 {
    path.split('.').try_fold(v, |v, key| v.get(key)).and_then(Value::as_u64).unwrap_or(0)
}

/// Checks that every iteration of scenario `s` is accounted for exactly (`iterations` is
/// `asked`, when given; `ok` + each error kind + `cancelled` is `iterations`; `failed` is the
/// errors' sum) and returns the outcomes that happened, by name: `ok`, `cancelled` and the
/// error kinds (every kind the document has, the ones added since included).
#[track_caller]
pub fn account(s: &Value, asked: Option<u64>) -> BTreeMap<String, u64> {
    let iterations = n(s, "iterations");
    if let Some(asked) = asked {
        assert_eq!(iterations, asked, "iterations run: {s:#}");
    }
    let errors = s["errors"].as_object().expect("errors by kind");
    let failed: u64 = errors.values().map(|v| v.as_u64().expect("a count")).sum();
    assert_eq!(n(s, "failed"), failed, "failed is the sum of the kinds: {s:#}");
    let mut outcomes: BTreeMap<String, u64> =
        errors.iter().map(|(kind, count)| (kind.clone(), count.as_u64().unwrap_or(0))).collect();
    outcomes.insert("ok".into(), n(s, "ok"));
    outcomes.insert("cancelled".into(), n(s, "cancelled"));
    assert_eq!(outcomes.values().sum::<u64>(), iterations, "ok + errors + cancelled = iterations: {s:#}");
    outcomes.retain(|_, count| *count > 0);
    outcomes
}

/// The outcomes a test expects, as [`account`] returns them.
pub fn outcomes(expected: &[(&str, u64)]) -> BTreeMap<String, u64> {
    expected.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect()
}
