//! The help as users see it: `cargo loadbench help`, and docs/cli.md's help blocks, which are
//! clap's own rendering so that they cannot go stale.
//!
//! A block is the ```` ```text ```` fence after a line `<!-- help: cargo loadbench ab -->`. It
//! holds what `cargo loadbench ab -h` prints, without the text after the flags (docs/cli.md says
//! it in prose) and, for a command below `cargo loadbench`, without the flags it shares with
//! `cargo loadbench` (its block lists those). `LOADBENCH_BLESS=1` rewrites the blocks, as
//! trybuild's `TRYBUILD=overwrite` rewrites its expectations; read the diff before committing.

use clap::{CommandFactory, Parser};

use super::Cargo;

const DOC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/cli.md");
const MARKER: &str = "<!-- help: ";
const BLESS: &str = "LOADBENCH_BLESS";

/// The blocks docs/cli.md must have, by command.
const COMMANDS: [&str; 2] = ["cargo loadbench", "cargo loadbench ab"];

/// What the block of `command` (`cargo loadbench` and the names of its commands) holds.
fn rendered(command: &str) -> String {
    let mut words = command.split_whitespace().skip(1);
    // Not built: a command's own arguments, before clap copies the global ones into it.
    let mut cmd = Cargo::command();
    for word in words.by_ref() {
        cmd = cmd.find_subcommand(word).unwrap_or_else(|| panic!("no command `{word}` in `{command}`")).clone();
    }
    // At clap's default width, as the installed binary lays it out (each flag's help on the next
    // line). Whether clap also wraps the help text depends on its `wrap_help` feature, which
    // another package of the workspace (divan) turns on in a workspace-wide build: the blocks are
    // compared word by word ([`same_words`]), so either layout matches.
    let text = cmd.bin_name(command).term_width(100).after_help(None::<&'static str>).render_help().to_string();
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    lines.join("\n").trim().to_owned()
}

/// `doc` with every help block rendered anew, and the commands whose blocks it found.
fn regenerate(doc: &str) -> (String, Vec<String>) {
    let mut out = Vec::new();
    let mut found = Vec::new();
    let mut lines = doc.lines();
    while let Some(line) = lines.next() {
        out.push(line.to_owned());
        let Some(command) = line.strip_prefix(MARKER).and_then(|rest| rest.strip_suffix(" -->")) else {
            continue;
        };
        assert_eq!(lines.next(), Some("```text"), "docs/cli.md: a ```text fence must follow `{line}`");
        out.push("```text".to_owned());
        for old in lines.by_ref() {
            if old == "```" {
                break;
            }
        }
        out.push(rendered(command));
        out.push("```".to_owned());
        found.push(command.to_owned());
    }
    (out.join("\n") + "\n", found)
}

/// Whether `a` and `b` are the same words in the same order, however the lines break.
fn same_words(a: &str, b: &str) -> bool {
    a.split_whitespace().eq(b.split_whitespace())
}

#[test]
fn help_blocks_in_the_docs_are_clap_s() {
    let doc = std::fs::read_to_string(DOC).unwrap_or_else(|e| panic!("{DOC}: {e}"));
    let (fresh, found) = regenerate(&doc);
    assert_eq!(found, COMMANDS, "docs/cli.md: the help blocks, each after a `{MARKER}COMMAND -->` line");
    if std::env::var_os(BLESS).is_some() {
        if fresh != doc {
            std::fs::write(DOC, fresh).unwrap_or_else(|e| panic!("{DOC}: {e}"));
        }
        return;
    }
    if same_words(&fresh, &doc) {
        return;
    }
    let (old, new) = doc.lines().zip(fresh.lines()).find(|(old, new)| old != new).unwrap_or_default();
    panic!(
        "docs/cli.md's help blocks differ from what clap prints; first difference:\n  docs: {old}\n  clap: {new}\n\
         Rewrite them with `{BLESS}=1 cargo test -p cargo-loadbench --bin cargo-loadbench help_blocks` \
         and read the diff"
    );
}

#[test]
fn help_is_a_command_not_a_filter() {
    for (argv, usage) in [
        (&["help"][..], "Usage: cargo loadbench [OPTIONS] [FILTER]... [COMMAND]"),
        (&["help", "url"], "Usage: cargo loadbench url [OPTIONS] <URL>"),
        (&["url", "--help"], "Usage: cargo loadbench url [OPTIONS] <URL>"),
    ] {
        let args = ["cargo-loadbench", "loadbench"].iter().chain(argv);
        let Err(err) = Cargo::try_parse_from(args) else { panic!("{argv:?} parsed as a run") };
        assert_eq!(err.exit_code(), 0, "{argv:?}: {err}");
        assert!(!err.use_stderr(), "{argv:?}: help goes to stdout");
        assert!(err.to_string().contains(usage), "{argv:?}: {err}");
    }
    let parsed = Cargo::try_parse_from(["cargo-loadbench", "loadbench", "--", "help"]);
    let Ok(Cargo::Loadbench(args)) = parsed else { panic!("{parsed:?}") };
    assert_eq!(args.filters, ["help"], "a filter named `help` goes after `--`");
}

#[test]
fn url_help_says_https_too() {
    let help = rendered("cargo loadbench url");
    assert!(!help.contains("http:// only"), "{help}");
    assert!(help.contains("such as http://127.0.0.1:9090/ (http:// or https://)"), "{help}");
}
