//! Property tests of the JSON readers: a baseline (`--baseline NAME`, [`Baselines::load`]) and a
//! results document (what a bench binary reports, read with [`versioned::read`]) are fed
//! arbitrary bytes, real documents cut short at any point, and real documents with any one value
//! replaced by a value of any type. Whatever comes in, the readers never panic, a refused
//! baseline is one line naming its file, and a baseline that is accepted can be compared with; a
//! results document that `report` and `merge` accept merges without a panic. A histogram's
//! encoding, arbitrary, cut short or with bytes replaced, decodes or is refused in a sentence,
//! quickly and within the decoder's bounds.

// A failed expectation is a failed test; `expect` says which.
#![allow(clippy::expect_used)]

use std::path::Path;

use cargo_loadbench::{Results, RunSample, ScenarioResult};
use loadbench::report::{ConfigReport, LatencyReport, RunReport, ScenarioReport};
use proptest::prelude::*;
use serde_json::Value;

use crate::baseline::Baselines;
use crate::{compare, versioned};

/// A results document as a real run writes it: two scenarios, latencies, status codes, runs.
fn real_results() -> Results {
    let config = ConfigReport {
        concurrency: 20,
        count: Some(500),
        timeout_ms: 30_000,
        target: Some("http://127.0.0.1:8080".into()),
        thresholds: vec!["p99 < 50ms".parse().expect("threshold")],
        ..ConfigReport::default()
    };
    let scenario = |name: &str, ok: u64, failed: u64| {
        let mut s = ScenarioResult::new(ScenarioReport::not_started(name, config.clone()));
        (s.iterations, s.ok, s.failed, s.duration_us) = (ok + failed, ok, failed, 1_000_000);
        (s.rps, s.attempts_per_sec) = (ok as f64, (ok + failed) as f64);
        s.errors.status = failed;
        s.http.status = [(200, ok), (503, failed)].into_iter().collect();
        s.http.responses = ok + failed;
        s.latency_us = Some(LatencyReport {
            mean: 900.0,
            stdev: 50.0,
            min: 100.0,
            p50: 800.0,
            p90: 1_000.0,
            p95: 1_000.0,
            p99: 2_000.0,
            p99_9: 3_000.0,
            max: 4_000.0,
            percentiles: Default::default(),
            spectrum: Vec::new(),
            histogram: None,
        });
        s.package = Some("shop".into());
        s.bench = Some("api".into());
        s.runs = vec![RunSample::of(&s), RunSample::of(&s)];
        s
    };
    let mut results = Results::new(std::time::SystemTime::UNIX_EPOCH);
    results.scenarios = vec![scenario("hello", 500, 0), scenario("checkout", 480, 20)];
    results
}

fn real_json() -> Value {
    serde_json::to_value(real_results()).expect("serialize")
}

/// Every node of `value`, depth first, counting `value` itself.
fn node_count(value: &Value) -> usize {
    1 + match value {
        Value::Array(items) => items.iter().map(node_count).sum(),
        Value::Object(fields) => fields.values().map(node_count).sum(),
        _ => 0,
    }
}

/// Replaces node `index` (depth first) of `value` with `with`; returns whether it was found.
fn replace_node(value: &mut Value, index: &mut usize, with: &Value) -> bool {
    if *index == 0 {
        *value = with.clone();
        return true;
    }
    *index -= 1;
    match value {
        Value::Array(items) => items.iter_mut().any(|item| replace_node(item, index, with)),
        Value::Object(fields) => fields.values_mut().any(|field| replace_node(field, index, with)),
        _ => false,
    }
}

/// Removes a field of the object at node `index`, if that node is an object with fields.
fn remove_field(value: &mut Value, index: &mut usize, which: usize) -> bool {
    if *index == 0 {
        if let Value::Object(fields) = value
            && !fields.is_empty()
        {
            let key = fields.keys().nth(which % fields.len()).cloned().unwrap_or_default();
            fields.remove(&key);
        }
        return true;
    }
    *index -= 1;
    match value {
        Value::Array(items) => items.iter_mut().any(|item| remove_field(item, index, which)),
        Value::Object(fields) => fields.values_mut().any(|field| remove_field(field, index, which)),
        _ => false,
    }
}

