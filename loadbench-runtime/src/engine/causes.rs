//! The failure messages of one worker's iterations (or of one of its steps or named requests),
//! counted by kind and message, within a bound: a server whose every error names a different id
//! must not make the generator's memory grow with the run.
//!
//! Only the failure path pays: formatting the error once and one hash. A success touches none of
//! this.

use std::collections::HashMap;

use crate::error::{Error, ErrorKind};
use crate::report::Causes;

/// The distinct messages one worker keeps for one row; failures with any further message are
/// counted in `others`. Ten are listed in the end; the margin lets a frequent message that comes
/// after a few rare ones still be counted.
pub(crate) const KEPT_MESSAGES: usize = 64;

/// The longest message kept, in bytes (cut on a character boundary, with `…`): the JSON holds it
/// whole up to here, and a server's page-long error cannot fill memory.
pub(crate) const MESSAGE_CAP: usize = 1_000;

/// Failures by `(kind, message)`, at most [`KEPT_MESSAGES`] distinct ones, and the rest summed.
#[derive(Debug, Default)]
pub(crate) struct CauseCounts {
    counts: HashMap<(ErrorKind, String), u64>,
    others: u64,
}

impl CauseCounts {
    /// Counts one failure with `err`.
    pub(crate) fn count(&mut self, err: &Error) {
        self.add(err.kind(), capped(err.to_string()), 1);
    }

    /// Counts `n` failures of `kind` with `message`, in the map while it has room for a new
    /// message, else in `others` unless the message is there already.
    fn add(&mut self, kind: ErrorKind, message: String, n: u64) {
        let key = (kind, message);
        if self.counts.len() < KEPT_MESSAGES {
            *self.counts.entry(key).or_default() += n;
        } else if let Some(count) = self.counts.get_mut(&key) {
            *count += n;
        } else {
            self.others += n;
        }
    }

    /// Adds another worker's counts. The merge is bounded as each worker is: what does not fit
    /// is summed in `others`.
    pub(crate) fn merge(&mut self, other: CauseCounts) {
        self.others += other.others;
        // Most frequent first, so that the bound drops the rarest messages.
        let mut counts: Vec<_> = other.counts.into_iter().collect();
        counts.sort_by_key(|&(_, n)| std::cmp::Reverse(n));
        for ((kind, message), n) in counts {
            self.add(kind, message, n);
        }
    }

    /// The causes as the report lists them: the most frequent, the rest summed.
    pub(crate) fn report(&self) -> Causes {
        let counts = self.counts.iter().map(|((kind, message), n)| ((kind.name().to_owned(), message.clone()), *n));
        let mut causes = Causes::from_counts(counts);
        causes.others += self.others;
        causes
    }
}

/// `message`, cut to at most [`MESSAGE_CAP`] bytes on a character boundary, `…` marking the cut.
fn capped(mut message: String) -> String {
    if message.len() > MESSAGE_CAP {
        let mut end = MESSAGE_CAP - '…'.len_utf8();
        while !message.is_char_boundary(end) {
            end -= 1;
        }
        message.truncate(end);
        message.push('…');
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_past_the_bound_are_summed_and_every_failure_is_counted() {
        let mut counts = CauseCounts::default();
        for i in 0..1_000 {
            counts.count(&Error::msg(format!("item {i} had the wrong name")));
            counts.count(&Error::new(ErrorKind::Io, "reset"));
        }
        assert_eq!(counts.counts.len(), KEPT_MESSAGES);
        let causes = counts.report();
        assert_eq!(causes.total(), 2_000);
        assert_eq!(
            (causes.top[0].kind.as_str(), causes.top[0].message.as_str(), causes.top[0].count),
            ("io", "reset", 1_000)
        );
        assert_eq!(causes.top.len(), crate::report::LISTED_CAUSES);
        assert_eq!(causes.others, 1_000 - 9);
    }

    #[test]
    fn workers_merge_by_message_within_the_bound() {
        let (mut a, mut b) = (CauseCounts::default(), CauseCounts::default());
        a.count(&Error::msg("wrong name"));
        b.count(&Error::msg("wrong name"));
        b.count(&Error::new(ErrorKind::Status, "expected status 200, got 503 Service Unavailable"));
        a.merge(b);
        let causes = a.report();
        assert_eq!(causes.top.len(), 2);
        assert_eq!((causes.top[0].message.as_str(), causes.top[0].count), ("wrong name", 2));
        assert_eq!(causes.top[1].kind, "status");
    }

    #[test]
    fn a_long_message_is_cut_on_a_character_boundary() {
        let long = "é".repeat(MESSAGE_CAP);
        let cut = capped(long);
        assert!(cut.len() <= MESSAGE_CAP && cut.ends_with('…'), "{}", cut.len());
        assert_eq!(capped("short".to_owned()), "short");
    }
}
