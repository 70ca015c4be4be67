//! What a scenario declares about its feed, and how its path is resolved.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::load::DEFAULT_MAX_BYTES;

/// How a feed's records are handed to virtual users.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FeedMode {
    /// In file order across all users (one shared atomic index): record 0, 1, 2, … whoever asks.
    /// What happens after the last is [`FeedEnd`]'s.
    #[default]
    Sequential,
    /// A record drawn at random (uniformly, by each user's own generator) at every call; never
    /// runs out.
    Random,
    /// User `u` gets record `u` at every call, for its whole run. A file with fewer records than
    /// the scenario has users is an error before the run.
    PerUser,
}

/// What a [`FeedMode::Sequential`] feed does once every record has been handed out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FeedEnd {
    /// Start again from the first record (Gatling's `circular`).
    #[default]
    Wrap,
    /// The scenario stops starting iterations (Gatling's `queue`): the report says after how
    /// many records and how many of the iterations asked for were not started. An iteration
    /// already running that asks for one more record fails with a `scenario` error saying so.
    Stop,
}

impl std::fmt::Display for FeedMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            FeedMode::Sequential => "sequential",
            FeedMode::Random => "random",
            FeedMode::PerUser => "per_user",
        })
    }
}

impl std::fmt::Display for FeedEnd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            FeedEnd::Wrap => "wrap",
            FeedEnd::Stop => "stop",
        })
    }
}

/// A feed as `#[scenario(feed = "…")]` declares it, in a `const`.
///
/// `path` is as written; a relative one is resolved against `root`, the package's directory
/// (`CARGO_MANIFEST_DIR` when the bench was compiled), so the same file is found whichever
/// directory the binary is started from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeedConfig {
    /// The file, as written in the attribute.
    pub path: &'static str,
    /// The directory a relative `path` is relative to.
    pub root: &'static str,
    /// How records are handed out.
    pub mode: FeedMode,
    /// What a sequential feed does at its end.
    pub end: FeedEnd,
}

impl FeedConfig {
    /// The feed to load: `path` resolved against `root`.
    pub fn source(&self) -> FeedSource {
        let path = Path::new(self.path);
        let path = if path.is_absolute() { path.to_owned() } else { Path::new(self.root).join(path) };
        FeedSource { path, shown: self.path.to_owned(), mode: self.mode, end: self.end, max_bytes: DEFAULT_MAX_BYTES }
    }
}

/// A feed given to [`Harness::feed`](crate::Harness::feed): a CSV file (`.csv`, with a header
/// row) or a JSON-lines file (`.jsonl`, `.ndjson` or `.json`, one object a line), and how its
/// records are handed out.
///
/// A relative path is taken from the current directory (a bench binary runs in its package's
/// directory).
///
/// ```no_run
/// use loadbench::feed::{FeedEnd, FeedMode, FeedSource};
///
/// fn main() -> std::process::ExitCode {
///     loadbench::Harness::new()
///         .feed("log_in", FeedSource::new("data/users.csv").mode(FeedMode::Sequential).end(FeedEnd::Stop))
///         .run()
/// }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeedSource {
    pub(crate) path: PathBuf,
    /// The path as the user wrote it, for the report.
    pub(crate) shown: String,
    pub(crate) mode: FeedMode,
    pub(crate) end: FeedEnd,
    /// The most bytes the file may hold.
    pub(crate) max_bytes: u64,
}

impl FeedSource {
    /// The file at `path`, handed out [`FeedMode::Sequential`]ly, wrapping at its end.
    pub fn new(path: impl Into<PathBuf>) -> FeedSource {
        let path = path.into();
        FeedSource {
            shown: path.display().to_string(),
            path,
            mode: FeedMode::default(),
            end: FeedEnd::default(),
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }

    /// The most bytes the file may hold ([`DEFAULT_MAX_BYTES`], 256 MiB, unless set here): a
    /// longer one, or one that never ends (a pipe, a device), is refused with one line before
    /// any load. The feed is held in memory whole for the run.
    pub fn max_bytes(mut self, bytes: u64) -> FeedSource {
        self.max_bytes = bytes;
        self
    }

    /// How records are handed out.
    pub fn mode(mut self, mode: FeedMode) -> FeedSource {
        self.mode = mode;
        self
    }

    /// What a sequential feed does at its end.
    pub fn end(mut self, end: FeedEnd) -> FeedSource {
        self.end = end;
        self
    }

    /// The file that is read.
    pub fn path(&self) -> &Path {
        &self.path
    }
}
