//! The two ways a new bench target is set up wrong, named with their fix: a file of scenarios
//! built with libtest's harness (its `[[bench]]` lacks `harness = false`), and one without
//! `loadbench::main!()`. Cargo metadata says neither, and rustc's errors (`E0601`, or a binary
//! that lists no tests) do not point at loadbench; the target's source file does.
//!
//! The source is only read once something went wrong, and only searched for words: a false
//! hint costs a line of text, never a run.

use std::path::Path;

use crate::discover::BenchTarget;

/// For a target whose binary did not answer as a loadbench bench: the fix, when its source file
/// declares scenarios (so it was meant to be one).
pub fn not_a_loadbench_binary(target: &BenchTarget) -> Option<String> {
    let source = read(&target.source)?;
    if !declares_scenarios(&source) {
        return None;
    }
    let file = shown(target);
    Some(if has_main(&source) {
        format!(
            "{file} declares scenarios, but bench target `{}` runs libtest's harness: add `harness = false` \
             to its [[bench]] section in {} (`[[bench]] name = \"{}\" harness = false`)",
            target.bench,
            manifest(target),
            target.bench
        )
    } else {
        format!(
            "{file} declares scenarios, but bench target `{}` runs libtest's harness: add `harness = false` \
             to its [[bench]] section in {} and `loadbench::main!();` at the end of {file}",
            target.bench,
            manifest(target)
        )
    })
}

/// After a failed build: the fix for each target whose source declares scenarios but has no
/// `main` (rustc's `E0601`, "`main` function not found").
pub fn missing_main(targets: &[BenchTarget]) -> Vec<String> {
    targets
        .iter()
        .filter_map(|target| {
            let source = read(&target.source)?;
            (declares_scenarios(&source) && !has_main(&source)).then(|| {
                format!(
                    "{} declares scenarios but has no `main`: add `loadbench::main!();` at the end of the file \
                     (a bench target with `harness = false` needs it to run them)",
                    shown(target)
                )
            })
        })
        .collect()
}

fn read(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// Whether `source` holds a `#[loadbench::scenario(…)]` or a `#[scenario(…)]` after a `use` of it.
fn declares_scenarios(source: &str) -> bool {
    code_lines(source).any(|line| {
        let line = line.trim_start();
        line.starts_with("#[loadbench::scenario") || (line.starts_with("#[scenario") && source.contains("loadbench"))
    })
}

/// Whether `source` has a `main`: `loadbench::main!()` (or `main!()` after a `use`), or a
/// `fn main` of its own (one that calls `Harness::run`).
fn has_main(source: &str) -> bool {
    code_lines(source).any(|line| line.contains("main!") || line.contains("fn main"))
}

/// The lines of `source` that are not `//` comments: a doc comment that shows `main!()` is not one.
fn code_lines(source: &str) -> impl Iterator<Item = &str> {
    source.lines().filter(|line| !line.trim_start().starts_with("//"))
}

/// The source file as the user knows it: relative to its package.
fn shown(target: &BenchTarget) -> String {
    target.source.strip_prefix(&target.package_root).unwrap_or(&target.source).display().to_string()
}

fn manifest(target: &BenchTarget) -> String {
    target.package_root.join("Cargo.toml").display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scenarios_and_mains_are_recognised_outside_comments() {
        let file = "use loadbench::Ctx;\n#[loadbench::scenario(concurrency = 1, count = 1)]\nasync fn a(ctx: &mut Ctx) -> loadbench::Result<()> { Ok(()) }\n";
        assert!(declares_scenarios(file));
        assert!(!has_main(file));
        assert!(has_main(&format!("{file}loadbench::main!();\n")));
        assert!(!has_main(&format!("{file}// loadbench::main!();\n")));
        assert!(declares_scenarios("use loadbench::scenario;\n#[scenario(count = 1)]\nasync fn a() {}"));
        assert!(!declares_scenarios("fn main() { criterion(); }\n// #[loadbench::scenario]"));
    }
}
