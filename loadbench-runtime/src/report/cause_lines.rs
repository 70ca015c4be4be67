//! The causes of failures under the results table: for a scenario, and for each of its steps and
//! named requests, the distinct messages with their counts, one a line, aligned under the first.
//!
//! ```text
//! checkout: causes: 20 × scenario: item had the wrong name
//!                    3 × io: request failed: reading the response failed: Connection reset by peer (os error 104)
//!                   … and 4 more failures with other messages
//! checkout (step pay): causes: 3 × status: expected status 200, got 503 Service Unavailable
//! ```
//!
//! A long message is cut here only (the JSON keeps it whole), and a line break in one (a
//! server's page) is a space, so that every cause stays one line of a CI log.

use super::units::thousands;
use super::{Causes, ScenarioReport};

/// The most characters of a message the table shows; the JSON has the rest.
pub const TABLE_MESSAGE: usize = 160;

/// The lines of `scenario`'s causes, then its steps' and its named requests', under `label`.
/// Nothing for a scenario, step or request that did not fail.
pub fn lines(scenario: &ScenarioReport, label: &str) -> Vec<String> {
    let mut out = block(&format!("{label}: "), &scenario.causes);
    for step in &scenario.steps {
        out.extend(block(&format!("{label} (step {}): ", step.name), &step.causes));
    }
    for request in &scenario.requests {
        out.extend(block(&format!("{label} (request {}): ", request.name), &request.causes));
    }
    out
}

/// `{head}causes: N × kind: message`, one line per cause, the counts right-aligned, then how many
/// failures had other messages.
fn block(head: &str, causes: &Causes) -> Vec<String> {
    if causes.is_empty() {
        return Vec::new();
    }
    let lead = format!("{head}causes: ");
    let indent = " ".repeat(lead.chars().count());
    let width = causes.top.iter().map(|c| thousands(c.count).len()).max().unwrap_or(0);
    let mut out: Vec<String> = causes
        .top
        .iter()
        .enumerate()
        .map(|(i, cause)| {
            let start = if i == 0 { &lead } else { &indent };
            format!("{start}{:>width$} × {}: {}", thousands(cause.count), cause.kind, one_line(&cause.message))
        })
        .collect();
    if causes.others > 0 {
        let noun = if causes.others == 1 { "failure" } else { "failures" };
        let n = thousands(causes.others);
        out.push(if out.is_empty() {
            format!("{lead}{n} {noun}, their messages not kept")
        } else {
            format!("{indent}… and {n} more {noun} with other messages")
        });
    }
    out
}

/// `message` on one line (a control character, such as a line break, is a space), cut to
/// [`TABLE_MESSAGE`] characters with `…`: a message as a table, or a CI screen, shows it.
///
/// ```
/// use loadbench::report::cause_lines::{TABLE_MESSAGE, one_line};
/// assert_eq!(one_line("bad gateway\r\n"), "bad gateway  ");
/// assert_eq!(one_line(&"x".repeat(500)).chars().count(), TABLE_MESSAGE);
/// ```
pub fn one_line(message: &str) -> String {
    let mut out: String = message.chars().take(TABLE_MESSAGE).map(|c| if c.is_control() { ' ' } else { c }).collect();
    if message.chars().nth(TABLE_MESSAGE).is_some() {
        out.pop();
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{ConfigReport, ErrorCause};

    fn cause(kind: &str, message: &str, count: u64) -> ErrorCause {
        ErrorCause { kind: kind.into(), message: message.into(), count }
    }

    #[test]
    fn causes_are_aligned_under_their_scenario_and_the_rest_summed() {
        let mut s = ScenarioReport::not_started("checkout", ConfigReport::default());
        assert!(lines(&s, "checkout").is_empty(), "no failure, no line");
        s.causes = Causes {
            top: vec![
                cause("scenario", "item had the wrong name", 1_020),
                cause("io", "request failed: Connection reset by peer (os error 104)", 3),
            ],
            others: 4,
        };
        assert_eq!(
            lines(&s, "checkout"),
            [
                "checkout: causes: 1,020 × scenario: item had the wrong name",
                "                      3 × io: request failed: Connection reset by peer (os error 104)",
                "                  … and 4 more failures with other messages",
            ]
        );
    }

    #[test]
    fn a_long_or_multiline_message_is_one_cut_line() {
        let long = format!("line one\nline two {}", "x".repeat(500));
        let shown = one_line(&long);
        assert_eq!(shown.chars().count(), TABLE_MESSAGE);
        assert!(shown.starts_with("line one line two xx") && shown.ends_with('…'), "{shown}");
        assert_eq!(one_line("short"), "short");
    }
}
