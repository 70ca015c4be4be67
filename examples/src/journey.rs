//! The business-journey application's data: accounts, sessions and records in a real embedded
//! database, SQLite (through rusqlite, built from source), in a file in a temporary directory.
//!
//! Seeded with [`USERS`] accounts (`user1` … `user1000`, password `password1` … — a demo, not a
//! password store) and [`RECORDS`] records. Sessions live in the database too, so logging in and
//! out are writes, as in most web applications.
//!
//! Concurrent writers: SQLite allows one writer at a time per database file. Rather than let
//! 100 connections race for the write lock (and fail with `SQLITE_BUSY` or sleep in its retry
//! loop), every write goes through one connection behind a mutex, in WAL mode with
//! `synchronous = NORMAL`, so a commit appends to the log without an fsync and takes
//! microseconds. Reads go round-robin through a few other connections and, in WAL mode, never
//! wait for the writer. Every connection still has a 5 s `busy_timeout`, for the moments SQLite
//! itself holds a lock (a checkpoint).

use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, params};

/// Accounts in the seeded database.
pub const USERS: u32 = 1_000;

/// Records in the seeded database, ids 1 to 10,000.
pub const RECORDS: u32 = 10_000;

/// How long a connection waits for a lock SQLite holds before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// One record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// Its id.
    pub id: i64,
    /// The account that inserted it.
    pub owner: i64,
    /// Its text.
    pub body: String,
}

/// The database: one writing connection, a few reading ones.
#[derive(Debug)]
pub struct Journey {
    writer: Mutex<Connection>,
    readers: Vec<Mutex<Connection>>,
    next: AtomicUsize,
    // Kept so that the database file lives as long as the application.
    _dir: tempfile::TempDir,
}

impl Journey {
    /// Creates and seeds the database, and opens one writing and `readers` reading connections.
    pub fn create(readers: usize) -> rusqlite::Result<Journey> {
        let dir = tempfile::tempdir().map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
        let path = dir.path().join("journey.sqlite");
        seed(&path)?;
        let writer = open(&path).map(Mutex::new)?;
        let readers = (0..readers.max(1)).map(|_| open(&path).map(Mutex::new)).collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(Journey { writer, readers, next: AtomicUsize::new(0), _dir: dir })
    }

    /// Checks `user`'s password and opens a session: its token, or `None` for wrong credentials.
    pub fn log_in(&self, user: &str, password: &str) -> rusqlite::Result<Option<String>> {
        let account: Option<i64> = self.read(|conn| {
            conn.prepare_cached("SELECT id FROM users WHERE name = ?1 AND password = ?2")?
                .query_row(params![user, password], |r| r.get(0))
                .optional()
        })?;
        let Some(account) = account else { return Ok(None) };
        // Unguessable enough for a demo; a real application would use a CSPRNG.
        let token = format!("{:032x}", fastrand::u128(..));
        self.write(|conn| {
            conn.prepare_cached("INSERT INTO sessions (token, user_id) VALUES (?1, ?2)")?
                .execute(params![token, account])
        })?;
        Ok(Some(token))
    }

    /// The account of the session `token`, if it is open.
    pub fn session(&self, token: &str) -> rusqlite::Result<Option<i64>> {
        self.read(|conn| {
            conn.prepare_cached("SELECT user_id FROM sessions WHERE token = ?1")?
                .query_row(params![token], |r| r.get(0))
                .optional()
        })
    }

    /// Ends the session `token`; `false` if it was not open.
    pub fn log_out(&self, token: &str) -> rusqlite::Result<bool> {
        self.write(|conn| conn.prepare_cached("DELETE FROM sessions WHERE token = ?1")?.execute(params![token]))
            .map(|deleted| deleted > 0)
    }

    /// Inserts a record owned by `owner` and returns its id.
    pub fn insert(&self, owner: i64, body: &str) -> rusqlite::Result<i64> {
        self.write(|conn| {
            conn.prepare_cached("INSERT INTO records (user_id, body) VALUES (?1, ?2)")?
                .execute(params![owner, body])?;
            Ok(conn.last_insert_rowid())
        })
    }

    /// The record with this id, if there is one.
    pub fn record(&self, id: i64) -> rusqlite::Result<Option<Record>> {
        self.read(|conn| {
            conn.prepare_cached("SELECT id, user_id, body FROM records WHERE id = ?1")?
                .query_row(params![id], |r| Ok(Record { id: r.get(0)?, owner: r.get(1)?, body: r.get(2)? }))
                .optional()
        })
    }

    /// Records in the database.
    pub fn count(&self) -> rusqlite::Result<i64> {
        self.read(|conn| conn.query_row("SELECT count(*) FROM records", [], |r| r.get(0)))
    }

    fn read<T>(&self, query: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> rusqlite::Result<T> {
        let i = self.next.fetch_add(1, Ordering::Relaxed) % self.readers.len();
        // A poisoned lock only means another request panicked mid-query; the connection is fine.
        let conn = self.readers[i].lock().unwrap_or_else(|p| p.into_inner());
        query(&conn)
    }

    fn write<T>(&self, change: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> rusqlite::Result<T> {
        let conn = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        change(&conn)
    }
}

fn open(path: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    // Per connection: a commit in WAL mode then reaches the log without waiting for the disk.
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    Ok(conn)
}

fn seed(path: &Path) -> rusqlite::Result<()> {
    let mut conn = open(path)?;
    conn.execute_batch(
        "PRAGMA journal_mode = WAL;
         CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, password TEXT NOT NULL);
         CREATE TABLE sessions (token TEXT PRIMARY KEY, user_id INTEGER NOT NULL REFERENCES users (id));
         CREATE TABLE records (
             id INTEGER PRIMARY KEY,
             user_id INTEGER NOT NULL REFERENCES users (id),
             body TEXT NOT NULL
         );",
    )?;
    let tx = conn.transaction()?;
    {
        let mut user = tx.prepare("INSERT INTO users (id, name, password) VALUES (?1, ?2, ?3)")?;
        for n in 1..=USERS {
            user.execute(params![n, format!("user{n}"), format!("password{n}")])?;
        }
        let mut record = tx.prepare("INSERT INTO records (id, user_id, body) VALUES (?1, ?2, ?3)")?;
        let mut rng = fastrand::Rng::with_seed(11);
        for id in 1..=RECORDS {
            record.execute(params![id, rng.u32(1..=USERS), format!("order {id}: {} items", rng.u32(1..=20))])?;
        }
    }
    tx.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_lets_its_user_insert_and_read_until_it_ends() {
        let db = Journey::create(2).unwrap();
        assert_eq!(db.count().unwrap(), i64::from(RECORDS));
        assert_eq!(db.log_in("user7", "wrong").unwrap(), None);
        let token = db.log_in("user7", "password7").unwrap().unwrap();
        let user = db.session(&token).unwrap().unwrap();
        let id = db.insert(user, "hello").unwrap();
        assert_eq!(id, i64::from(RECORDS) + 1);
        assert_eq!(db.record(id).unwrap(), Some(Record { id, owner: user, body: "hello".into() }));
        assert!(db.record(42).unwrap().is_some());
        assert_eq!(db.record(i64::from(RECORDS) + 2).unwrap(), None);
        assert!(db.log_out(&token).unwrap());
        assert_eq!(db.session(&token).unwrap(), None);
        assert!(!db.log_out(&token).unwrap());
    }
}
