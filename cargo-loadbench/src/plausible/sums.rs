//! The rule of several documents merged: every sum a merge makes fits in 64 bits.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use cargo_loadbench::ScenarioResult;
use serde_json::Value;

use super::{Implausible, wrong};

/// Whether the counts of `parts` (each shard's file and entry of one scenario, at path `at` in
/// each, in shard order) can be added up:
/// for every field, the values it holds in every shard (every second of a timeline, every step,
/// every status code) add up within a `u64`. Each figure a merge adds is a sum of some of those
/// values, so none of its sums can then wrap. The load (`config`, `share`) is not added, nor is
/// what compares or judges an entry.
pub fn sums_fit(at: &str, parts: &[(&Path, &ScenarioResult)]) -> Result<(), (PathBuf, Implausible)> {
    let mut totals: HashMap<String, u64> = HashMap::new();
    for (i, (path, scenario)) in parts.iter().enumerate() {
        let Ok(value) = serde_json::to_value(scenario) else { continue };
        let mut overflow: Option<String> = None;
        add_counts(&value, &mut String::new(), &mut String::new(), &mut totals, &mut overflow);
        if let Some(field) = overflow {
            let with = if i == 0 { "in this shard alone".to_owned() } else { format!("over shards 0 to {i}") };
            let what =
                format!("its values add up past 2^64 - 1 {with}: no run counts that many, and a merge would wrap");
            return Err((path.to_path_buf(), wrong(format!("{at}.{field}"), what)));
        }
    }
    Ok(())
}

/// Fields of a scenario's entry that a merge does not add up.
const NOT_ADDED: [&str; 5] = ["config", "share", "comparison", "side_by_side", "verdict"];

/// Adds every whole number under `value` to `totals`, by its path without array indices
/// (`timeline.requests`, `http.status.200`); the first that does not fit is left in `overflow`.
fn add_counts(
    value: &Value,
    path: &mut String,
    shown: &mut String,
    totals: &mut HashMap<String, u64>,
    overflow: &mut Option<String>,
) {
    if overflow.is_some() {
        return;
    }
    match value {
        Value::Number(n) => {
            if let Some(n) = n.as_u64() {
                let total = totals.entry(path.clone()).or_insert(0);
                match total.checked_add(n) {
                    Some(sum) => *total = sum,
                    None => *overflow = Some(shown.clone()),
                }
            }
        }
        Value::Array(items) => {
            for (k, item) in items.iter().enumerate() {
                let len = shown.len();
                shown.push_str(&format!("[{k}]"));
                add_counts(item, path, shown, totals, overflow);
                shown.truncate(len);
            }
        }
        Value::Object(fields) => {
            for (key, field) in fields {
                if path.is_empty() && NOT_ADDED.contains(&key.as_str()) {
                    continue;
                }
                let (len, shown_len) = (path.len(), shown.len());
                for p in [&mut *path, &mut *shown] {
                    if !p.is_empty() {
                        p.push('.');
                    }
                    p.push_str(key);
                }
                add_counts(field, path, shown, totals, overflow);
                path.truncate(len);
                shown.truncate(shown_len);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use loadbench::report::{ConfigReport, ScenarioReport};

    use super::*;

    #[test]
    fn every_sum_a_merge_makes_must_fit() {
        let mut a = ScenarioResult::new(ScenarioReport::not_started("hello", ConfigReport::default()));
        a.http.status = [(200, u64::MAX / 2)].into_iter().collect();
        // The load is not added up: equal in every shard, however large.
        a.config.count = Some(u64::MAX);
        let mut b = a.clone();
        let (pa, pb) = (Path::new("a.json"), Path::new("b.json"));
        assert_eq!(sums_fit("scenarios[0]", &[(pa, &a), (pb, &b)]), Ok(()));
        b.http.status.insert(200, u64::MAX / 2 + 2);
        let (path, wrong) = sums_fit("scenarios[0]", &[(pa, &a), (pb, &b)]).map_or_else(|e| e, |()| panic!("fits"));
        assert_eq!(path, PathBuf::from("b.json"));
        assert_eq!(
            wrong.to_string(),
            "scenarios[0].http.status.200: its values add up past 2^64 - 1 over shards 0 to 1: no run counts that many, and a merge would wrap"
        );
    }
}
