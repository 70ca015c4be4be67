//! `feed = "data/users.csv"`, `feed_mode = "…"` and `feed_end = "…"`: a scenario's data feeder.
//! The file itself is read by the runtime before the run (it may change after the build); only
//! what can be told from the tokens is checked here.

use proc_macro2::{Ident, Literal, TokenStream};
use quote::{ToTokens as _, quote};
use syn::Expr;

use super::FeedArgs;
use super::key::Key;
use super::value::{error_at, non_empty, string_literal};

/// The extensions the runtime reads: CSV with a header row, or one JSON object a line.
const EXTENSIONS: [&str; 4] = ["csv", "jsonl", "ndjson", "json"];

/// `feed_mode`'s words, in the runtime's `FeedMode` order.
pub(crate) const MODES: [&str; 3] = ["sequential", "random", "per_user"];
/// `feed_end`'s words, in the runtime's `FeedEnd` order.
pub(crate) const ENDS: [&str; 2] = ["wrap", "stop"];

/// The runtime's variant names for [`MODES`] and [`ENDS`].
pub(crate) const MODE_VARIANTS: [&str; 3] = ["Sequential", "Random", "PerUser"];
pub(crate) const END_VARIANTS: [&str; 2] = ["Wrap", "Stop"];

/// `feed = "data/users.csv"`: a non-empty path ending in one of [`EXTENSIONS`].
pub(super) fn path(value: &Expr) -> syn::Result<String> {
    let path = non_empty(Key::Feed, value)?;
    let extension = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    if !extension.is_some_and(|e| EXTENSIONS.contains(&e.as_str()) && !e.contains('/')) {
        let lit = string_literal(Key::Feed, value)?;
        return Err(error_at(
            lit,
            "`feed` reads a `.csv` file (with a header row) or a `.jsonl` file (one JSON object a line), as in `feed = \"data/users.csv\"`",
        ));
    }
    Ok(path)
}

/// One of `words` (`feed_mode`, `feed_end`), as its index; a misspelt one gets the closest.
pub(super) fn choice(key: Key, value: &Expr, words: &[&'static str]) -> syn::Result<usize> {
    let lit = string_literal(key, value)?;
    let text = lit.value();
    if let Some(index) = words.iter().position(|w| *w == text) {
        return Ok(index);
    }
    let listed = words.iter().map(|w| format!("\"{w}\"")).collect::<Vec<_>>().join(", ");
    Err(error_at(
        lit,
        match crate::suggest::closest(&text, words.iter().copied()) {
            Some(word) => format!("unknown `{key}` \"{text}\"; did you mean \"{word}\"? (one of {listed})"),
            None => format!("`{key}` is one of {listed}"),
        },
    ))
}

/// The registration's `feed` field: `Some(FeedConfig { … })` or `None`, spanned on the
/// attribute's values.
pub(crate) fn tokens(feed: Option<&FeedArgs>) -> TokenStream {
    let private = quote!(::loadbench::__private);
    let Some(feed) = feed else {
        return quote!(::core::option::Option::None);
    };
    let (path, span) = &feed.path;
    let mut path = Literal::string(path);
    path.set_span(*span);
    let path = path.into_token_stream();
    let mode = Ident::new(feed.mode.0, feed.mode.1);
    let end = Ident::new(feed.end.0, feed.end.1);
    // A relative path is the package's: the directory of the crate being compiled.
    quote!(::core::option::Option::Some(#private::FeedConfig {
        path: #path,
        root: ::core::env!("CARGO_MANIFEST_DIR"),
        mode: #private::FeedMode::#mode,
        end: #private::FeedEnd::#end,
    }))
}

#[cfg(test)]
mod tests {
    use proc_macro2::TokenStream;
    use quote::quote;

    use super::super::ScenarioArgs;

    fn errors(tokens: TokenStream) -> Vec<String> {
        match ScenarioArgs::parse(tokens) {
            Ok(args) => panic!("expected errors, got {args:?}"),
            Err(e) => e.into_iter().map(|e| e.to_string()).collect(),
        }
    }

    #[test]
    fn a_feed_with_its_defaults_and_its_options() {
        let args = ScenarioArgs::parse(quote!(count = 1, feed = "data/users.csv")).unwrap_or_else(|e| panic!("{e}"));
        let feed = args.feed.unwrap_or_else(|| panic!("no feed"));
        assert_eq!((feed.path.0.as_str(), feed.mode.0, feed.end.0), ("data/users.csv", "Sequential", "Wrap"));
        let args = ScenarioArgs::parse(quote!(count = 1, feed = "u.jsonl", feed_mode = "per_user"))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(args.feed.map(|f| f.mode.0), Some("PerUser"));
        let args = ScenarioArgs::parse(quote!(count = 1, feed = "u.csv", feed_mode = "sequential", feed_end = "stop"))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(args.feed.map(|f| f.end.0), Some("Stop"));
    }

    #[test]
    fn feed_mistakes() {
        assert_eq!(
            errors(quote!(count = 1, feed = "users.txt")),
            [
                "`feed` reads a `.csv` file (with a header row) or a `.jsonl` file (one JSON object a line), as in `feed = \"data/users.csv\"`"
            ]
        );
        assert_eq!(errors(quote!(count = 1, feed = "")), ["`feed` must not be empty"]);
        assert_eq!(
            errors(quote!(count = 1, feed = "u.csv", feed_mode = "sequental")),
            [
                "unknown `feed_mode` \"sequental\"; did you mean \"sequential\"? (one of \"sequential\", \"random\", \"per_user\")"
            ]
        );
        assert_eq!(
            errors(quote!(count = 1, feed = "u.csv", feed_end = "never")),
            ["`feed_end` is one of \"wrap\", \"stop\""]
        );
        assert_eq!(
            errors(quote!(count = 1, feed_mode = "random")),
            ["`feed_mode` goes with `feed = \"data/users.csv\"`, which names the file"]
        );
        assert_eq!(
            errors(quote!(count = 1, feed = "u.csv", feed_mode = "random", feed_end = "stop")),
            ["`feed_end` is for `feed_mode = \"sequential\"`: a random feed never runs out"]
        );
        assert_eq!(
            errors(quote!(count = 1, concurency = 2)),
            ["unknown attribute `concurency`; did you mean `concurrency`?"]
        );
    }
}
