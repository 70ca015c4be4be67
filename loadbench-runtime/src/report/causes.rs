//! Why iterations failed, in words: the distinct error messages of a scenario (or of one of its
//! steps or named requests) with their counts, the most frequent first, so that a failure's cause
//! reaches every output (table, JSON, Markdown, JUnit) and not only a terminal.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The most frequent causes a report lists; the rest are summed in [`Causes::others`].
pub const LISTED_CAUSES: usize = 10;

/// One distinct failure message and how many failures ended with it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorCause {
    /// The failure's kind, as [`ErrorCounts`](super::ErrorCounts) names it: `"connect"`,
    /// `"timeout"`, `"status"`, `"io"`, `"scenario"`, `"body_too_large"`, `"tls"`, `"panic"`, `"stream_reset"`,
    /// `"protocol"`, `"quic_handshake_timeout"`, `"quic_idle_timeout"`, `"quic_application_close"`,
    /// `"custom"`.
    pub kind: String,
    /// The error's message, its whole chain of causes (`"GET /: connection reset by peer (os
    /// error 104)"`), said once.
    pub message: String,
    /// Failures with this kind and message.
    pub count: u64,
}

/// The causes of a scenario's (or a row's) failures: at most [`LISTED_CAUSES`] distinct
/// messages, most frequent first (ties by kind, then message), and the failures of every other
/// message summed.
///
/// ```
/// # use loadbench::report::{Causes, ErrorCause};
/// let causes = Causes::from_counts([
///     (("scenario".to_owned(), "item had the wrong name".to_owned()), 20),
///     (("io".to_owned(), "connection reset by peer".to_owned()), 3),
/// ]);
/// assert_eq!(causes.top[0].message, "item had the wrong name");
/// assert_eq!(causes.total(), 23);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Causes {
    /// The most frequent messages, at most [`LISTED_CAUSES`], most frequent first.
    #[serde(default)]
    pub top: Vec<ErrorCause>,
    /// Failures whose message is not in `top` (a less frequent one, or one past the distinct
    /// messages a worker keeps), summed.
    #[serde(default)]
    pub others: u64,
}

impl Causes {
    /// Whether no failure is described.
    pub fn is_empty(&self) -> bool {
        self.top.is_empty() && self.others == 0
    }

    /// Failures described, listed or summed.
    pub fn total(&self) -> u64 {
        self.top.iter().map(|c| c.count).sum::<u64>() + self.others
    }

    /// The causes of `counts` (by `(kind, message)`): the most frequent listed, the rest summed.
    pub fn from_counts(counts: impl IntoIterator<Item = ((String, String), u64)>) -> Causes {
        Causes::ranked(counts, 0)
    }

    /// Adds `other`'s causes to these (workers into a scenario, runs of `--runs N` into their
    /// merge): counts of the same message add up, and the list is ranked again. A message that
    /// one side summed in its `others` stays there.
    pub fn merge(&mut self, other: &Causes) {
        let mut counts: BTreeMap<(String, String), u64> = BTreeMap::new();
        for cause in self.top.iter().chain(&other.top) {
            *counts.entry((cause.kind.clone(), cause.message.clone())).or_default() += cause.count;
        }
        *self = Causes::ranked(counts, self.others + other.others);
    }

    fn ranked(counts: impl IntoIterator<Item = ((String, String), u64)>, others: u64) -> Causes {
        let mut all: Vec<ErrorCause> = counts
            .into_iter()
            .filter(|(_, count)| *count > 0)
            .map(|((kind, message), count)| ErrorCause { kind, message, count })
            .collect();
        all.sort_by(|a, b| {
            b.count.cmp(&a.count).then_with(|| a.kind.cmp(&b.kind)).then_with(|| a.message.cmp(&b.message))
        });
        let rest: u64 = all.iter().skip(LISTED_CAUSES).map(|c| c.count).sum();
        all.truncate(LISTED_CAUSES);
        Causes { top: all, others: others + rest }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cause(kind: &str, message: &str, count: u64) -> ((String, String), u64) {
        ((kind.to_owned(), message.to_owned()), count)
    }

    #[test]
    fn the_ten_most_frequent_are_listed_and_the_rest_summed() {
        let causes = Causes::from_counts((1..=12).map(|n| cause("scenario", &format!("item {n}"), n)));
        assert_eq!(causes.top.len(), LISTED_CAUSES);
        assert_eq!(causes.top[0].message, "item 12");
        assert_eq!(causes.others, 1 + 2);
        assert_eq!(causes.total(), (1..=12).sum::<u64>());
    }

    #[test]
    fn merging_adds_the_same_message_and_ranks_again() {
        let mut a = Causes::from_counts([cause("io", "reset", 2), cause("status", "got 503", 5)]);
        let b = Causes { others: 4, ..Causes::from_counts([cause("io", "reset", 7)]) };
        a.merge(&b);
        assert_eq!(a.top[0], ErrorCause { kind: "io".into(), message: "reset".into(), count: 9 });
        assert_eq!(a.others, 4);
        assert_eq!(a.total(), 18);
    }
}
