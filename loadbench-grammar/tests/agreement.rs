//! The grammar's own functions against the shared table of strings (`agreement.txt`), which the
//! attribute's and the command line's tests also read.

use loadbench_grammar::{Rate, Threshold, parse_duration};

#[test]
fn the_grammar_judges_every_line_of_the_table_as_it_says() {
    let mut checked = 0;
    for line in include_str!("agreement.txt").lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
        let mut words = line.splitn(3, ' ');
        let (kind, outcome, text) = match (words.next(), words.next(), words.next()) {
            (Some(kind), Some(outcome), Some(text)) => (kind, outcome, text.trim()),
            _ => panic!("malformed line: {line}"),
        };
        let accepted = match kind {
            "threshold" => text.parse::<Threshold>().map(drop).map_err(|e| e.to_string()),
            "rate" => text.parse::<Rate>().map(drop).map_err(|e| e.to_string()),
            "duration" => parse_duration(text).map(drop).map_err(|e| e.to_string()),
            other => panic!("unknown kind `{other}` in: {line}"),
        };
        match (outcome, accepted) {
            ("ok", Ok(())) | ("err", Err(_)) => checked += 1,
            ("ok", Err(e)) => panic!("`{text}` ({kind}) was refused: {e}"),
            ("err", Ok(())) => panic!("`{text}` ({kind}) was accepted"),
            (other, _) => panic!("unknown outcome `{other}` in: {line}"),
        }
    }
    assert!(checked > 50, "{checked} lines");
}
