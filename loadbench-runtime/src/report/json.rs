//! Writing result files atomically: into a temporary file in the same directory, then renamed over
//! the destination, so that a reader never sees half a file and a crash never leaves one. Every
//! file loadbench writes (results, lists, baselines, every output format) goes through here.

use std::io::Write as _;
use std::path::Path;

use serde::Serialize;

/// Writes `contents` to `path` atomically, creating missing directories (so that `--output
/// reports/loadbench.xml` works in a fresh checkout).
pub fn write_atomic(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir)?;
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    file.write_all(contents)?;
    file.as_file().sync_all()?;
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Writes `value` as pretty JSON, ending in a newline, to `path` atomically.
pub fn write_json_atomic<T: Serialize>(path: &Path, value: &T) -> std::io::Result<()> {
    let mut json = serde_json::to_vec_pretty(value)?;
    json.push(b'\n');
    write_atomic(path, &json)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_replaced_whole_and_directories_made() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("new/dir/results.json");
        write_json_atomic(&path, &[1, 2]).unwrap_or_else(|e| panic!("{e}"));
        write_json_atomic(&path, &[3]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(std::fs::read_to_string(&path).ok().as_deref(), Some("[\n  3\n]\n"));
        assert_eq!(std::fs::read_dir(path.parent().unwrap_or(dir.path())).map(Iterator::count).ok(), Some(1));
    }
}
