//! Reading a feed's file into records, once, before any load.
//!
//! The file is read on a thread of its own while the caller watches the run's stop flag: a FIFO
//! with no writer blocks in `open`, one whose writer never closes blocks in `read`, and neither
//! may hold a signal up. A stopped read leaves that thread blocked until the process exits (no
//! portable call wakes a blocked `open`); a thread that is not blocked sees the stop at its next
//! read and ends. What is read is bounded ([`DEFAULT_MAX_BYTES`], or
//! [`FeedSource::max_bytes`](super::FeedSource::max_bytes)): a file that never ends (a link to
//! /dev/zero) is refused at the limit instead of filling memory.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

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

/// The most bytes a feed's file may hold unless
/// [`FeedSource::max_bytes`](super::FeedSource::max_bytes) says otherwise: 256 MiB.
///
/// A feed is held in memory whole, from before the load to its end, beside the generator's own
/// memory; its records take more than the file's bytes (a JSON-lines record is a parsed tree,
/// each CSV row its own allocation). 256 MiB is millions of rows, far beyond a load test's data
/// set, yet a few hundred MiB of memory at most; a file past it is far more likely a mistake (a
/// device, a pipe that never ends) than data.
pub const DEFAULT_MAX_BYTES: u64 = 256 * 1024 * 1024;

/// How often the stop flag is checked while the file is read.
const STOP_POLL: Duration = Duration::from_millis(20);

/// Why a feed was not loaded.
#[derive(Debug)]
pub(crate) enum LoadError {
    /// The file cannot be used.
    Refused(FeedError),
    /// A signal stopped the run while the file was being read.
    Stopped,
}

impl From<FeedError> for LoadError {
    fn from(err: FeedError) -> LoadError {
        LoadError::Refused(err)
    }
}

/// The read went past the feed's limit, or was stopped: the reader's own errors, told apart from
/// the file's by their type.
#[derive(Debug, thiserror::Error)]
enum Cut {
    #[error("past the limit")]
    PastLimit,
    #[error("stopped")]
    Stopped,
}

/// A reader that refuses to read past `max` bytes, and stops once `stop` is set.
struct Bounded<R> {
    inner: R,
    read: u64,
    max: u64,
    stop: Arc<AtomicBool>,
}

impl<R: Read> Read for Bounded<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.stop.load(Ordering::Relaxed) {
            return Err(std::io::Error::other(Cut::Stopped));
        }
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        if self.read > self.max {
            return Err(std::io::Error::other(Cut::PastLimit));
        }
        Ok(n)
    }
}

/// `bytes` as a person says it: `256 MiB`, `64 KiB`, `1000 bytes`.
fn size(bytes: u64) -> String {
    const MIB: u64 = 1024 * 1024;
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else if bytes >= 1024 && bytes.is_multiple_of(1024) {
        format!("{} KiB", bytes / 1024)
    } else {
        format!("{bytes} bytes")
    }
}

/// The refusal of a file past `max` bytes.
fn too_large(path: &Path, max: u64) -> FeedError {
    FeedError::new(
        path,
        format!(
            "larger than {}, the most a feed may be (a feed is held in memory whole; \
             FeedSource::max_bytes sets another limit)",
            size(max)
        ),
    )
}

/// What went wrong reading `path`: the reader's cut, or the file's own error, `at` a place
/// (`line 3: `) or none.
fn read_error(path: &Path, max: u64, at: &str, err: &std::io::Error) -> LoadError {
    match err.get_ref().and_then(|e| e.downcast_ref::<Cut>()) {
        Some(Cut::PastLimit) => LoadError::Refused(too_large(path, max)),
        Some(Cut::Stopped) => LoadError::Stopped,
        None => LoadError::Refused(FeedError::new(path, format!("{at}cannot read it: {err}"))),
    }
}