/// Any JSON value a corrupted or hand-edited file might hold where a figure was.
fn any_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        Just(Value::from(-1.0)),
        Just(Value::from(0)),
        Just(Value::from(u64::MAX)),
        Just(Value::from(1e308)),
        ".{0,12}".prop_map(Value::from),
        Just(Value::from("200")),
    ];
    leaf.prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::vec(("[a-z_]{1,8}", inner), 0..3)
                .prop_map(|fields| Value::Object(fields.into_iter().collect())),
        ]
    })
}

/// Writes `bytes` as baseline `main` under `dir` and loads it: an error must be one line naming
/// the file; an accepted baseline must compare with a real run without a panic.
fn load_baseline(dir: &Path, bytes: &[u8]) -> Result<(), TestCaseError> {
    let baselines = Baselines::new(dir.to_owned());
    let path = baselines.path("main");
    std::fs::create_dir_all(dir.join("main")).expect("mkdir");
    std::fs::write(&path, bytes).expect("write");
    match baselines.load("main") {
        Err(err) => {
            let message = err.to_string();
            prop_assert!(message.contains(&path.display().to_string()), "{message}");
            prop_assert!(!message.contains('\n'), "one line: {message}");
        }
        Ok(baseline) => {
            for mut current in real_results().scenarios {
                // One run now: the plain change, not 10,000 bootstrap resamples per case.
                current.runs.clear();
                let old = baseline.scenario(&current);
                let _ = compare::compare(&current, old, "main", 0.05);
            }
        }
    }
    Ok(())
}

/// Reads `bytes` as what a bench binary reports and as a results document, as `cargo loadbench
/// report` and `merge` do (the plausibility checks too): any outcome but a panic, and an error
/// that says something, on one line.
fn read_results(dir: &Path, bytes: &[u8]) -> Result<(), TestCaseError> {
    let path = dir.join("results.json");
    std::fs::write(&path, bytes).expect("write");
    if let Err(err) = versioned::read::<RunReport>(&path) {
        prop_assert!(!err.to_string().is_empty());
    }
    match crate::dispatch::report::read_saved(&path) {
        Err(err) => {
            let message = err.to_string();
            prop_assert!(message.contains(&path.display().to_string()), "{message}");
            prop_assert!(!message.contains('\n'), "one line: {message}");
        }
        Ok(results) => {
            // What passed can be merged with itself as two shards without a panic.
            let shard = |index: u32| {
                let mut r = results.clone();
                r.shard = Some(loadbench::report::ShardReport { index, count: 2 });
                crate::merge::Shard { path: path.clone(), results: r }
            };
            let _ = crate::merge::merge(vec![shard(0), shard(1)], &[]);
        }
    }
    Ok(())
}

fn config() -> ProptestConfig {
    // A few hundred documents per property keeps the file well under a few seconds in debug.
    ProptestConfig { cases: 300, failure_persistence: None, ..ProptestConfig::default() }
}

#[test]
fn the_real_documents_read_back() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bytes = serde_json::to_vec(&real_json()).expect("serialize");
    let baselines = Baselines::new(dir.path().to_owned());
    std::fs::create_dir_all(dir.path().join("main")).expect("mkdir");
    std::fs::write(baselines.path("main"), &bytes).expect("write");
    let baseline = baselines.load("main").expect("a real baseline loads");
    assert_eq!(baseline.report, real_results());
    let path = dir.path().join("results.json");
    std::fs::write(&path, &bytes).expect("write");
    assert_eq!(crate::dispatch::report::read_saved(&path).expect("a real document is plausible"), real_results());
}

/// Real documents with one count raised to what tampering or a wrap would leave: each is refused
/// naming its field, never read as figures.
#[test]
fn real_documents_with_a_count_out_of_line_are_refused_naming_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("results.json");
    for (pointer, value, field) in [
        ("/scenarios/0/ok", Value::from(501), "scenarios[0].ok"),
        ("/scenarios/1/failed", Value::from(21), "scenarios[1].iterations"),
        ("/scenarios/1/errors/status", Value::from(u64::MAX), "scenarios[1].errors"),
        ("/scenarios/0/http/responses", Value::from(1), "scenarios[0].http.status"),
        ("/scenarios/0/rps", Value::from(-1.0), "scenarios[0].rps"),
    ] {
        let mut json = real_json();
        *json.pointer_mut(pointer).expect("the field") = value;
        std::fs::write(&path, serde_json::to_vec(&json).expect("serialize")).expect("write");
        let err = crate::dispatch::report::read_saved(&path).expect_err(pointer).to_string();
        assert!(err.starts_with(&format!("{}: {field}: ", path.display())), "{pointer}: {err}");
    }
}

