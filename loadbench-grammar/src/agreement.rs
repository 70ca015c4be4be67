//! The table of strings that every side of loadbench must judge alike (`tests/agreement.txt`),
//! read once for the tests of each side: the grammar's own, the attribute's (`loadbench-macros`)
//! and the command line's (`cargo-loadbench`). Test support, not public API.

/// What a line's text is written as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `--threshold TEXT`, `thresholds(TEXT)`.
    Threshold,
    /// A threshold on a named row, written `{ROW}:CONDITION` as on the command line
    /// (`--threshold TEXT`); in the attribute, `thresholds("ROW": CONDITION)`.
    Row,
    /// `--rate TEXT`, `rate = "TEXT"`.
    Rate,
    /// `--duration TEXT`, `--timeout TEXT`, `duration = "TEXT"`, `timeout = "TEXT"`.
    Duration,
}

/// One line of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Case {
    /// What the text is written as.
    pub kind: Kind,
    /// Whether every side must accept it (`ok`) or refuse it (`err`).
    pub ok: bool,
    /// The text, as a user writes it.
    pub text: &'static str,
}

/// Every line of the table, or the first malformed one.
pub fn cases() -> Result<Vec<Case>, String> {
    include_str!("../tests/agreement.txt")
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(|line| {
            let mut words = line.splitn(3, ' ');
            let (kind, outcome, text) = match (words.next(), words.next(), words.next()) {
                (Some(kind), Some(outcome), Some(text)) => (kind, outcome, text.trim()),
                _ => return Err(format!("malformed line: {line}")),
            };
            let kind = match kind {
                "threshold" => Kind::Threshold,
                "row" => Kind::Row,
                "rate" => Kind::Rate,
                "duration" => Kind::Duration,
                other => return Err(format!("unknown kind `{other}` in: {line}")),
            };
            let ok = match outcome {
                "ok" => true,
                "err" => false,
                other => return Err(format!("unknown outcome `{other}` in: {line}")),
            };
            Ok(Case { kind, ok, text })
        })
        .collect()
}
