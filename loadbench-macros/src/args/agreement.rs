//! The attribute against the table of strings that the grammar and the command line also judge
//! (`loadbench-grammar/tests/agreement.txt`): every way the attribute lets a line be written
//! must accept it when the table says `ok` and refuse it when it says `err`. The macro adds
//! token syntax on top of the grammar; this is what keeps that syntax from changing a verdict.

use loadbench_grammar::agreement::{self, Kind};
use proc_macro2::{Literal, TokenStream, TokenTree};
use quote::quote;

use super::ScenarioArgs;

/// `text` as Rust tokens, if it lexes as such.
fn lex(text: &str) -> Option<TokenStream> {
    text.parse().ok()
}

/// Whether `text` lexes as one literal, or `-` then one literal: `rate = TEXT` is then a value.
fn is_one_literal(tokens: &TokenStream) -> bool {
    let tokens: Vec<TokenTree> = tokens.clone().into_iter().collect();
    match tokens.as_slice() {
        [TokenTree::Literal(_)] => true,
        [TokenTree::Punct(minus), TokenTree::Literal(_)] => minus.as_char() == '-',
        _ => false,
    }
}

/// Every way the attribute writes the condition `text`: as its tokens, and with the limit as a
/// string where the text has a comparison to split at.
fn conditions(text: &str) -> Vec<TokenStream> {
    let mut forms = Vec::new();
    if let Some(tokens) = lex(text) {
        forms.push(tokens);
    }
    if let Ok((metric, op, limit)) = loadbench_grammar::Threshold::split(text)
        && let (Some(metric), Some(op)) = (lex(metric), lex(op))
    {
        let limit = Literal::string(limit);
        forms.push(quote!(#metric #op #limit));
    }
    forms
}

/// Every attribute that writes `text` as a `kind`, each described for the failure message.
fn attributes(kind: Kind, text: &str) -> Vec<(String, TokenStream)> {
    let string = Literal::string(text);
    let mut forms = Vec::new();
    match kind {
        Kind::Threshold => {
            for condition in conditions(text) {
                forms.push(quote!(count = 1, thresholds(#condition)));
            }
        }
        // `{ROW}:CONDITION` as `"ROW": CONDITION`.
        Kind::Row => {
            let parts = text.trim_start().strip_prefix('{').and_then(|rest| rest.rsplit_once('}'));
            if let Some((row, condition)) = parts
                && let Some(condition) = condition.trim_start().strip_prefix(':')
            {
                let row = Literal::string(row);
                for condition in conditions(condition) {
                    forms.push(quote!(count = 1, thresholds(#row: #condition)));
                }
            }
        }
        Kind::Rate => {
            forms.push(quote!(rate = #string, count = 1));
            if let Some(tokens) = lex(text).filter(is_one_literal) {
                forms.push(quote!(rate = #tokens, count = 1));
            }
        }
        Kind::Duration => {
            forms.push(quote!(duration = #string));
            forms.push(quote!(count = 1, timeout = #string));
            forms.push(quote!(count = 1, grace = #string));
        }
    }
    forms.into_iter().map(|tokens| (tokens.to_string(), tokens)).collect()
}

#[test]
fn the_attribute_judges_every_line_of_the_table_as_it_says() {
    let mut checked = 0;
    for case in agreement::cases().unwrap_or_else(|e| panic!("{e}")) {
        let forms = attributes(case.kind, case.text);
        assert!(!forms.is_empty(), "{case:?} cannot be written in the attribute");
        for (attribute, tokens) in forms {
            match (case.ok, ScenarioArgs::parse(tokens)) {
                (true, Ok(_)) | (false, Err(_)) => checked += 1,
                (true, Err(e)) => panic!("{case:?} was refused as #[scenario({attribute})]: {e}"),
                (false, Ok(_)) => panic!("{case:?} was accepted as #[scenario({attribute})]"),
            }
        }
    }
    assert!(checked > 100, "{checked} attributes");
}

#[test]
fn a_line_is_written_every_way_the_attribute_allows() {
    let forms = |kind, text| attributes(kind, text).into_iter().map(|(a, _)| a).collect::<Vec<_>>();
    assert_eq!(
        forms(Kind::Threshold, "p50 >= 1s 500ms"),
        ["count = 1 , thresholds (p50 >= 1s 500ms)", "count = 1 , thresholds (p50 >= \"1s 500ms\")"]
    );
    assert_eq!(forms(Kind::Threshold, "p99 50ms"), ["count = 1 , thresholds (p99 50ms)"]);
    assert_eq!(
        forms(Kind::Row, "{GET /a}: max <= 2s"),
        ["count = 1 , thresholds (\"GET /a\" : max <= 2s)", "count = 1 , thresholds (\"GET /a\" : max <= \"2s\")"]
    );
    assert_eq!(forms(Kind::Rate, "-3"), ["rate = \"-3\" , count = 1", "rate = - 3 , count = 1"]);
    assert_eq!(forms(Kind::Rate, "120/m"), ["rate = \"120/m\" , count = 1"]);
    assert_eq!(
        forms(Kind::Duration, "1m 30s"),
        ["duration = \"1m 30s\"", "count = 1 , timeout = \"1m 30s\"", "count = 1 , grace = \"1m 30s\""]
    );
}
