//! The JSON Schema of the results (`schema/results.schema.json`, and the bench binary's
//! `schema/run-report.schema.json`) against the Rust types that write the documents: a document
//! with every part present validates, one with nothing optional validates, and every departure
//! from what loadbench writes (an unknown field, a wrong type, another schema version, a missing
//! field) fails with the JSON path of the offending value. The end-to-end tests check each
//! document they read against the same schema (`loadbench_tests::schema`).

#![allow(clippy::expect_used, clippy::unwrap_used)]

#[path = "schema/full.rs"]
mod full;

use cargo_loadbench::{ComparedMetric, Method, Results, ScenarioResult, Verdict};
use loadbench::feed::{FeedEnd, FeedMode};
use loadbench::report::{ConfigReport, ErrorCounts, GeneratorLimit, ScenarioReport};
use loadbench::threshold::Op;
use loadbench_tests::schema::{RESULTS_SCHEMA, RUN_REPORT_SCHEMA, Schema};
use serde_json::{Value, json};

fn to_value(value: &impl serde::Serialize) -> Value {
    serde_json::to_value(value).expect("serializes")
}

/// Every JSON pointer of `value`'s objects' members and arrays' elements, parents first.
fn pointers(value: &Value, at: String, out: &mut Vec<String>) {
    let children: Vec<(String, &Value)> = match value {
        Value::Object(map) => map.iter().map(|(k, v)| (k.replace('~', "~0").replace('/', "~1"), v)).collect(),
        Value::Array(items) => items.iter().enumerate().map(|(i, v)| (i.to_string(), v)).collect(),
        _ => Vec::new(),
    };
    for (key, child) in children {
        let pointer = format!("{at}/{key}");
        out.push(pointer.clone());
        pointers(child, pointer, out);
    }
}

#[test]
fn a_document_with_every_part_present_validates() {
    let document = to_value(&full::results());
    // The builder is what this test relies on: nothing in it is null or empty, so every field
    // of every type is in the document (a field added to a type as `None` would slip through).
    let mut all = Vec::new();
    pointers(&document, String::new(), &mut all);
    for pointer in &all {
        let value = document.pointer(pointer).expect("listed");
        let empty = match value {
            Value::Null => true,
            Value::Array(items) => items.is_empty(),
            Value::Object(map) => map.is_empty(),
            _ => false,
        };
        assert!(!empty, "{pointer} is {value}: fill it in tests/tests/schema/full.rs");
    }
    Schema::Results.assert_valid(&document, "every part present");
    let run = full::run_report(vec![full::scenario_report()]);
    Schema::RunReport.assert_serializes_valid(&run, "a bench binary's document, every part present");
    Schema::ScenarioReport.assert_serializes_valid(&full::scenario_report(), "a scenario report, every part present");
    // And the Rust reader reads it back whole.
    assert_eq!(serde_json::from_value::<Results>(document).expect("reads back"), full::results());
}

#[test]
fn a_document_with_nothing_optional_validates() {
    let report = ScenarioReport::not_started("idle", ConfigReport::default());
    Schema::Results.assert_serializes_valid(&full::run_report(vec![ScenarioResult::new(report.clone())]), "minimal");
    Schema::RunReport.assert_serializes_valid(&full::run_report(vec![report]), "minimal");
    Schema::Results.assert_serializes_valid(&full::run_report(Vec::<ScenarioResult>::new()), "no scenario");
}

#[test]
fn what_the_schema_leaves_optional_the_reader_does_without() {
    // Each member of the full document, removed: either the schema refuses the document, or the
    // Rust reader (`cargo_loadbench::Results`) reads it. A document the schema accepts is one
    // loadbench reads.
    let document = to_value(&full::results());
    let mut all = Vec::new();
    pointers(&document, String::new(), &mut all);
    let mut optional = 0;
    for pointer in all {
        let (parent, key) = pointer.rsplit_once('/').expect("a pointer has a slash");
        let mut edited = document.clone();
        let Some(Value::Object(map)) = edited.pointer_mut(parent) else { continue };
        map.remove(&key.replace("~1", "/").replace("~0", "~"));
        if Schema::Results.errors(&edited).is_empty() {
            optional += 1;
            if let Err(e) = serde_json::from_value::<Results>(edited) {
                panic!("without {pointer} the schema accepts the document but loadbench refuses it: {e}");
            }
        }
    }
    assert!(optional > 50, "only {optional} optional members: did the walk run?");
}

