//! The grammar's own functions against the shared table of strings (`agreement.txt`), which the
//! attribute's and the command line's tests also read.

use loadbench_grammar::agreement::{self, Kind};
use loadbench_grammar::{Rate, RowThreshold, Threshold, parse_duration};

#[test]
fn the_grammar_judges_every_line_of_the_table_as_it_says() {
    let cases = agreement::cases().unwrap_or_else(|e| panic!("{e}"));
    for case in &cases {
        let judged = match case.kind {
            Kind::Threshold => case.text.parse::<Threshold>().map(drop).map_err(|e| e.to_string()),
            Kind::Row => case.text.parse::<RowThreshold>().map(drop).map_err(|e| e.to_string()),
            Kind::Rate => case.text.parse::<Rate>().map(drop).map_err(|e| e.to_string()),
            Kind::Duration => parse_duration(case.text).map(drop).map_err(|e| e.to_string()),
        };
        match (case.ok, judged) {
            (true, Ok(())) | (false, Err(_)) => {}
            (true, Err(e)) => panic!("{case:?} was refused: {e}"),
            (false, Ok(())) => panic!("{case:?} was accepted"),
        }
    }
    assert!(cases.len() > 50, "{} lines", cases.len());
}
