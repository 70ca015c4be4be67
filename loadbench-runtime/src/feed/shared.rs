//! A run's feed, shared by its worker threads, and each virtual user's cursor into it.
//!
//! Taking a record costs one relaxed `fetch_add` (sequential), a few multiplications (random) or
//! an index (per user), plus the record's reference count: no lock, no allocation.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use super::load::{FeedError, LoadError, load};
use super::record::Record;
use super::spec::{FeedEnd, FeedMode, FeedSource};
use crate::error::{Error, Result};

/// One scenario's feed for one run: its records, loaded before the run, and where the
/// sequential index stands.
#[derive(Debug)]
pub(crate) struct Feed {
    source: FeedSource,
    records: Box<[Record]>,
    /// The next record's index for a sequential feed (taken modulo the length when it wraps).
    next: AtomicU64,
    /// A stopping feed has handed out its last record.
    ran_out: AtomicBool,
}

impl Feed {
    /// Reads `source`'s file, unless `stop` is set first. `users` is the scenario's number of
    /// virtual users, which a per-user feed must have a record for each of.
    pub(crate) fn load(source: FeedSource, users: u32, stop: &AtomicBool) -> Result<Feed, LoadError> {
        let records = load(&source.path, source.max_bytes, stop)?;
        if source.mode == FeedMode::PerUser && records.len() < users as usize {
            return Err(FeedError::new(
                &source.path,
                format!(
                    "has {} records, but feed_mode = \"per_user\" needs one for each of the scenario's {users} users",
                    records.len()
                ),
            )
            .into());
        }
        Ok(Feed { source, records: records.into(), next: AtomicU64::new(0), ran_out: AtomicBool::new(false) })
    }

    /// How the feed was declared.
    pub(crate) fn source(&self) -> &FeedSource {
        &self.source
    }

    pub(crate) fn len(&self) -> u64 {
        self.records.len() as u64
    }

    /// Whether a stopping feed has handed out its last record: its scenario starts no more
    /// iterations.
    pub(crate) fn ran_out(&self) -> bool {
        self.ran_out.load(Ordering::Relaxed)
    }

    /// Whether this feed can run out (sequential, `feed_end = "stop"`).
    pub(crate) fn stops(&self) -> bool {
        self.source.mode == FeedMode::Sequential && self.source.end == FeedEnd::Stop
    }

    fn sequential(&self) -> Result<Record> {
        let index = self.next.fetch_add(1, Ordering::Relaxed);
        let len = self.len();
        match self.source.end {
            FeedEnd::Wrap => Ok(self.at(index % len)),
            FeedEnd::Stop if index < len => {
                if index + 1 == len {
                    self.ran_out.store(true, Ordering::Relaxed);
                }
                Ok(self.at(index))
            }
            FeedEnd::Stop => {
                self.ran_out.store(true, Ordering::Relaxed);
                Err(Error::msg(format!(
                    "feed {} ran out after its {len} records (feed_end = \"stop\")",
                    self.source.shown
                )))
            }
        }
    }

    fn at(&self, index: u64) -> Record {
        // `index < len` by construction; `len` is at least 1 (an empty file is refused).
        self.records[usize::try_from(index).unwrap_or(0)].clone()
    }
}

/// A virtual user's access to its scenario's feed.
#[derive(Debug)]
pub(crate) struct FeedCursor {
    feed: Arc<Feed>,
    user: u32,
    /// SplitMix64 state for a random feed, seeded by the user's number.
    state: u64,
}

impl FeedCursor {
    pub(crate) fn new(feed: Arc<Feed>, user: u32) -> FeedCursor {
        FeedCursor { feed, user, state: u64::from(user).wrapping_mul(0xD1B5_4A32_D192_ED03) ^ 0x2545_F491_4F6C_DD1D }
    }

    /// The next record for this user.
    pub(crate) fn take(&mut self) -> Result<Record> {
        let feed = &*self.feed;
        match feed.source.mode {
            FeedMode::Sequential => feed.sequential(),
            FeedMode::Random => {
                // SplitMix64 (Steele, Lea, Flood 2014).
                self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
                let mut z = self.state;
                z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                z ^= z >> 31;
                Ok(feed.at(z % feed.len()))
            }
            FeedMode::PerUser => match feed.records.get(self.user as usize) {
                Some(record) => Ok(record.clone()),
                // Checked against the scenario's users when the feed was loaded.
                None => Err(Error::msg(format!("feed {} has no record for user {}", feed.source.shown, self.user))),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;

    fn feed(mode: FeedMode, end: FeedEnd, users: u32) -> (tempfile::TempDir, Result<Feed, FeedError>) {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("f.csv");
        let mut file = std::fs::File::create(&path).unwrap_or_else(|e| panic!("{e}"));
        file.write_all(b"n\n0\n1\n2\n").unwrap_or_else(|e| panic!("{e}"));
        let feed = match Feed::load(FeedSource::new(path).mode(mode).end(end), users, &AtomicBool::new(false)) {
            Ok(feed) => Ok(feed),
            Err(LoadError::Refused(err)) => Err(err),
            Err(LoadError::Stopped) => panic!("stopped, with no stop asked"),
        };
        (dir, feed)
    }

    fn n(record: Result<Record>) -> String {
        record.and_then(|r| r.get("n").map(str::to_owned)).unwrap_or_else(|e| e.to_string())
    }

    #[test]
    fn sequential_wraps_or_stops() {
        let (_dir, wrap) = feed(FeedMode::Sequential, FeedEnd::Wrap, 1);
        let wrap = Arc::new(wrap.unwrap_or_else(|e| panic!("{e}")));
        let mut cursor = FeedCursor::new(Arc::clone(&wrap), 0);
        assert_eq!((0..5).map(|_| n(cursor.take())).collect::<Vec<_>>(), ["0", "1", "2", "0", "1"]);
        assert!(!wrap.ran_out());

        let (_dir, stop) = feed(FeedMode::Sequential, FeedEnd::Stop, 1);
        let stop = Arc::new(stop.unwrap_or_else(|e| panic!("{e}")));
        let mut cursor = FeedCursor::new(Arc::clone(&stop), 0);
        assert_eq!((0..3).map(|_| n(cursor.take())).collect::<Vec<_>>(), ["0", "1", "2"]);
        assert!(stop.ran_out(), "the last record marks the end");
        assert!(n(cursor.take()).ends_with("ran out after its 3 records (feed_end = \"stop\")"));
    }

    #[test]
    fn random_and_per_user() {
        let (_dir, random) = feed(FeedMode::Random, FeedEnd::Wrap, 1);
        let mut cursor = FeedCursor::new(Arc::new(random.unwrap_or_else(|e| panic!("{e}"))), 4);
        let draws: Vec<String> = (0..300).map(|_| n(cursor.take())).collect();
        for value in ["0", "1", "2"] {
            let seen = draws.iter().filter(|d| *d == value).count();
            assert!((60..=140).contains(&seen), "{value} drawn {seen} times of 300");
        }

        let (_dir, per_user) = feed(FeedMode::PerUser, FeedEnd::Wrap, 3);
        let per_user = Arc::new(per_user.unwrap_or_else(|e| panic!("{e}")));
        let mut second = FeedCursor::new(per_user, 1);
        assert_eq!([n(second.take()), n(second.take())], ["1", "1"]);
        let (_dir, too_few) = feed(FeedMode::PerUser, FeedEnd::Wrap, 4);
        let message = too_few.err().map(|e| e.reason).unwrap_or_default();
        assert_eq!(message, "has 3 records, but feed_mode = \"per_user\" needs one for each of the scenario's 4 users");
    }
}