/// Reads every record of `path` as [`read`] does, on a thread of its own, returning as soon as
/// `stop` is set (checked every few milliseconds) with [`LoadError::Stopped`], however the read
/// is blocked. At most `max` bytes are read.
pub(crate) fn load(path: &Path, max: u64, stop: &AtomicBool) -> Result<Vec<Record>, LoadError> {
    // A bad name costs no thread.
    format(path)?;
    let cut = Arc::new(AtomicBool::new(false));
    let (sender, receiver) = mpsc::sync_channel(1);
    let owned: PathBuf = path.to_owned();
    let reader_cut = Arc::clone(&cut);
    std::thread::Builder::new()
        .name("loadbench-feed".to_owned())
        .spawn(move || {
            // The receiver is gone when the read was stopped: nothing to hand over.
            let _ = sender.send(read(&owned, max, reader_cut));
        })
        .map_err(|e| FeedError::new(path, format!("cannot start a thread to read it: {e}")))?;
    loop {
        if stop.load(Ordering::Relaxed) {
            cut.store(true, Ordering::Relaxed);
            return Err(LoadError::Stopped);
        }
        match receiver.recv_timeout(STOP_POLL) {
            Ok(records) => return records,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(LoadError::Refused(FeedError::new(path, "reading it failed")));
            }
        }
    }
}

/// The file's format, from its extension.
enum Format {
    Csv,
    JsonLines,
}

/// The format `path` names by its extension.
fn format(path: &Path) -> Result<Format, FeedError> {
    let extension = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    match extension.as_deref() {
        Some("csv") => Ok(Format::Csv),
        Some("jsonl" | "ndjson" | "json") => Ok(Format::JsonLines),
        _ => Err(FeedError::new(
            path,
            "unknown format: name it .csv (with a header row) or .jsonl (one JSON object a line)",
        )),
    }
}

/// Reads every record of `path`: a CSV file with a header row, or a JSON-lines file with one
/// object a line (blank lines skipped), of at most `max` bytes, until `stop` is set. A file with
/// no record is an error; a regular file past `max` is refused before it is read.
fn read(path: &Path, max: u64, stop: Arc<AtomicBool>) -> Result<Vec<Record>, LoadError> {
    let format = format(path)?;
    let file = File::open(path).map_err(|e| FeedError::new(path, format!("cannot read it: {e}")))?;
    if let Ok(meta) = file.metadata()
        && meta.is_file()
        && meta.len() > max
    {
        return Err(too_large(path, max).into());
    }
    let file = Bounded { inner: file, read: 0, max, stop };
    let shown: Arc<str> = Arc::from(path.display().to_string());
    let records = match format {
        Format::Csv => csv_records(file, &shown, path, max)?,
        Format::JsonLines => json_records(file, &shown, path, max)?,
    };
    if records.is_empty() {
        return Err(FeedError::new(path, "has no records").into());
    }
    Ok(records)
}

fn csv_records(file: impl Read, shown: &Arc<str>, path: &Path, max: u64) -> Result<Vec<Record>, LoadError> {
    let mut reader = csv::ReaderBuilder::new().has_headers(true).from_reader(BufReader::new(file));
    let headers = Arc::new(reader.headers().map_err(|e| csv_error(path, max, &e))?.clone());
    if headers.is_empty() || headers.iter().all(str::is_empty) {
        return Err(
            FeedError::new(path, "line 1: no header row (a CSV feed names its columns on its first line)").into()
        );
    }
    let mut records = Vec::new();
    for row in reader.records() {
        let row = row.map_err(|e| csv_error(path, max, &e))?;
        let line = row.position().map_or(0, csv::Position::line);
        records.push(Record::csv(shown, line, &headers, row));
    }
    Ok(records)
}

/// The csv crate's error as one line with the line number first.
fn csv_error(path: &Path, max: u64, error: &csv::Error) -> LoadError {
    match error.kind() {
        csv::ErrorKind::UnequalLengths { pos, expected_len, len } => {
            let line = pos.as_ref().map_or(0, csv::Position::line);
            FeedError::new(path, format!("line {line}: {len} fields, where the header row has {expected_len}")).into()
        }
        csv::ErrorKind::Utf8 { pos, .. } => {
            let line = pos.as_ref().map_or(0, csv::Position::line);
            FeedError::new(path, format!("line {line}: not valid UTF-8")).into()
        }
        csv::ErrorKind::Io(e) => read_error(path, max, "", e),
        _ => FeedError::new(path, error.to_string()).into(),
    }
}

