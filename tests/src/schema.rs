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

use boon::{Compiler, Draft, ErrorKind, SchemaIndex, Schemas, ValidationError};
use serde::Serialize;
use serde_json::Value;

/// `schema/results.schema.json`, as committed.
pub const RESULTS_SCHEMA: &str = include_str!("../../schema/results.schema.json");

/// `schema/run-report.schema.json`, as committed.
pub const RUN_REPORT_SCHEMA: &str = include_str!("../../schema/run-report.schema.json");

/// The `$id` of `results.schema.json`, under which the other schemas find its definitions
/// (`run-report.schema.json` has none: its `$ref` resolves beside it).
pub const RESULTS_ID: &str = "https://example.invalid/loadbench/schema/results.schema.json";

/// Where `run-report.schema.json` is taken to be, beside `results.schema.json`.
const RUN_REPORT_URL: &str = "https://example.invalid/loadbench/schema/run-report.schema.json";

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

struct Compiled {
    schemas: Schemas,
    results: SchemaIndex,
    run_report: SchemaIndex,
    scenario_report: SchemaIndex,
}

/// Compiled once per test binary (each file is also checked against the draft 2020-12
/// meta-schema then): a few milliseconds; a validation then takes microseconds. Nothing is
/// fetched: both files are added as resources, and boon loads no `http(s)` URL by default.
static COMPILED: LazyLock<Compiled> = LazyLock::new(|| {
    let mut compiler = Compiler::new();
    compiler.set_default_draft(Draft::V2020_12);
    // `started_at` is a `date-time`; in draft 2020-12 a format is only an annotation unless asked for.
    compiler.enable_format_assertions();
    for (url, text, name) in
        [(RESULTS_ID, RESULTS_SCHEMA, "results"), (RUN_REPORT_URL, RUN_REPORT_SCHEMA, "run-report")]
    {
        let json = serde_json::from_str(text).unwrap_or_else(|e| panic!("schema/{name}.schema.json is not JSON: {e}"));
        compiler.add_resource(url, json).unwrap_or_else(|e| panic!("schema/{name}.schema.json: {e:#}"));
    }
    let mut schemas = Schemas::new();
    let mut compile = |url: &str| {
        compiler.compile(url, &mut schemas).unwrap_or_else(|e| panic!("{url} is not a usable JSON Schema: {e:#}"))
    };
    let results = compile(RESULTS_ID);
    let run_report = compile(RUN_REPORT_URL);
    let scenario_report = compile(&format!("{RESULTS_ID}#/$defs/scenario_report"));
    Compiled { schemas, results, run_report, scenario_report }
});

/// One innermost error: where (a JSON pointer, `""` for the document) and what.
struct Leaf {
    path: String,
    what: String,
    /// A member refused by `unevaluatedProperties: false` (or an element by `items: false`).
    unevaluated: bool,
}

/// The innermost errors under `error`.
fn leaves(error: &ValidationError<'_, '_>, out: &mut Vec<Leaf>) {
    if error.causes.is_empty() {
        let unevaluated = matches!(error.kind, ErrorKind::FalseSchema);
        let what = if unevaluated {
            "not in the schema: loadbench does not write this".to_owned()
        } else {
            error.kind.to_string()
        };
        out.push(Leaf { path: error.instance_location.to_string(), what, unevaluated });
    }
    for cause in &error.causes {
        leaves(cause, out);
    }
}

/// `leaves` as lines, without the members reported unevaluated only because another error in
/// the same object made the schema that names them fail (in JSON Schema a failed subschema
/// evaluates nothing): such a member is reported once the other error is gone, if it is still
/// unknown.
fn lines(leaves: Vec<Leaf>) -> Vec<String> {
    let real: Vec<&Leaf> = leaves.iter().filter(|leaf| !leaf.unevaluated).collect();
    let shadowed = |leaf: &Leaf| {
        let object = leaf.path.rsplit_once('/').map_or("", |(object, _)| object);
        leaf.unevaluated
            && real.iter().any(|other| other.path == object || other.path.starts_with(&format!("{object}/")))
    };
    leaves
        .iter()
        .filter(|leaf| !shadowed(leaf))
        .map(|leaf| format!("{}: {}", if leaf.path.is_empty() { "/" } else { &leaf.path }, leaf.what))
        .collect()
}

impl Schema {
    /// What is wrong with `document` for this schema, one line per error: the JSON path of the
    /// offending value (`/scenarios/0/generator`), then what is wrong; empty when it is valid.
    pub fn errors(self, document: &Value) -> Vec<String> {
        let compiled = &*COMPILED;
        let index = match self {
            Schema::Results => compiled.results,
            Schema::RunReport => compiled.run_report,
            Schema::ScenarioReport => compiled.scenario_report,
        };
        let mut found = Vec::new();
        if let Err(error) = compiled.schemas.validate(document, index) {
            leaves(&error, &mut found);
        }
        lines(found)
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
