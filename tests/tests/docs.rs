//! The README and the pages under `docs/`: every link to a file of the repository points at one
//! that exists, and every `#anchor` at a heading of its page (GitHub's ids), so moving a section
//! between pages cannot leave a dead link; the README stays short enough to read in five minutes.
//! Every repository path named in a code comment, ARCHITECTURE.md or docs/ exists.

// A missing page should fail loudly.
#![allow(clippy::expect_used)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use loadbench_tests::cli::workspace_root;
use pulldown_cmark::{Event, HeadingLevel, Parser, Tag, TagEnd};

/// README.md and every page under docs/.
fn pages() -> Vec<PathBuf> {
    let root = workspace_root();
    let mut pages = vec![root.join("README.md")];
    let docs = std::fs::read_dir(root.join("docs")).expect("docs/");
    let mut docs: Vec<PathBuf> =
        docs.map(|e| e.expect("a docs/ entry").path()).filter(|p| p.extension().is_some_and(|e| e == "md")).collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// GitHub's id of a heading: lower case, punctuation other than `-` and `_` dropped, spaces to
/// `-`.
fn slug(text: &str) -> String {
    text.trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The ids of the headings of `page`, and its links.
fn read(page: &Path) -> (BTreeSet<String>, Vec<String>) {
    let text = std::fs::read_to_string(page).unwrap_or_else(|e| panic!("{}: {e}", page.display()));
    let mut anchors = BTreeSet::new();
    let mut links = Vec::new();
    let mut heading: Option<String> = None;
    for event in Parser::new(&text) {
        match event {
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => anchors.extend(heading.take().map(|h| slug(&h))),
            Event::Start(Tag::Link { dest_url, .. }) => links.push(dest_url.to_string()),
            _ => {}
        }
    }
    (anchors, links)
}

#[test]
fn every_link_between_the_pages_resolves() {
    let mut checked = 0;
    for page in pages() {
        let (_, links) = read(&page);
        for link in links.iter().filter(|l| !l.contains("://") && !l.starts_with("mailto:")) {
            let (file, anchor) = link.split_once('#').unwrap_or((link, ""));
            let target = if file.is_empty() { page.clone() } else { page.parent().expect("a folder").join(file) };
            assert!(target.exists(), "{}: `{link}` points at nothing", page.display());
            if !anchor.is_empty() {
                let (anchors, _) = read(&target);
                assert!(
                    anchors.contains(anchor),
                    "{}: `{link}`: no such heading in {}",
                    page.display(),
                    target.display()
                );
            }
            checked += 1;
        }
    }
    assert!(checked > 20, "only {checked} links found: is the parser reading the pages?");
}

#[test]
fn the_readme_is_short_and_links_every_page() {
    let root = workspace_root();
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    assert!(readme.lines().count() <= 250, "README.md has {} lines", readme.lines().count());
    let (_, links) = read(&root.join("README.md"));
    for page in pages().iter().skip(1) {
        let name = format!("docs/{}", page.file_name().and_then(|n| n.to_str()).expect("a name"));
        assert!(links.iter().any(|l| l.starts_with(&name)), "the README does not link {name}");
    }
    // The sections a new user reads first, in order.
    let level2: Vec<String> = {
        let mut titles = Vec::new();
        let mut current: Option<String> = None;
        for event in Parser::new(&readme) {
            match event {
                Event::Start(Tag::Heading { level: HeadingLevel::H2, .. }) => current = Some(String::new()),
                Event::Text(t) | Event::Code(t) => {
                    if let Some(c) = current.as_mut() {
                        c.push_str(&t);
                    }
                }
                Event::End(TagEnd::Heading(HeadingLevel::H2)) => titles.extend(current.take()),
                _ => {}
            }
        }
        titles
    };
    let position =
        |title: &str| level2.iter().position(|t| t == title).unwrap_or_else(|| panic!("no `{title}` in {level2:?}"));
    assert!(position("Quick start in your own crate") < position("CI in one step"));
    assert!(position("CI in one step") < position("Try it: two commands on a fresh machine"));
}

/// The repository's top-level folders: a name that starts with one of them, then `/`, is a path
/// from the repository's root.
const TOP_LEVEL: [&str; 9] = [
    "loadbench-runtime",
    "cargo-loadbench",
    "loadbench-macros",
    "loadbench-grammar",
    "tests",
    "bench",
    "docs",
    "schema",
    "examples",
];

/// The text of the comments of a `.rs` file (lines starting `//`) or of a `Cargo.toml` (`#`).
fn comments(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let marker = if path.extension().is_some_and(|e| e == "rs") { "//" } else { "#" };
    text.lines().filter(|l| l.trim_start().starts_with(marker)).collect::<Vec<_>>().join("\n")
}

/// Every `.rs` file and `Cargo.toml` under `dir`, build output (`target/`) and hidden folders left
/// out.
fn sources(dir: &Path, into: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("a folder entry").path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if path.is_dir() {
            if name != "target" && !name.starts_with('.') {
                sources(&path, into);
            }
        } else if name == "Cargo.toml" || name.ends_with(".rs") {
            into.push(path);
        }
    }
}

/// The names in `text` that are paths of the repository, by the rule of
/// [`every_path_named_in_a_comment_or_a_page_exists`], each with whether it is rooted (starts with
/// a top-level folder) or bare (a file name, perhaps with folders, relative to where it is named).
fn named_paths(text: &str, bare_too: bool) -> Vec<(String, bool)> {
    let is_path_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-');
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(is_path_char) {
        let after = &rest[start..];
        let end = after.find(|c: char| !is_path_char(c)).unwrap_or(after.len());
        let (token, next) = (&after[..end], after[end..].chars().next());
        rest = &after[end..];
        let token = token.trim_end_matches('.');
        // A pattern or a placeholder (`tests/fixtures/<name>`, `bench/*.sh`) names no one path.
        if matches!(next, Some('*' | '<' | '{' | '$' | '…')) || token.contains("..") {
            continue;
        }
        let rooted = TOP_LEVEL.iter().any(|top| token.strip_prefix(top).is_some_and(|r| r.starts_with('/')));
        let bare = bare_too
            && !rooted
            && token.len() > ".rs".len()
            && token.ends_with(".rs")
            && !token.starts_with(['/', '.'])
            && !token.starts_with("benches/")
            && !token.starts_with("src/");
        if rooted || bare {
            found.push((token.to_owned(), rooted));
        }
    }
    found
}

/// The folders a name in a comment of `file` may be relative to: the file's own folder, its
/// module's folder (`foo/` beside `foo.rs`), every folder above up to its crate's root, and the
/// repository root.
fn bases(file: &Path, root: &Path) -> Vec<PathBuf> {
    let mut bases = vec![file.with_extension("")];
    let mut up = file.parent();
    while let Some(dir) = up {
        bases.push(dir.to_path_buf());
        if dir.join("Cargo.toml").exists() || dir == root {
            break;
        }
        up = dir.parent();
    }
    bases.push(root.to_path_buf());
    bases
}

/// The roots of the repository's crates: its top-level folders with a `Cargo.toml`.
fn crate_roots(root: &Path) -> Vec<PathBuf> {
    TOP_LEVEL.iter().map(|top| root.join(top)).filter(|dir| dir.join("Cargo.toml").exists()).collect()
}

/// Every repository path named in a code comment, ARCHITECTURE.md or a page of docs/ exists, so
/// that a file's move cannot leave a name pointing at nothing.
///
/// What counts as a repository path:
/// - A rooted name: a run of letters, digits, `_`, `.`, `/` and `-` that starts with a top-level
///   folder of the repository and `/` ([`TOP_LEVEL`], as in `loadbench-runtime/src/http/ctx.rs`
///   or `tests/fixtures/`), trailing full stops dropped. Checked in the comments of every `.rs`
///   file and `Cargo.toml` of the repository (lines starting `//` or `#`), in ARCHITECTURE.md and
///   in docs/*.md. It exists from the repository root or from a crate's root (`tests/faults.rs`
///   named in the `tests` crate is `tests/tests/faults.rs`): from the naming file's own crate for
///   a comment, from any crate for ARCHITECTURE.md and docs/, whose rows and sections are per
///   crate.
/// - A bare name, in comments only: such a run that ends in `.rs` and does not start with a
///   top-level folder (as `h1.rs` or `connection/fuzz.rs`). It exists relative to the comment's
///   file's folder, its module's folder, a folder above them up to the crate's root, or the
///   repository root ([`bases`]). One that starts with `benches/` or `src/` names a file of a
///   user's crate and is not checked.
/// - Not a path: a name followed by `*`, `<`, `{`, `$` or `…` (a pattern or a placeholder), or
///   containing `..`; names inside URLs (they start with `//` or a host name). ARCHITECTURE.md and
///   docs/ name files relative to the row or section they are in (`driver.rs` in the row of
///   `shared/h2/`), so their bare names are out of scope. This file's own comments, which show
///   the rule's examples, are not read.
#[test]
fn every_path_named_in_a_comment_or_a_page_exists() {
    let root = workspace_root();
    let mut files = Vec::new();
    sources(root, &mut files);
    files.retain(|f| !f.ends_with("tests/tests/docs.rs"));
    let mut texts: Vec<(PathBuf, String, bool)> = files.into_iter().map(|f| (f.clone(), comments(&f), true)).collect();
    for page in std::iter::once(root.join("ARCHITECTURE.md")).chain(pages().into_iter().skip(1)) {
        let text = std::fs::read_to_string(&page).unwrap_or_else(|e| panic!("{}: {e}", page.display()));
        texts.push((page, text, false));
    }
    let crates = crate_roots(root);
    let mut missing = Vec::new();
    let mut checked = 0;
    for (file, text, in_comments) in &texts {
        let bases = bases(file, root);
        for (name, rooted) in named_paths(text, *in_comments) {
            let exists = if !rooted {
                bases.iter().any(|base| base.join(&name).exists())
            } else if *in_comments {
                root.join(&name).exists() || bases.iter().any(|b| crates.contains(b) && b.join(&name).exists())
            } else {
                root.join(&name).exists() || crates.iter().any(|c| c.join(&name).exists())
            };
            if !exists {
                missing.push(format!("{}: `{name}`", file.strip_prefix(root).unwrap_or(file).display()));
            }
            checked += 1;
        }
    }
    assert!(missing.is_empty(), "{} named paths that do not exist:\n{}", missing.len(), missing.join("\n"));
    // The rule finds about two hundred names in this repository; few means it stopped reading.
    assert!(checked > 100, "only {checked} paths named: is the rule reading the comments?");
}

/// A comment's text as prose: each line's comment marker dropped, the lines joined by spaces.
fn prose(comments: &str) -> String {
    comments.lines().map(|l| l.trim_start().trim_start_matches(['/', '!', '#']).trim()).collect::<Vec<_>>().join(" ")
}

/// Every `bench/RESULTS.md § Heading` a code comment names is a heading of bench/RESULTS.md, so
/// that the figures a comment leaves out are where it says. The heading is the text after `§ `:
/// in double quotes, the quoted text; otherwise up to the next `)` or `;`. It must equal a
/// heading's text, at any level.
#[test]
fn every_results_heading_named_in_a_comment_exists() {
    let root = workspace_root();
    let results = std::fs::read_to_string(root.join("bench/RESULTS.md")).expect("bench/RESULTS.md");
    let headings: BTreeSet<&str> =
        results.lines().filter(|l| l.starts_with('#')).map(|l| l.trim_start_matches('#').trim()).collect();
    let mut files = Vec::new();
    sources(root, &mut files);
    // This file's own comments state the rule with a placeholder.
    files.retain(|f| !f.ends_with("tests/tests/docs.rs"));
    let (mut missing, mut checked) = (Vec::new(), 0);
    for file in files {
        let text = prose(&comments(&file));
        for (at, _) in text.match_indices("RESULTS.md § ") {
            let after = &text[at + "RESULTS.md § ".len()..];
            let heading = match after.strip_prefix('"') {
                Some(quoted) => quoted.split('"').next().unwrap_or(""),
                None => after.split([')', ';']).next().unwrap_or(""),
            };
            if !headings.contains(heading.trim()) {
                missing.push(format!("{}: § {heading}", file.strip_prefix(root).unwrap_or(&file).display()));
            }
            checked += 1;
        }
    }
    assert!(missing.is_empty(), "headings not in bench/RESULTS.md:\n{}", missing.join("\n"));
    assert!(checked > 10, "only {checked} headings named: is the rule reading the comments?");
}

/// A source file past 500 lines is a sign to split it; one that stays longer says why in its
/// first line (`// Over 500 lines because …`, or `//!` where it is private), so the next reader
/// weighs the reason instead of finding the file grown.
#[test]
fn every_source_file_over_500_lines_says_why_at_its_head() {
    let root = workspace_root();
    let mut files = Vec::new();
    sources(root, &mut files);
    let long: Vec<String> = files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "rs"))
        .filter_map(|f| {
            let text = std::fs::read_to_string(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            let first = text.lines().next().unwrap_or("");
            let says_why =
                ["// Over 500 lines because ", "//! Over 500 lines because "].iter().any(|p| first.starts_with(p));
            (text.lines().count() > 500 && !says_why)
                .then(|| format!("{}: {} lines", f.display(), text.lines().count()))
        })
        .collect();
    assert!(long.is_empty(), "files over 500 lines without a reason at their head:\n{}", long.join("\n"));
}
