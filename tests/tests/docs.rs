//! The README and the pages under `docs/`: every link to a file of the repository points at one
//! that exists, and every `#anchor` at a heading of its page (GitHub's ids), so moving a section
//! between pages cannot leave a dead link; the README stays short enough to read in five minutes.

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