/// A real histogram's encoding (latencies of nanoseconds, 3 digits, deflated), as bytes.
fn real_histogram() -> Vec<u8> {
    use base64::Engine as _;
    let mut h = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 10_000_000_000, 3).expect("bounds");
    h.auto(true);
    for i in 1..=2_000_u64 {
        h.record(i * 7_919 % 30_000_000 + 1).expect("records");
    }
    let text = loadbench::report::histogram::encode(&h).expect("encodes");
    base64::engine::general_purpose::STANDARD.decode(text).expect("base64")
}

/// Decodes `bytes` as a histogram's text: a histogram or a sentence, never a panic, within a
/// second, and no larger than the bounds the decoder keeps.
fn decode_histogram(bytes: &[u8]) -> Result<(), TestCaseError> {
    use base64::Engine as _;
    let started = std::time::Instant::now();
    match loadbench::report::histogram::decode(&base64::engine::general_purpose::STANDARD.encode(bytes)) {
        Ok(h) => prop_assert!(h.distinct_values() < 60_000, "{} counters", h.distinct_values()),
        Err(reason) => prop_assert!(!reason.is_empty() && !reason.contains('{') && !reason.contains('\n'), "{reason}"),
    }
    prop_assert!(started.elapsed() < std::time::Duration::from_secs(1), "{:?}", started.elapsed());
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn histograms_of_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        decode_histogram(&bytes)?;
    }

    #[test]
    fn real_histograms_with_bytes_replaced(flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4)) {
        let mut bytes = real_histogram();
        for (at, byte) in flips {
            let i = at.index(bytes.len());
            bytes[i] = byte;
        }
        decode_histogram(&bytes)?;
    }

    #[test]
    fn real_histograms_cut_short(cut in any::<prop::sample::Index>()) {
        let bytes = real_histogram();
        decode_histogram(&bytes[..cut.index(bytes.len())])?;
    }

    #[test]
    fn arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let dir = tempfile::tempdir().expect("tempdir");
        load_baseline(dir.path(), &bytes)?;
        read_results(dir.path(), &bytes)?;
    }

    #[test]
    fn real_documents_cut_short(cut in any::<prop::sample::Index>()) {
        let bytes = serde_json::to_vec_pretty(&real_json()).expect("serialize");
        let cut = &bytes[..cut.index(bytes.len())];
        let dir = tempfile::tempdir().expect("tempdir");
        load_baseline(dir.path(), cut)?;
        read_results(dir.path(), cut)?;
    }

    #[test]
    fn real_documents_with_one_value_replaced(at in any::<prop::sample::Index>(), with in any_value()) {
        let mut json = real_json();
        let mut index = at.index(node_count(&json));
        prop_assert!(replace_node(&mut json, &mut index, &with));
        let bytes = serde_json::to_vec(&json).expect("serialize");
        let dir = tempfile::tempdir().expect("tempdir");
        load_baseline(dir.path(), &bytes)?;
        read_results(dir.path(), &bytes)?;
    }

    #[test]
    fn real_documents_with_one_field_removed(at in any::<prop::sample::Index>(), which in any::<usize>()) {
        let mut json = real_json();
        let mut index = at.index(node_count(&json));
        prop_assert!(remove_field(&mut json, &mut index, which));
        let bytes = serde_json::to_vec(&json).expect("serialize");
        let dir = tempfile::tempdir().expect("tempdir");
        load_baseline(dir.path(), &bytes)?;
        read_results(dir.path(), &bytes)?;
    }

    #[test]
    fn real_documents_with_bytes_flipped(flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4)) {
        let mut bytes = serde_json::to_vec(&real_json()).expect("serialize");
        for (at, byte) in flips {
            let i = at.index(bytes.len());
            bytes[i] = byte;
        }
        let dir = tempfile::tempdir().expect("tempdir");
        load_baseline(dir.path(), &bytes)?;
        read_results(dir.path(), &bytes)?;
    }
}
