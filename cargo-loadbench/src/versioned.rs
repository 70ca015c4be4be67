//! Reading the versioned JSON documents of `loadbench::report` (results, scenario lists,
//! baselines), refusing a schema version this build does not know rather than misreading it.

use std::path::Path;

use loadbench::report::{OLDEST_READABLE_VERSION, SCHEMA_VERSION};
use serde::de::DeserializeOwned;

/// Why a document could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The file could not be read at all.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// It is not JSON.
    #[error("invalid JSON: {0}")]
    Json(#[source] serde_json::Error),
    /// It has no `schema_version`.
    #[error("it has no schema_version")]
    NoVersion,
    /// It has a `schema_version` this build does not read.
    #[error(
        "it has result schema {0}, this cargo-loadbench reads schemas {OLDEST_READABLE_VERSION} to {SCHEMA_VERSION}"
    )]
    Version(u64),
    /// It has the right version but not the expected fields.
    #[error("unexpected layout: {0}")]
    Layout(#[source] serde_json::Error),
}

/// Reads `path` as a `T` of the current [`SCHEMA_VERSION`]. A file of an older version this build
/// still reads ([`OLDEST_READABLE_VERSION`]) is read as the current one, whose added fields it
/// lacks, and says the current version from then on, as it would be written again.
pub fn read<T: DeserializeOwned>(path: &Path) -> Result<T, ReadError> {
    let bytes = std::fs::read(path)?;
    let mut value: serde_json::Value = serde_json::from_slice(&bytes).map_err(ReadError::Json)?;
    let readable = u64::from(OLDEST_READABLE_VERSION)..=u64::from(SCHEMA_VERSION);
    match value.get("schema_version").and_then(serde_json::Value::as_u64) {
        Some(v) if readable.contains(&v) => {}
        Some(v) => return Err(ReadError::Version(v)),
        None => return Err(ReadError::NoVersion),
    }
    if let Some(version) = value.get_mut("schema_version") {
        *version = SCHEMA_VERSION.into();
    }
    serde_json::from_value(value).map_err(ReadError::Layout)
}
