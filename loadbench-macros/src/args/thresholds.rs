//! `thresholds(p99 < "50ms", error_rate < 0.01, "login": max < "1s")`: the list, and each
//! `METRIC OP LIMIT` in it, on the scenario or, after a string and a colon, on its rows of that
//! name.
//!
//! A threshold is loadbench-grammar's, as `--threshold` is: each comma-separated chunk of tokens
//! is turned back into the text it spells (`p99 < "50ms"` is `p99<50ms`) and parsed by the
//! grammar's `Threshold::from_str`. This module only knows the token syntax (where a string may
//! be, how tokens join into text) and which tokens an error is about; whether a metric exists,
//! which comparisons there are and what limit a metric takes is the grammar's to say.

use std::fmt;
use std::ops::Range;

use loadbench_grammar::{RowError, RowThreshold, Threshold, ThresholdError};
use proc_macro2::{Delimiter, Spacing, Span, TokenStream, TokenTree};
use syn::parse::ParseStream;
use syn::spanned::Spanned as _;

use crate::errors::Errors;

/// The thresholds of one `thresholds(…)` list, each with the span of its tokens.
#[derive(Debug, Default)]
pub(super) struct Lists {
    /// `METRIC OP LIMIT`: on the scenario.
    pub(super) scenario: Vec<(Threshold, Span)>,
    /// `"ROW": METRIC OP LIMIT`: on its rows named ROW.
    pub(super) rows: Vec<(RowThreshold, Span)>,
}

/// Parses the inside of `thresholds(…)`: comma-separated `METRIC OP LIMIT`, each on the scenario,
/// or after `"ROW":` on its rows of that name. Each bad threshold goes to `errors` and the others
/// are still checked; only an `Err` (which cannot happen for well-formed token trees) stops the
/// attribute.
pub(super) fn list(content: ParseStream, key_span: Span, errors: &mut Errors) -> syn::Result<Lists> {
    let tokens: TokenStream = content.parse()?;
    let mut chunks: Vec<Vec<TokenTree>> = vec![Vec::new()];
    for tt in tokens {
        match &tt {
            TokenTree::Punct(p) if p.as_char() == ',' => chunks.push(Vec::new()),
            _ => chunks.last_mut().map_or((), |chunk| chunk.push(tt)),
        }
    }
    // A trailing comma leaves one empty chunk at the end.
    if chunks.len() > 1 && chunks.last().is_some_and(Vec::is_empty) {
        chunks.pop();
    }
    if chunks.iter().all(Vec::is_empty) {
        errors.at(key_span, "`thresholds` is empty; write at least one, as in `thresholds(p99 < \"50ms\")`");
        return Ok(Lists::default());
    }
    let mut lists = Lists::default();
    for chunk in chunks {
        if chunk.is_empty() {
            errors.at(key_span, "empty threshold between two commas");
            continue;
        }
        let span = chunk.iter().cloned().collect::<TokenStream>().span();
        match row_name(&chunk) {
            Some(name) => {
                if let Some(threshold) = errors.check(row_threshold(name, chunk)) {
                    lists.rows.push((threshold, span));
                }
            }
            None => {
                if let Some(threshold) = errors.check(threshold(chunk)) {
                    lists.scenario.push((threshold, span));
                }
            }
        }
    }
    Ok(lists)
}

/// `Some` when `chunk` is written on a row: its first tokens are a name and a colon (a string, or
/// by mistake a word, whose refusal [`row_threshold`] gives).
fn row_name(chunk: &[TokenTree]) -> Option<TokenTree> {
    match chunk {
        // Not a path's `::`.
        [name @ (TokenTree::Literal(_) | TokenTree::Ident(_)), TokenTree::Punct(colon), rest @ ..]
            if colon.as_char() == ':' && !matches!(rest.first(), Some(TokenTree::Punct(p)) if p.as_char() == ':') =>
        {
            Some(name.clone())
        }
        _ => None,
    }
}

/// A threshold on a row, as the attribute writes it.
const EXAMPLE: &str = "`\"login\": p99 < \"1s\"`";

/// One `"ROW": METRIC OP LIMIT`, from its tokens: the name (the first token) checked by the
/// grammar with the threshold, an error pointing at the name or at the condition's tokens.
fn row_threshold(name: TokenTree, chunk: Vec<TokenTree>) -> syn::Result<RowThreshold> {
    let row = match &name {
        TokenTree::Literal(lit) => match syn::Lit::new(lit.clone()) {
            syn::Lit::Str(row) => Some(row.value()),
            _ => None,
        },
        _ => None,
    };
    let Some(row) = row else {
        let message = format!("write the row's name as a string: `\"{}\": …`", name.to_string().escape_default());
        return Err(syn::Error::new_spanned(name, message));
    };
    let condition: Vec<TokenTree> = chunk.into_iter().skip(2).collect();
    let Some(metric) = condition.first().cloned() else {
        return Err(syn::Error::new_spanned(
            name,
            format!("expected a condition after the row's name, as in {EXAMPLE}"),
        ));
    };
    let threshold = threshold(condition)?;
    RowThreshold::new(row, threshold).map_err(|e| match e {
        RowError::Metric(_) => syn::Error::new_spanned(metric, e),
        // The grammar's example is the command line's; the attribute's is written so.
        RowError::Empty => syn::Error::new_spanned(
            name,
            format!("the row name is empty; name a step or a named request, as in {EXAMPLE}"),
        ),
        other => syn::Error::new_spanned(name, other),
    })
}

