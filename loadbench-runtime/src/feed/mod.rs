//! Data feeders: records read from a CSV or JSON-lines file once, before any load, and handed to
//! virtual users by [`Ctx::feed`](crate::Ctx::feed).
//!
//! `spec` holds what a scenario declares (`feed = "data/users.csv"`, `feed_mode`, `feed_end`) and
//! what [`Harness::feed`](crate::Harness::feed) takes; `load` reads and parses a file into
//! [`Record`]s (every row parsed here, never on the request path; the read bounded by
//! [`DEFAULT_MAX_BYTES`] and stopped by a signal however it is blocked); `record` is one record;
//! `shared` is a run's feed, shared by its workers (one atomic index, no lock), and each user's
//! cursor into it.
//!
//! The ground floor: uses only `error`. The harness loads every selected scenario's feed before
//! the first load; the engine gives each user's `Ctx` its cursor.

mod load;
mod record;
mod shared;
mod spec;

pub(crate) use load::LoadError;
pub use load::{DEFAULT_MAX_BYTES, FeedError};
pub use record::Record;
pub(crate) use shared::{Feed, FeedCursor};
pub use spec::{FeedConfig, FeedEnd, FeedMode, FeedSource};
