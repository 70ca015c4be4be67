//! One record of a feed: a CSV row under its header, or one JSON object.

use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::{Error, Result};

/// One record of a feed, as [`Ctx::feed`](crate::Ctx::feed) hands it out: cheap to clone (one
/// reference count), parsed when the file was loaded.
///
/// ```no_run
/// #[derive(serde::Deserialize)]
/// struct User {
///     username: String,
///     id: u64,
/// }
///
/// #[loadbench::scenario(concurrency = 10, count = 1_000, feed = "data/users.csv")]
/// async fn profile(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
///     let record = ctx.feed()?;
///     let name = record.get("username")?;
///     ctx.get(&format!("/users/{name}")).send().await?.expect_status(200)?;
///     let user: User = record.parse()?;
///     ctx.get(&format!("/accounts/{}", user.id)).send().await?.expect_status(200)?;
///     Ok(())
/// }
/// # fn main() {}
/// ```
#[derive(Debug, Clone)]
pub struct Record(Arc<Row>);

#[derive(Debug)]
struct Row {
    /// The file, as shown in messages.
    file: Arc<str>,
    /// Its line in the file (1-based; a CSV header is line 1).
    line: u64,
    data: Data,
}

#[derive(Debug)]
enum Data {
    Csv {
        headers: Arc<csv::StringRecord>,
        row: csv::StringRecord,
    },
    /// The object, and the text of each value that is not a string (numbers, booleans, nested
    /// values as JSON), so that [`Record::get`] can lend a `&str` for every column.
    Json {
        object: Value,
        texts: Vec<(String, String)>,
    },
}

impl Record {
    pub(super) fn csv(file: &Arc<str>, line: u64, headers: &Arc<csv::StringRecord>, row: csv::StringRecord) -> Record {
        Record(Arc::new(Row { file: Arc::clone(file), line, data: Data::Csv { headers: Arc::clone(headers), row } }))
    }

    /// `object` must be a JSON object (the loader checks).
    pub(super) fn json(file: &Arc<str>, line: u64, object: Value) -> Record {
        let texts = match &object {
            Value::Object(map) => map
                .iter()
                .filter(|(_, value)| !value.is_string())
                .map(|(key, value)| (key.clone(), value.to_string()))
                .collect(),
            _ => Vec::new(),
        };
        Record(Arc::new(Row { file: Arc::clone(file), line, data: Data::Json { object, texts } }))
    }

    /// The value of `column`, as text: a CSV field, a JSON string, or the JSON text of any other
    /// JSON value (`42`, `true`, `{"a":1}`).
    ///
    /// A column the record does not have is an error (of kind `scenario`) naming it, the file,
    /// the line and the columns there are.
    pub fn get(&self, column: &str) -> Result<&str> {
        let found = match &self.0.data {
            Data::Csv { headers, row } => headers.iter().position(|h| h == column).and_then(|i| row.get(i)),
            Data::Json { object, texts } => match object.get(column) {
                Some(Value::String(text)) => Some(text.as_str()),
                Some(_) => texts.iter().find(|(key, _)| key == column).map(|(_, text)| text.as_str()),
                None => None,
            },
        };
        found.ok_or_else(|| {
            Error::msg(format!(
                "feed {}, line {}: no column `{column}` (it has: {})",
                self.0.file,
                self.0.line,
                self.columns().join(", ")
            ))
        })
    }

    /// The record as a `T`, through serde: by column name for a CSV row (its text converted
    /// to numbers and booleans as the csv crate does), the object itself for a JSON line.
    ///
    /// A record that does not fit `T` is an error (of kind `scenario`) naming the file and line.
    pub fn parse<T: DeserializeOwned>(&self) -> Result<T> {
        let parsed = match &self.0.data {
            Data::Csv { headers, row } => row.deserialize(Some(headers)).map_err(|e| e.to_string()),
            Data::Json { object, .. } => T::deserialize(object).map_err(|e| e.to_string()),
        };
        parsed.map_err(|reason| Error::msg(format!("feed {}, line {}: {reason}", self.0.file, self.0.line)))
    }

    /// The record's line in its file (1-based; a CSV file's header is line 1).
    pub fn line(&self) -> u64 {
        self.0.line
    }

    /// The record's column names, in file order for a CSV row (a JSON object's in key order).
    pub fn columns(&self) -> Vec<&str> {
        match &self.0.data {
            Data::Csv { headers, .. } => headers.iter().collect(),
            Data::Json { object, .. } => {
                object.as_object().map(|m| m.keys().map(String::as_str).collect()).unwrap_or_default()
            }
        }
    }
}
