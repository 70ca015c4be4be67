//! The TechEmpower `World` table in a real embedded database: SQLite (through rusqlite, built
//! from source with the `bundled` feature), in a file in a temporary directory, 10,000 rows.

use std::path::Path;
use std::sync::Mutex;

use rusqlite::{Connection, OptionalExtension, params};

/// Rows in the table, as TechEmpower specifies.
pub const ROWS: u32 = 10_000;

/// A few connections to the same database file, handed out round-robin. SQLite serialises
/// writers, but readers run in parallel across connections; each connection is used by one
/// request at a time (its mutex is held for one short query).
#[derive(Debug)]
pub struct World {
    connections: Vec<Mutex<Connection>>,
    next: std::sync::atomic::AtomicUsize,
    // Kept so that the database file lives as long as the server.
    _dir: tempfile::TempDir,
}

/// One row of `world`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    /// 1 to [`ROWS`].
    pub id: u32,
    /// 1 to 10,000.
    pub random_number: u32,
}

impl World {
    /// Creates and fills the database, and opens `connections` connections to it.
    pub fn create(connections: usize) -> rusqlite::Result<World> {
        let dir = tempfile::tempdir().map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
        let path = dir.path().join("world.sqlite");
        fill(&path)?;
        let connections = (0..connections.max(1))
            .map(|_| Connection::open(&path).map(Mutex::new))
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(World { connections, next: Default::default(), _dir: dir })
    }

    /// The row with this id, if there is one.
    pub fn row(&self, id: u32) -> rusqlite::Result<Option<Row>> {
        let i = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % self.connections.len();
        // A poisoned lock only means another request panicked mid-query; the connection is fine.
        let conn = self.connections[i].lock().unwrap_or_else(|p| p.into_inner());
        conn.prepare_cached("SELECT id, randomNumber FROM world WHERE id = ?1")?
            .query_row(params![id], |r| Ok(Row { id: r.get(0)?, random_number: r.get(1)? }))
            .optional()
    }
}

fn fill(path: &Path) -> rusqlite::Result<()> {
    let mut conn = Connection::open(path)?;
    conn.execute_batch(
        "PRAGMA journal_mode = WAL;
         CREATE TABLE world (id INTEGER PRIMARY KEY, randomNumber INTEGER NOT NULL);",
    )?;
    let tx = conn.transaction()?;
    {
        let mut insert = tx.prepare("INSERT INTO world (id, randomNumber) VALUES (?1, ?2)")?;
        let mut rng = fastrand::Rng::with_seed(7);
        for id in 1..=ROWS {
            insert.execute(params![id, rng.u32(1..=10_000)])?;
        }
    }
    tx.commit()
}
