//! The results of a run: the versioned JSON document (`schema`, the contract between a bench
//! binary, `cargo loadbench` and any tool that reads the files), and what reads it: the results
//! table, the threshold check, and the number formats they share (`units`).
//!
//! Uses only the ground floor and the shared grammar: the engine and the harness fill the
//! document, and nothing here depends on them.

pub mod check;
mod comparison;
mod runs;
mod schema;
pub mod table;
pub mod units;

pub use comparison::{ComparedMetric, Comparison, Method, MetricChange, Verdict};
pub use runs::RunSample;
pub use schema::*;