/// One token of a threshold, with the text it stands for and where that text lies in the whole.
#[derive(Debug)]
struct Piece {
    token: TokenTree,
    /// Where the token's text is in the threshold's text.
    range: Range<usize>,
    /// A string literal: its value is the text, and it may only be the whole limit.
    string: bool,
}

/// One `METRIC OP LIMIT`, from its tokens.
fn threshold(chunk: Vec<TokenTree>) -> syn::Result<Threshold> {
    judge(chunk).map_err(|refusal| syn::Error::new_spanned(refusal.at, refusal.message))
}

/// Why a threshold was refused, and the tokens to point at: kept apart from `syn::Error` so that
/// the unit tests can check where an error points.
#[derive(Debug)]
struct Refusal {
    at: TokenStream,
    message: String,
}

/// [`threshold`], with the tokens an error is about.
fn judge(chunk: Vec<TokenTree>) -> Result<Threshold, Refusal> {
    let (text, pieces) = spell(chunk);
    let refuse = |at: TokenStream, message: &dyn fmt::Display| Refusal { at, message: message.to_string() };
    // A string literal is a limit written whole (`p99 < "1s 500ms"`): nothing may follow it. As
    // with other keys, a missing comma is what this most likely is.
    if let Some(after) = pieces.iter().position(|p| p.string).and_then(|at| pieces.get(at + 1)) {
        return Err(refuse(after.token.clone().into(), &"expected `,` between thresholds"));
    }
    // Where the grammar sees the metric, the comparison and the limit, in tokens.
    let [metric, op, limit] = match Threshold::locate(&text) {
        Ok(parts) => parts,
        Err(e) => return Err(refuse(all(&pieces), &e)),
    };
    if let Some(string) = pieces.last().filter(|p| p.string) {
        // Where the string's value starts once trimmed, as the grammar trims the limit.
        let value = &text[string.range.clone()];
        let start = string.range.start + (value.len() - value.trim_start().len());
        if limit.start < start {
            // `p99 < 1 "2ms"`: a limit, then a string that belongs to no threshold.
            return Err(refuse(string.token.clone().into(), &"expected `,` between thresholds"));
        }
        if limit.start > start {
            // `p99 "< 50ms"`: the comparison (or the metric) is inside the string.
            return Err(refuse(
                string.token.clone().into(),
                &"only the limit may be a string: write the metric and the comparison outside it, as in `p99 < \"50ms\"`",
            ));
        }
    }
    text.parse::<Threshold>().map_err(|e| {
        let at = match &e {
            ThresholdError::UnknownMetric(_) => tokens(&pieces, metric),
            ThresholdError::Op(_) => tokens(&pieces, op),
            ThresholdError::Limit { .. } => tokens(&pieces, limit),
            _ => all(&pieces),
        };
        refuse(at, &e)
    })
}

/// The text a threshold's tokens spell, as it would be written on the command line: a string
/// literal gives its value, any other token its source text. Tokens are joined without spaces,
/// except between two words or numbers (`1s 500ms`), and between two punctuation marks written
/// apart (`< =` is not `<=`, as it is not on the command line).
fn spell(chunk: Vec<TokenTree>) -> (String, Vec<Piece>) {
    let mut text = String::new();
    let mut pieces: Vec<Piece> = Vec::new();
    for token in flatten(chunk) {
        let (word, string) = match &token {
            TokenTree::Literal(lit) => match syn::Lit::new(lit.clone()) {
                syn::Lit::Str(string) => (string.value(), true),
                _ => (lit.to_string(), false),
            },
            other => (other.to_string(), false),
        };
        let space = match (pieces.last().map(|p| &p.token), &token) {
            (Some(TokenTree::Ident(_) | TokenTree::Literal(_)), TokenTree::Ident(_) | TokenTree::Literal(_)) => true,
            (Some(TokenTree::Punct(before)), TokenTree::Punct(_)) => before.spacing() == Spacing::Alone,
            _ => false,
        };
        if space {
            text.push(' ');
        }
        let start = text.len();
        text.push_str(&word);
        pieces.push(Piece { token, range: start..text.len(), string });
    }
    (text, pieces)
}

