//! The command line against the table of strings that the grammar and the `#[scenario]` attribute
//! also judge (`loadbench-grammar/tests/agreement.txt`): every flag that takes a line's kind must
//! accept it when the table says `ok` and refuse it when it says `err`, through clap, as a user's
//! command line is parsed.

use clap::Parser;
use loadbench_grammar::agreement::{self, Kind};

use super::Cargo;

/// Every command line that writes `text` as a `kind`, as `--flag=TEXT` so that a text starting
/// with `-` is a value, as it would be for a user.
fn command_lines(kind: Kind, text: &str) -> Vec<Vec<String>> {
    let line = |words: &[&str], flag: &str| {
        let mut args: Vec<String> = ["cargo", "loadbench"].iter().chain(words).map(|w| (*w).to_owned()).collect();
        args.push(format!("{flag}={text}"));
        args
    };
    let url = ["url", "http://127.0.0.1:9/"];
    match kind {
        // Before and after the subcommand: the flag is global.
        Kind::Threshold => vec![line(&[], "--threshold"), line(&url, "--threshold")],
        // In every scenario, and in one named before the braces.
        Kind::Row => {
            let named = |words: &[&str]| {
                let mut args = line(words, "--threshold");
                if let Some(last) = args.last_mut() {
                    *last = format!("--threshold=hello{text}");
                }
                args
            };
            vec![line(&[], "--threshold"), line(&url, "--threshold"), named(&[]), named(&url)]
        }
        Kind::Rate => vec![line(&url, "--rate")],
        Kind::Duration => {
            vec![line(&url, "--duration"), line(&url, "--timeout"), line(&[], "--grace"), line(&url, "--grace")]
        }
    }
}

#[test]
fn the_command_line_judges_every_line_of_the_table_as_it_says() {
    let mut checked = 0;
    for case in agreement::cases().unwrap_or_else(|e| panic!("{e}")) {
        for args in command_lines(case.kind, case.text) {
            match (case.ok, Cargo::try_parse_from(&args)) {
                (true, Ok(_)) => checked += 1,
                // Refused for the value, not for anything else on the command line.
                (false, Err(e)) if e.kind() == clap::error::ErrorKind::ValueValidation => checked += 1,
                (true, Err(e)) => panic!("{case:?} was refused by {args:?}: {e}"),
                (false, Err(e)) => panic!("{case:?} was refused by {args:?} for another reason: {e}"),
                (false, Ok(_)) => panic!("{case:?} was accepted by {args:?}"),
            }
        }
    }
    assert!(checked > 100, "{checked} command lines");
}
