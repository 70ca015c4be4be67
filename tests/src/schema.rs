//! The JSON Schema of loadbench's results, `schema/results.schema.json` (and the bench binary's
//! document, `schema/run-report.schema.json`), as every test that reads a results document
//! checks it: [`cli::read_report`](crate::cli::read_report) and [`cli::read_json`](crate::cli::read_json)
//! validate the file before parsing it, [`run_scenario`](crate::run_scenario) the report it
//! returns, so a field the Rust types write and the schema does not name fails the test that
//! produced it, with the field's JSON path.
//!
//! ```no_run
//! use loadbench_tests::schema::Schema;
//!
//! let document = serde_json::json!({"schema_version": 2});
//! assert!(Schema::Results.errors(&document).iter().any(|e| e.starts_with("/schema_version: ")));
//! ```

use std::sync::LazyLock;

use jsonschema::{Registry, Validator};
use serde::Serialize;
use serde_json::Value;

/// `schema/results.schema.json`, as committed.
pub const RESULTS_SCHEMA: &str = include_str!("../../schema/results.schema.json");

/// `schema/run-report.schema.json`, as committed.
pub const RUN_REPORT_SCHEMA: &str = include_str!("../../schema/run-report.schema.json");

/// The `$id` of `results.schema.json`, under which the other schemas find its definitions.
pub const RESULTS_ID: &str = "https://example.invalid/loadbench/schema/results.schema.json";

/// A document loadbench writes, or part of one, with its schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Schema {
    /// `cargo loadbench`'s results (`--output FILE.json`, a saved baseline): `cargo_loadbench::Results`.
    Results,
    /// A bench binary's document (`--json FILE`, `LOADBENCH_OUTPUT`): `loadbench::report::RunReport`.
    RunReport,
    /// One entry of a bench binary's document: `loadbench::report::ScenarioReport`.
    ScenarioReport,
}

struct Validators {
    results: Validator,
    run_report: Validator,
    scenario_report: Validator,
}

/// Built once per test binary: a few milliseconds; a validation then takes microseconds.
static VALIDATORS: LazyLock<Validators> = LazyLock::new(|| {
    let results = parse(RESULTS_SCHEMA, "results.schema.json");
    let registry = Registry::new()
        .add(RESULTS_ID, results.clone())
        .and_then(|builder| builder.prepare())
        .unwrap_or_else(|e| panic!("schema/results.schema.json cannot be registered: {e}"));
    let build = |schema: &Value, name: &str| {
        jsonschema::options()
            .with_registry(&registry)
            // `started_at` is a `date-time`; a format is only an annotation unless asked for.
            .should_validate_formats(true)
            .build(schema)
            .unwrap_or_else(|e| panic!("{name} is not a usable JSON Schema: {e}"))
    };
    Validators {
        results: build(&results, "schema/results.schema.json"),
        run_report: build(&parse(RUN_REPORT_SCHEMA, "run-report.schema.json"), "schema/run-report.schema.json"),
        scenario_report: build(
            &serde_json::json!({ "$ref": format!("{RESULTS_ID}#/$defs/scenario_report") }),
            "results.schema.json#/$defs/scenario_report",
        ),
    }
});

fn parse(text: &str, name: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("schema/{name} is not JSON: {e}"))
}

impl Schema {
    /// What is wrong with `document` for this schema, one line per error: the JSON path of the
    /// offending value (`/scenarios/0/generator`), then what is wrong; empty when it is valid.
    pub fn errors(self, document: &Value) -> Vec<String> {
        let validators = &*VALIDATORS;
        let validator = match self {
            Schema::Results => &validators.results,
            Schema::RunReport => &validators.run_report,
            Schema::ScenarioReport => &validators.scenario_report,
        };
        validator
            .iter_errors(document)
            .map(|error| {
                let path = error.instance_path().to_string();
                format!("{}: {error}", if path.is_empty() { "/" } else { &path })
            })
            .collect()
    }

    /// Panics, naming `what` (a file, a test's run) and every error with its JSON path, unless
    /// `document` is valid.
    #[track_caller]
    pub fn assert_valid(self, document: &Value, what: &str) {
        let errors = self.errors(document);
        assert!(
            errors.is_empty(),
            "{what} does not match schema/{} ({self:?}); when a field was added on purpose, describe it there too:\n  {}",
            match self {
                Schema::Results => "results.schema.json",
                Schema::RunReport => "run-report.schema.json",
                Schema::ScenarioReport => "results.schema.json#/$defs/scenario_report",
            },
            errors.join("\n  ")
        );
    }

    /// [`Schema::assert_valid`] on `value` as loadbench writes it (serde_json).
    #[track_caller]
    pub fn assert_serializes_valid(self, value: &impl Serialize, what: &str) {
        let document = serde_json::to_value(value).unwrap_or_else(|e| panic!("{what} does not serialize: {e}"));
        self.assert_valid(&document, what);
    }
}