/// The tokens with the invisible groups that `macro_rules!` puts around a `$limit:expr` opened,
/// so that a threshold built by a macro reads as if written out.
fn flatten(tokens: impl IntoIterator<Item = TokenTree>) -> Vec<TokenTree> {
    let mut flat = Vec::new();
    for token in tokens {
        match token {
            TokenTree::Group(group) if group.delimiter() == Delimiter::None => flat.extend(flatten(group.stream())),
            other => flat.push(other),
        }
    }
    flat
}

/// The tokens whose text overlaps `range` of the threshold's text, to point an error at; every
/// token when none does.
fn tokens(pieces: &[Piece], range: Range<usize>) -> TokenStream {
    let overlapping: TokenStream = pieces
        .iter()
        .filter(|p| p.range.start < range.end && p.range.end > range.start)
        .map(|p| p.token.clone())
        .collect();
    if overlapping.is_empty() { all(pieces) } else { overlapping }
}

/// Every token of the threshold, for an error about its shape.
fn all(pieces: &[Piece]) -> TokenStream {
    pieces.iter().map(|p| p.token.clone()).collect()
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use super::*;

    /// The text `tokens` spell.
    fn text(tokens: TokenStream) -> String {
        spell(tokens.into_iter().collect()).0
    }

    /// The tokens an error on `tokens` points at, and its message.
    fn refusal(tokens: TokenStream) -> (String, String) {
        match judge(tokens.into_iter().collect()) {
            Ok(t) => panic!("accepted as {t:?}"),
            Err(refusal) => (refusal.at.to_string(), refusal.message),
        }
    }

    #[test]
    fn tokens_spell_the_command_line_text() {
        assert_eq!(text(quote!(p99 < "50ms")), "p99<50ms");
        assert_eq!(text(quote!(p50 >= "1s 500ms")), "p50>=1s 500ms");
        assert_eq!(text(quote!(p50 >= 1s 500ms)), "p50>=1s 500ms");
        assert_eq!(text(quote!(error_rate <= 1%)), "error_rate<=1%");
        assert_eq!(text(quote!(error_rate < 1 %)), "error_rate<1%");
        assert_eq!(text(quote!(rps > 1_000)), "rps>1_000");
        // Two marks written apart stay apart, as on the command line: `< =` is not `<=`.
        assert_eq!(text(quote!(rps > -1)), "rps> -1");
        assert_eq!(text(quote!(p99 < = 5ms)), "p99< =5ms");
        assert_eq!(text(quote!(p99 == 5ms)), "p99==5ms");
        assert_eq!(text(quote!(p99 < r"50ms")), "p99<50ms");
    }

    #[test]
    fn a_macro_rules_limit_reads_as_if_written_out() {
        let limit = TokenTree::Group(proc_macro2::Group::new(Delimiter::None, quote!("50ms")));
        assert_eq!(text(quote!(p99 < #limit)), "p99<50ms");
    }

    #[test]
    fn each_error_points_at_what_to_change() {
        assert_eq!(refusal(quote!(p100 < "5ms")).0, "p100");
        assert_eq!(refusal(quote!(p99 == "5ms")).0, "==");
        // Lexed as rustc lexes the attribute (`quote!` would write `=` and `<` apart).
        let reversed: TokenStream = "p99 =< 5ms".parse().unwrap();
        assert_eq!(refusal(reversed), ("=<".into(), "unsupported comparison `=<`; use <, <=, > or >=".into()));
        assert_eq!(refusal(quote!(p99 < 50)).0, "50");
        assert_eq!(refusal(quote!(p99 < "soon")).0, "\"soon\"");
        assert_eq!(refusal(quote!(rps > -1)).0, "- 1");
        assert_eq!(refusal(quote!(max < 1000000 years)).0, "1000000 years");
        // Not `METRIC OP LIMIT`: the whole threshold.
        assert_eq!(refusal(quote!(p99 50ms)).0, "p99 50ms");
        assert_eq!(refusal(quote!(rps >)).0, "rps >");
    }

    #[test]
    fn a_string_is_only_ever_the_whole_limit() {
        assert_eq!(refusal(quote!(p99 < "1ms" "2ms")), ("\"2ms\"".into(), "expected `,` between thresholds".into()));
        assert_eq!(refusal(quote!(p99 < "1ms" ms)), ("ms".into(), "expected `,` between thresholds".into()));
        assert_eq!(refusal(quote!(p99 < 1 "2ms")), ("\"2ms\"".into(), "expected `,` between thresholds".into()));
        let inside =
            "only the limit may be a string: write the metric and the comparison outside it, as in `p99 < \"50ms\"`";
        assert_eq!(refusal(quote!("p99 < 50ms")), ("\"p99 < 50ms\"".into(), inside.into()));
        assert_eq!(refusal(quote!(p99 "< 50ms")), ("\"< 50ms\"".into(), inside.into()));
        // Spaces around the limit do not matter, as on the command line.
        assert!(judge(quote!(p99 < " 50ms ").into_iter().collect()).is_ok());
    }
}
