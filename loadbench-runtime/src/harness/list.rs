//! `--list`: the scenarios of this binary and their declared load, as lines on the terminal or,
//! for `cargo loadbench`, as a JSON [`ScenarioList`] in the output file.

use crate::cli::Filter;
use crate::console::{err, out};
use crate::engine::registry::{self, ScenarioEntry};
use crate::engine::{LoadPlan, Sizing};
use crate::exit_code;
use crate::report::{self, SCHEMA_VERSION, ScenarioInfo, ScenarioList, table};
use std::path::Path;

/// Lists the scenarios of `entries` that `filter` selects: to `output` when given, else to stdout.
pub(super) fn list(entries: &[&'static ScenarioEntry], filter: &Filter, output: Option<&Path>) -> u8 {
    let list = ScenarioList {
        schema_version: SCHEMA_VERSION,
        scenarios: registry::select(entries, filter).iter().map(|e| info(e)).collect(),
    };
    match output {
        Some(path) => {
            if let Err(err) = report::write_json_atomic(path, &list) {
                err!("error: cannot write the scenario list to {}: {err}", path.display());
                return exit_code::USAGE;
            }
        }
        None => {
            for s in &list.scenarios {
                out!("{}: {}", s.name, table::describe_config(&s.config));
            }
        }
    }
    exit_code::OK
}

/// One scenario with the load its attribute declares.
fn info(entry: &ScenarioEntry) -> ScenarioInfo {
    let plan = LoadPlan::new(&entry.config, Sizing::Declared);
    ScenarioInfo {
        name: entry.name.to_owned(),
        module_path: entry.module_path.to_owned(),
        file: entry.file.to_owned(),
        line: entry.line,
        config: plan.config_report(&entry.config, entry.config.target),
    }
}
