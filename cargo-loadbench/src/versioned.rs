//! Reading the versioned JSON documents of `loadbench::report` (results, scenario lists,
//! baselines), refusing a schema version this build does not know rather than misreading it.

use std::io::Read as _;
use std::path::Path;

use loadbench::report::{OLDEST_READABLE_VERSION, SCHEMA_VERSION};
use serde::de::DeserializeOwned;

/// The largest document [`read`] takes, in bytes. A shard's results are a few hundred KiB: with
/// histograms, a second of its timeline takes about 450 bytes (its histogram about 330), so an
/// hour's run of one scenario holds about 1.6 MB and a day's about 40 MB. Parsing takes many
/// times the file's size in memory (bench/RESULTS.md § Results file cap), so a file past the cap
/// is refused before it is parsed, and a device or FIFO that never ends (`/dev/zero`) is read no further
/// than it. What a bench binary of this run writes is read with [`read_own`], without it.
pub const MAX_FILE_BYTES: u64 = 64 << 20;

/// Why a document could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The file could not be read at all.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// It is not JSON.
    #[error("invalid JSON: {0}")]
    Json(#[source] serde_json::Error),
    /// It is larger than [`MAX_FILE_BYTES`].
    #[error("it is larger than {} MiB, more than any results document loadbench writes", MAX_FILE_BYTES >> 20)]
    TooLarge,
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
    parse(&read_capped(path)?)
}

/// [`read`] of a document this run's own bench binary wrote, into the scratch directory: not
/// capped, so that a soak of days keeps its results, which are written whatever their size.
pub fn read_own<T: DeserializeOwned>(path: &Path) -> Result<T, ReadError> {
    parse(&std::fs::read(path)?)
}

/// A document of `bytes`, read as the current [`SCHEMA_VERSION`].
fn parse<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ReadError> {
    let mut value: serde_json::Value = serde_json::from_slice(bytes).map_err(ReadError::Json)?;
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

/// The bytes of `path`, refused past [`MAX_FILE_BYTES`]: a regular file by its size, before
/// anything is read; anything else (a FIFO, a device) by reading one byte more than that at most.
fn read_capped(path: &Path) -> Result<Vec<u8>, ReadError> {
    let file = std::fs::File::open(path)?;
    if file.metadata().is_ok_and(|m| m.is_file() && m.len() > MAX_FILE_BYTES) {
        return Err(ReadError::TooLarge);
    }
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(ReadError::TooLarge);
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_never_ends_is_read_no_further_than_the_cap() {
        let started = std::time::Instant::now();
        let err = read::<serde_json::Value>(Path::new("/dev/zero")).map(drop).map_err(|e| e.to_string());
        assert_eq!(err, Err("it is larger than 64 MiB, more than any results document loadbench writes".to_owned()));
        assert!(started.elapsed() < std::time::Duration::from_secs(10), "{:?}", started.elapsed());
    }
}
