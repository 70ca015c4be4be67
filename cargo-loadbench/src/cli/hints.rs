//! Flags users reach for that `cargo loadbench` spells another way, answered with the way it
//! does: `--markdown`, `--junit`, `--html` and `--csv` are output formats, written to a file with
//! `-o FILE` (its extension names the format) or printed with `--format`. `--json FILE` exists,
//! so the others look as if they should.
//!
//! The answer replaces clap's "unexpected argument" line, which would name the flag but not the
//! fix; like every usage error it is one line and exit code 2, before anything is built or run.

use clap::error::{ContextKind, ContextValue, ErrorKind};

/// The output formats spelled as flags: the flag, the `--format` value, a file `-o` takes for it.
const FORMAT_FLAGS: [(&str, &str, &str); 6] = [
    ("--markdown", "markdown", "results.md"),
    ("--md", "markdown", "results.md"),
    ("--junit", "junit", "report.xml"),
    ("--xml", "junit", "report.xml"),
    ("--html", "html", "report.html"),
    ("--csv", "csv", "results.csv"),
];

/// For a command line clap refused over an unknown flag that is an output format: the one line
/// saying how to ask for that format.
pub fn mistaken_flag(err: &clap::Error) -> Option<String> {
    if err.kind() != ErrorKind::UnknownArgument {
        return None;
    }
    let Some(ContextValue::String(given)) = err.get(ContextKind::InvalidArg) else {
        return None;
    };
    // `--html=report.html` names the same flag.
    let flag = given.split_once('=').map_or(given.as_str(), |(flag, _)| flag);
    let (_, format, file) = FORMAT_FLAGS.iter().find(|(known, _, _)| *known == flag)?;
    Some(format!(
        "error: there is no `{flag}` flag: write the results to a file with `-o {file}` (the extension names \
         the format), or print them with `--format {format}` (see --help)"
    ))
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::mistaken_flag;
    use crate::cli::Cargo;

    /// The line `cargo loadbench ARGV…` reports its usage error with.
    fn usage_line(argv: &[&str]) -> String {
        let args = ["cargo-loadbench", "loadbench"].iter().chain(argv);
        let Err(err) = Cargo::try_parse_from(args) else { panic!("{argv:?} was accepted") };
        assert_eq!(err.exit_code(), 2, "{argv:?}");
        mistaken_flag(&err).unwrap_or_else(|| loadbench::cli::usage_error_line(&err))
    }

    #[test]
    fn format_flags_that_do_not_exist_name_the_ones_that_do() {
        for (argv, file, format) in [
            (&["--markdown"][..], "-o results.md", "--format markdown"),
            (&["--junit"], "-o report.xml", "--format junit"),
            (&["--html=out.html"], "-o report.html", "--format html"),
            (&["--csv"], "-o results.csv", "--format csv"),
            (&["url", "http://h/", "--markdown"], "-o results.md", "--format markdown"),
            (&["report", "results.json", "--junit"], "-o report.xml", "--format junit"),
            (&["merge", "shard-0.json", "--html"], "-o report.html", "--format html"),
            (&["ab", "main", "--markdown"], "-o results.md", "--format markdown"),
        ] {
            let line = usage_line(argv);
            let flag = argv.iter().find(|a| a.starts_with("--")).and_then(|a| a.split('=').next()).unwrap_or_default();
            assert!(line.starts_with(&format!("error: there is no `{flag}` flag")), "{argv:?}: {line}");
            assert!(line.contains(file) && line.contains(format), "{argv:?}: {line}");
            assert!(!line.contains('\n'), "{argv:?}: one line: {line}");
        }
        assert!(usage_line(&["--frobnicate"]).contains("unexpected argument '--frobnicate'"));
    }

    #[test]
    fn a_bad_format_lists_the_formats() {
        for argv in [&["--format", "bogus"][..], &["url", "http://h/", "--format=md"]] {
            let line = usage_line(argv);
            assert!(
                line.ends_with("expected one of table, json, csv, markdown, junit, html (see --help)"),
                "{argv:?}: {line}"
            );
        }
        let line = usage_line(&["ab", "main", "--serve", "x", "--scenarios", "both"]);
        assert!(line.ends_with("expected one of head, base (see --help)"), "{line}");
    }
}