/// `(what is changed, the change, the JSON path an error names, words of that error)`.
type Mutation = (&'static str, fn(&mut Value), &'static str, &'static str);

#[test]
fn a_departure_from_what_loadbench_writes_fails_naming_its_path() {
    let mutations: [Mutation; 14] = [
        ("an unknown top-level field", |d| d["extra"] = json!(1), "/extra", "not in the schema"),
        (
            "an unknown field in a scenario",
            |d| d["scenarios"][0]["saturation"] = json!("cpu"),
            "/scenarios/0/saturation",
            "not in the schema",
        ),
        (
            "an unknown field in `generator`",
            |d| d["scenarios"][0]["generator"]["cause"] = json!("machine"),
            "/scenarios/0/generator",
            "'cause'",
        ),
        (
            "an unknown field in a step",
            |d| d["scenarios"][0]["steps"][0]["verdict"] = json!("improved"),
            "/scenarios/0/steps/0",
            "'verdict'",
        ),
        (
            "an unknown field in a cause",
            |d| d["scenarios"][0]["causes"]["top"][0]["first_seen"] = json!(0),
            "/scenarios/0/causes/top/0",
            "'first_seen'",
        ),
        ("schema_version 3", |d| d["schema_version"] = json!(3), "/schema_version", "must be one of 1, 2"),
        (
            "a count written as a string",
            |d| d["scenarios"][0]["iterations"] = json!("12"),
            "/scenarios/0/iterations",
            "want integer, but got string",
        ),
        ("a negative count", |d| d["scenarios"][0]["ok"] = json!(-1), "/scenarios/0/ok", "must be >=0, but got -1"),
        (
            "an unknown error kind",
            |d| d["scenarios"][0]["causes"]["top"][0]["kind"] = json!("dns"),
            "/scenarios/0/causes/top/0/kind",
            "must be one of 'connect'",
        ),
        (
            "an unknown verdict",
            |d| d["scenarios"][0]["comparison"]["verdict"] = json!("better"),
            "/scenarios/0/comparison/verdict",
            "must be one of 'improved'",
        ),
        (
            "a required field missing",
            |d| drop(d["scenarios"][0].as_object_mut().map(|s| s.remove("rps"))),
            "/scenarios/0",
            "missing properties 'rps'",
        ),
        ("a start that is not a time", |d| d["started_at"] = json!("yesterday"), "/started_at", "date-time"),
        (
            "a status that is not a code",
            |d| d["scenarios"][0]["http"]["status"]["2xx"] = json!(1),
            "/scenarios/0/http/status",
            "additionalProperties '2xx' not allowed",
        ),
        (
            "a percentile of 100",
            |d| d["scenarios"][0]["latency_us"]["percentiles"]["p100"] = json!(1.0),
            "/scenarios/0/latency_us/percentiles",
            "additionalProperties 'p100' not allowed",
        ),
    ];
    let document = to_value(&full::results());
    for (what, mutate, path, words) in mutations {
        let mut edited = document.clone();
        mutate(&mut edited);
        let errors = Schema::Results.errors(&edited);
        // That error alone: nothing else in the document is wrong.
        assert!(
            errors.len() == 1 && errors[0].starts_with(&format!("{path}: ")) && errors[0].contains(words),
            "{what}: expected one error at {path} with {words}, got {errors:#?}"
        );
    }
}

#[test]
fn a_bench_binary_document_has_no_subcommand_fields() {
    let mut document = to_value(&full::run_report(vec![full::scenario_report()]));
    document["scenarios"][0]["bench"] = json!("api");
    let errors = Schema::RunReport.errors(&document);
    assert!(errors.iter().any(|e| e.starts_with("/scenarios/0/bench: ")), "{errors:#?}");
    assert!(Schema::Results.errors(&document).is_empty(), "the subcommand's results may have it");
}

#[test]
fn a_schema_pointer_for_editors_is_allowed_at_the_top_only() {
    let mut document = to_value(&full::results());
    document["$schema"] = json!("../schema/results.schema.json");
    assert_eq!(Schema::Results.errors(&document), Vec::<String>::new());
    assert_eq!(serde_json::from_value::<Results>(document.clone()).expect("loadbench ignores it"), full::results());
    document["scenarios"][0]["$schema"] = json!("../schema/results.schema.json");
    assert!(!Schema::Results.errors(&document).is_empty());
}

/// The definition `name` of `results.schema.json`.
fn definition(name: &str) -> Value {
    let schema: Value = serde_json::from_str(RESULTS_SCHEMA).expect("JSON");
    schema["$defs"][name].clone()
}

/// The values of the `enum` at `pointer` in `results.schema.json`'s definitions, sorted.
fn enum_at(pointer: &str) -> Vec<Value> {
    let schema: Value = serde_json::from_str(RESULTS_SCHEMA).expect("JSON");
    let mut values =
        schema.pointer(pointer).and_then(Value::as_array).cloned().unwrap_or_else(|| panic!("no enum at {pointer}"));
    values.sort_by_key(Value::to_string);
    values
}

/// `values` serialized, sorted.
fn names<T: serde::Serialize>(values: impl IntoIterator<Item = T>) -> Vec<Value> {
    let mut names: Vec<Value> = values.into_iter().map(|v| to_value(&v)).collect();
    names.sort_by_key(Value::to_string);
    names
}

#[test]
fn every_kind_the_rust_types_know_is_in_the_schema_and_no_other() {
    // A match without a wildcard: a new variant stops this compiling until it is listed here.
    let verdicts = [Verdict::Improved, Verdict::Regressed, Verdict::NoChange, Verdict::New, Verdict::NotComparable];
    let _ = |v: Verdict| match v {
        Verdict::Improved | Verdict::Regressed | Verdict::NoChange | Verdict::New | Verdict::NotComparable => (),
    };
    let methods = [Method::Bootstrap, Method::Paired, Method::SingleRun, Method::None];
    let _ = |m: Method| match m {
        Method::Bootstrap | Method::Paired | Method::SingleRun | Method::None => (),
    };
    let modes = [FeedMode::Sequential, FeedMode::Random, FeedMode::PerUser];
    let _ = |m: FeedMode| match m {
        FeedMode::Sequential | FeedMode::Random | FeedMode::PerUser => (),
    };
    let ends = [FeedEnd::Wrap, FeedEnd::Stop];
    let _ = |e: FeedEnd| match e {
        FeedEnd::Wrap | FeedEnd::Stop => (),
    };
    assert_eq!(enum_at("/$defs/verdict/enum"), names(verdicts));
    assert_eq!(enum_at("/$defs/comparison_fields/properties/method/enum"), names(methods));
    assert_eq!(enum_at("/$defs/metric_change/properties/metric/enum"), names(ComparedMetric::ALL));
    assert_eq!(enum_at("/$defs/config/properties/feed/properties/mode/enum"), names(modes));
    assert_eq!(enum_at("/$defs/config/properties/feed/properties/end/enum"), names(ends));
    assert_eq!(enum_at("/$defs/op/enum"), names(Op::ALL));
    // `GeneratorLimit` is non-exhaustive, so no match can list it here: its variants, then null.
    let limits = [GeneratorLimit::GeneratorCpu, GeneratorLimit::MachineBusy, GeneratorLimit::GeneratorStalled];
    let mut limits = names(limits);
    limits.push(Value::Null);
    assert_eq!(enum_at("/$defs/generator/properties/limit/enum"), limits);
    // The kinds of failure: the fields of `errors`, which the document's own closed object lists.
    let kinds: Vec<Value> =
        to_value(&ErrorCounts::default()).as_object().expect("an object").keys().map(|k| json!(k)).collect();
    assert_eq!(enum_at("/$defs/error_kind/enum"), names(kinds));
    let counted: Vec<Value> =
        definition("error_counts")["properties"].as_object().expect("properties").keys().map(|k| json!(k)).collect();
    assert_eq!(enum_at("/$defs/error_kind/enum"), names(counted));
}

/// Every subschema of `schema` (objects only), with its JSON pointer.
fn subschemas<'a>(schema: &'a Value, at: &str, out: &mut Vec<(String, &'a Value)>) {
    match schema {
        Value::Object(map) => {
            out.push((at.to_owned(), schema));
            for (key, value) in map {
                subschemas(value, &format!("{at}/{key}"), out);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                subschemas(item, &format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn the_schema_files_are_draft_2020_12_and_every_field_is_described() {
    for (name, text) in [("results.schema.json", RESULTS_SCHEMA), ("run-report.schema.json", RUN_REPORT_SCHEMA)] {
        let schema: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(schema["$schema"], "https://json-schema.org/draft/2020-12/schema", "{name}");
        for field in ["title", "description", "$comment"] {
            assert!(schema[field].is_string(), "{name} has no {field}");
        }
    }
    let results: Value = serde_json::from_str(RESULTS_SCHEMA).expect("JSON");
    assert_eq!(results["$id"], loadbench_tests::schema::RESULTS_ID);
    // A percentile's name is written once as a definition, and once as the key pattern of
    // `latency.percentiles` (a pattern cannot be a `$ref`).
    let percentiles = &results["$defs"]["latency"]["properties"]["percentiles"]["patternProperties"];
    let pattern = &results["$defs"]["percentile_name"]["pattern"];
    assert_eq!(
        percentiles.as_object().map(|p| p.keys().map(String::as_str).collect::<Vec<_>>()),
        Some(vec![pattern.as_str().expect("a pattern")])
    );
    // Compiling them checks each against the draft 2020-12 meta-schema (and panics if one fails).
    assert!(!Schema::RunReport.errors(&json!({})).is_empty());
    // Every property and definition says what it is (or is a `$ref` to a definition that does).
    let schema: Value = serde_json::from_str(RESULTS_SCHEMA).expect("JSON");
    let mut all = Vec::new();
    subschemas(&schema, "", &mut all);
    for (pointer, sub) in all {
        let parent = pointer.rsplit_once('/').map_or("", |(parent, _)| parent);
        let named = parent.ends_with("/properties") || parent == "/$defs";
        if named && sub.get("description").is_none() && sub.get("$ref").is_none() {
            panic!("results.schema.json#{pointer} has no description");
        }
        // loadbench's own objects are closed: a field the schema does not name is an error.
        if sub.get("properties").is_some() && sub.get("additionalProperties").is_none() {
            let shared =
                ["/$defs/run_header", "/$defs/scenario_fields", "/$defs/comparison_fields"].contains(&pointer.as_str());
            let closed = sub.get("unevaluatedProperties") == Some(&json!(false));
            assert!(shared || closed, "results.schema.json#{pointer} lets unknown fields through");
        }
    }
}
