//! Reading a feed's file into records, once, before any load.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use super::record::Record;

/// Why a feed cannot be used: one line naming the file (and the line, for a malformed one).
/// The harness prints it as `error: …` and exits with code 2 before any load.
#[derive(Debug, thiserror::Error)]
#[error("feed {file}: {reason}")]
pub struct FeedError {
    /// The file, as read (a relative path from the attribute resolved against the package).
    pub file: String,
    /// What is wrong, with the line when there is one.
    pub reason: String,
}

impl FeedError {
    pub(crate) fn new(file: &Path, reason: impl Into<String>) -> FeedError {
        FeedError { file: file.display().to_string(), reason: reason.into() }
    }
}

/// The file's format, from its extension.
enum Format {
    Csv,
    JsonLines,
}

/// Reads every record of `path`: a CSV file with a header row, or a JSON-lines file with one
/// object a line (blank lines skipped). A file with no record is an error.
pub(crate) fn load(path: &Path) -> Result<Vec<Record>, FeedError> {
    let extension = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    let format = match extension.as_deref() {
        Some("csv") => Format::Csv,
        Some("jsonl" | "ndjson" | "json") => Format::JsonLines,
        _ => {
            return Err(FeedError::new(
                path,
                "unknown format: name it .csv (with a header row) or .jsonl (one JSON object a line)",
            ));
        }
    };
    let file = File::open(path).map_err(|e| FeedError::new(path, format!("cannot read it: {e}")))?;
    let shown: Arc<str> = Arc::from(path.display().to_string());
    let records = match format {
        Format::Csv => csv_records(file, &shown, path)?,
        Format::JsonLines => json_records(file, &shown, path)?,
    };
    if records.is_empty() {
        return Err(FeedError::new(path, "has no records"));
    }
    Ok(records)
}

fn csv_records(file: File, shown: &Arc<str>, path: &Path) -> Result<Vec<Record>, FeedError> {
    let mut reader = csv::ReaderBuilder::new().has_headers(true).from_reader(BufReader::new(file));
    let headers = Arc::new(reader.headers().map_err(|e| csv_error(path, &e))?.clone());
    if headers.is_empty() || headers.iter().all(str::is_empty) {
        return Err(FeedError::new(path, "line 1: no header row (a CSV feed names its columns on its first line)"));
    }
    let mut records = Vec::new();
    for row in reader.records() {
        let row = row.map_err(|e| csv_error(path, &e))?;
        let line = row.position().map_or(0, csv::Position::line);
        records.push(Record::csv(shown, line, &headers, row));
    }
    Ok(records)
}

/// The csv crate's error as one line with the line number first.
fn csv_error(path: &Path, error: &csv::Error) -> FeedError {
    match error.kind() {
        csv::ErrorKind::UnequalLengths { pos, expected_len, len } => {
            let line = pos.as_ref().map_or(0, csv::Position::line);
            FeedError::new(path, format!("line {line}: {len} fields, where the header row has {expected_len}"))
        }
        csv::ErrorKind::Utf8 { pos, .. } => {
            let line = pos.as_ref().map_or(0, csv::Position::line);
            FeedError::new(path, format!("line {line}: not valid UTF-8"))
        }
        csv::ErrorKind::Io(e) => FeedError::new(path, format!("cannot read it: {e}")),
        _ => FeedError::new(path, error.to_string()),
    }
}

fn json_records(file: File, shown: &Arc<str>, path: &Path) -> Result<Vec<Record>, FeedError> {
    let mut records = Vec::new();
    for (index, line) in BufReader::new(file).lines().enumerate() {
        let number = index as u64 + 1;
        let line = line.map_err(|e| FeedError::new(path, format!("line {number}: cannot read it: {e}")))?;
        if line.trim().is_empty() {
            continue;
        }
        let value: Value = serde_json::from_str(&line)
            .map_err(|e| FeedError::new(path, format!("line {number}: not valid JSON: {e}")))?;
        if !value.is_object() {
            return Err(FeedError::new(path, format!("line {number}: not a JSON object (each line is one record)")));
        }
        records.push(Record::json(shown, number, value));
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;

    fn file(name: &str, text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join(name);
        let mut f = File::create(&path).unwrap_or_else(|e| panic!("{e}"));
        f.write_all(text.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
        (dir, path)
    }

    fn error(name: &str, text: &str) -> String {
        let (_dir, path) = file(name, text);
        match load(&path) {
            Ok(records) => panic!("loaded {} records", records.len()),
            Err(e) => e.reason,
        }
    }

    #[test]
    fn csv_rows_are_read_under_their_header() {
        let (_dir, path) = file("users.csv", "username,id\nann,1\nbob,2\n");
        let records = load(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(records.len(), 2);
        assert_eq!(records[1].get("username").ok(), Some("bob"));
        assert_eq!(records[1].line(), 3);
        #[derive(serde::Deserialize)]
        struct User {
            username: String,
            id: u64,
        }
        let user: User = records[0].parse().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((user.username.as_str(), user.id), ("ann", 1));
        let missing = records[0].get("usrname").err().map(|e| e.to_string()).unwrap_or_default();
        assert!(missing.contains("line 2: no column `usrname` (it has: username, id)"), "{missing}");
    }

    #[test]
    fn json_lines_are_objects() {
        let (_dir, path) = file("users.jsonl", "{\"username\":\"ann\",\"id\":7}\n\n{\"username\":\"bob\",\"id\":8}\n");
        let records = load(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(records.len(), 2);
        assert_eq!(records[0].get("id").ok(), Some("7"));
        assert_eq!(records[1].line(), 3);
        let id: serde_json::Value = records[1].parse().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(id["id"], 8);
    }

    #[test]
    fn bad_files_name_the_line() {
        assert_eq!(error("a.csv", "a,b\n1,2\n3\n"), "line 3: 1 fields, where the header row has 2");
        assert_eq!(error("a.csv", "a,b\n"), "has no records");
        assert_eq!(error("a.csv", ""), "line 1: no header row (a CSV feed names its columns on its first line)");
        assert_eq!(error("a.jsonl", "{\"a\":1}\n[1]\n"), "line 2: not a JSON object (each line is one record)");
        assert!(error("a.jsonl", "{\"a\":1}\n{oops\n").starts_with("line 2: not valid JSON: "));
        assert!(error("a.txt", "x").starts_with("unknown format"));
        let missing = load(Path::new("/nonexistent/feed.csv")).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(missing.starts_with("feed /nonexistent/feed.csv: cannot read it: "), "{missing}");
    }
}