fn json_records(file: impl Read, shown: &Arc<str>, path: &Path, max: u64) -> Result<Vec<Record>, LoadError> {
    let mut records = Vec::new();
    for (index, line) in BufReader::new(file).lines().enumerate() {
        let number = index as u64 + 1;
        let line = line.map_err(|e| read_error(path, max, &format!("line {number}: "), &e))?;
        if line.trim().is_empty() {
            continue;
        }
        let value: Value = serde_json::from_str(&line)
            .map_err(|e| FeedError::new(path, format!("line {number}: not valid JSON: {e}")))?;
        if !value.is_object() {
            return Err(
                FeedError::new(path, format!("line {number}: not a JSON object (each line is one record)")).into()
            );
        }
        records.push(Record::json(shown, number, value));
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;

    /// Every record of `path`, as a run loads it, never stopped.
    fn load_all(path: &Path) -> Result<Vec<Record>, FeedError> {
        match load(path, DEFAULT_MAX_BYTES, &AtomicBool::new(false)) {
            Ok(records) => Ok(records),
            Err(LoadError::Refused(err)) => Err(err),
            Err(LoadError::Stopped) => panic!("stopped, with no stop asked"),
        }
    }

    fn file(name: &str, text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join(name);
        let mut f = File::create(&path).unwrap_or_else(|e| panic!("{e}"));
        f.write_all(text.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
        (dir, path)
    }

    fn error(name: &str, text: &str) -> String {
        let (_dir, path) = file(name, text);
        match load_all(&path) {
            Ok(records) => panic!("loaded {} records", records.len()),
            Err(e) => e.reason,
        }
    }

    #[test]
    fn csv_rows_are_read_under_their_header() {
        let (_dir, path) = file("users.csv", "username,id\nann,1\nbob,2\n");
        let records = load_all(&path).unwrap_or_else(|e| panic!("{e}"));
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
        let records = load_all(&path).unwrap_or_else(|e| panic!("{e}"));
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
        let missing = load_all(Path::new("/nonexistent/feed.csv")).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(missing.starts_with("feed /nonexistent/feed.csv: cannot read it: "), "{missing}");
    }

    /// The refusal of a feed past `max` bytes, as the user reads it.
    fn past(path: &Path, max: u64) -> String {
        match load(path, max, &AtomicBool::new(false)) {
            Ok(records) => panic!("loaded {} records", records.len()),
            Err(LoadError::Refused(err)) => err.reason,
            Err(LoadError::Stopped) => panic!("stopped, with no stop asked"),
        }
    }

    #[test]
    fn a_feed_past_its_limit_is_refused_whatever_the_file() {
        let limit = "larger than 64 KiB, the most a feed may be (a feed is held in memory whole; \
                     FeedSource::max_bytes sets another limit)";
        // A regular file, by its size, before it is read.
        let rows: String = (0..10_000).map(|i| format!("{i},x\n")).collect();
        let (dir, path) = file("big.csv", &format!("id,v\n{rows}"));
        assert_eq!(past(&path, 64 * 1024), limit);
        assert_eq!(load(&path, 1024 * 1024, &AtomicBool::new(false)).map(|r| r.len()).ok(), Some(10_000));
        // A file that never ends, by what was read: CSV and JSON lines alike.
        for name in ["zero.csv", "zero.jsonl"] {
            let zero = dir.path().join(name);
            std::os::unix::fs::symlink("/dev/zero", &zero).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(past(&zero, 64 * 1024), limit, "{name}");
        }
        assert_eq!(size(DEFAULT_MAX_BYTES), "256 MiB");
        assert_eq!(size(1000), "1000 bytes");
    }

    #[test]
    fn a_stop_ends_a_read_blocked_on_a_fifo() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let fifo = dir.path().join("users.csv");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap_or_else(|e| panic!("{e}"));
        assert!(made.success());
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            flag.store(true, Ordering::SeqCst);
        });
        let start = std::time::Instant::now();
        // No writer: the open itself blocks.
        assert!(matches!(load(&fifo, DEFAULT_MAX_BYTES, &stop), Err(LoadError::Stopped)));
        assert!(start.elapsed() < Duration::from_secs(5), "{:?}", start.elapsed());
    }
}
