//! Runs bench binaries and reads what they report through the `LOADBENCH_OUTPUT` file.
//!
//! The file is the whole protocol: the binary's stdout and stderr stay free for the user's own
//! output and for progress, and a binary that is not a loadbench bench (a criterion bench in the
//! same package, say) simply never writes it.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};

use loadbench::cli::interrupt;
use loadbench::console::err;
use loadbench::exit_code;
use loadbench::report::{OLDEST_READABLE_VERSION, RunReport, SCHEMA_VERSION, ScenarioList};
use loadbench::threshold::Percentile;
use serde::de::DeserializeOwned;

use crate::build::Executable;
use crate::error::Error;
use crate::versioned::{self, ReadError};

/// Options passed on to every bench binary that runs scenarios.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// `--target URL`.
    pub target: Option<String>,
    /// `--quiet`.
    pub quiet: bool,
    /// `--grace TIME`.
    pub grace: Option<std::time::Duration>,
    /// `--watch` and `--watch-pid`: processes sampled while each scenario runs.
    pub watches: Vec<loadbench::watch::Watch>,
    /// `--insecure`, `--cacert`, `--cert`, `--key`, `--connect-to`, `--no-tls-resumption`.
    pub client: loadbench::cli::ClientArgs,
    /// Latency percentiles the binary measures beyond its fixed ones: `--percentiles` and those
    /// of the `--threshold`s, which are shown and evaluated from its JSON.
    pub percentiles: Vec<Percentile>,
    /// The binary's scenarios' place in the whole run, `(scenarios before them, scenarios in
    /// all)`, for the `[i/n]` of their progress lines ([`loadbench::cli::PROGRESS_ENV`]).
    pub progress: Option<(usize, usize)>,
    /// `--shard`, `--start-at` and `--histograms`. The start is for the first binary the command
    /// runs only: the others start when the one before them ends.
    pub distributed: loadbench::cli::DistributedArgs,
    /// `--remote-write` and its companions, passed on to every binary.
    pub remote_write: loadbench::cli::RemoteWriteArgs,
}

/// How a bench binary's run ended.
#[derive(Debug)]
pub enum Outcome {
    /// It wrote its results (some scenarios may carry a `setup_error`); boxed, as the other
    /// outcomes are small.
    Finished(Box<RunReport>),
    /// It rejected its configuration (exit code 2) and has said why on stderr.
    UsageError,
    /// It died or exited without results; the reason, for the report.
    CouldNotRun(String),
}

/// Asks `exe` for its scenarios with `--bench --list`, writing through `output` (a path that
/// does not exist yet). `None` means the binary is not a loadbench bench: it did not write the
/// file.
pub fn list(exe: &Executable, output: &Path) -> Result<Option<ScenarioList>, Error> {
    let result = bench_command(exe, output)
        .args(["--bench", "--list"])
        // A foreign bench answers `--list` in its own way; that is not for our stdout.
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output();
    let result = result.map_err(|source| spawn_error(exe, source))?;
    if !output.exists() {
        if !result.status.success() {
            // Most likely not ours; but if it is, this is the only hint of what went wrong.
            let stderr = String::from_utf8_lossy(&result.stderr);
            let last = stderr.lines().map(str::trim).rfind(|l| !l.is_empty()).unwrap_or("");
            err!("note: {}: skipped: not a loadbench target ({}{}{last})", exe.target, result.status, sep(last));
        } else {
            err!("note: {}: skipped: not a loadbench target", exe.target);
        }
        if let Some(fix) = crate::mistakes::not_a_loadbench_binary(&exe.target) {
            err!("warning: {}: {fix}", exe.target);
        }
        return Ok(None);
    }
    read_json(output).map(Some).map_err(|reason| Error::Protocol { target: exe.target.to_string(), reason })
}

/// Runs the scenarios `names` of `exe` (exact names, as [`list`] returned them).
///
/// The binary inherits stderr (progress); its stdout goes to our stderr to keep our stdout for
/// the table. It runs in a process group of its own, so that Ctrl-C in a terminal (sent to the
/// foreground group) reaches it once, through us: every SIGINT, SIGTERM or SIGHUP we get is forwarded to
/// it ([`interrupt::forward_to`]), and it stops and reports partial results on its own. It dies
/// with us if we are killed outright ([`interrupt::die_with_parent`]). A binary that cannot even
/// start is one that could not run, like one that crashed.
pub fn run(exe: &Executable, names: &[String], options: &RunOptions, output: &Path) -> Outcome {
    let mut command = bench_command(exe, output);
    command.args(["--bench", "--exact"]);
    if let Some(target) = &options.target {
        command.arg("--target").arg(target);
    }
    if options.quiet {
        command.arg("--quiet");
    }
    if let Some(grace) = options.grace {
        command.arg("--grace").arg(format!("{}ms", grace.as_millis().max(1)));
    }
    command.args(options.client.to_args());
    command.args(options.distributed.to_args());
    command.args(options.remote_write.to_args());
    if !options.percentiles.is_empty() {
        let names: Vec<String> = options.percentiles.iter().map(ToString::to_string).collect();
        command.env(loadbench::cli::PERCENTILES_ENV, names.join(","));
    }
    if let Some((offset, total)) = options.progress {
        command.env(loadbench::cli::PROGRESS_ENV, format!("{offset}/{total}"));
    }
    // `--` so that a scenario named `-x` (names can be any string) stays a name.
    command.arg("--").args(names);
    command.stdout(std::io::stderr()).stderr(Stdio::inherit());
    command.env(interrupt::PARENT_ENV, std::process::id().to_string()).process_group(0);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(err) => return Outcome::CouldNotRun(format!("its bench binary could not start: {err}")),
    };
    interrupt::forward_to(Some(child.id()));
    let status = child.wait();
    interrupt::forward_to(None);
    match status {
        Ok(status) => outcome(status, output),
        Err(err) => Outcome::CouldNotRun(format!("its bench binary could not be waited for: {err}")),
    }
}

fn outcome(status: ExitStatus, output: &Path) -> Outcome {
    let code = status.code().and_then(|c| u8::try_from(c).ok());
    match code {
        Some(exit_code::USAGE) => Outcome::UsageError,
        // After a signal the binary stops early, writes its partial results and exits 130 (SIGINT),
        // 143 (SIGTERM) or 129 (SIGHUP); a missed attribute threshold is 1, an inconclusive run 4.
        // Either way the results are there, and the verdict is made again from them.
        Some(
            exit_code::OK
            | exit_code::GATE_FAILED
            | exit_code::INCONCLUSIVE
            | exit_code::SCENARIO_FAILED
            | exit_code::INTERRUPTED
            | exit_code::TERMINATED
            | exit_code::HANGUP,
        ) if output.exists() => match read_json(output) {
            Ok(report) => Outcome::Finished(Box::new(report)),
            Err(reason) => Outcome::CouldNotRun(format!("its results could not be read: {reason}")),
        },
        // A crash, a panic (101), a signal it did not handle, or an exit without a file: nothing
        // trustworthy was written, but the other binaries can still run.
        _ => Outcome::CouldNotRun(format!("its bench binary failed ({status})")),
    }
}

/// The command for `exe`, run the way `cargo bench` runs it.
fn bench_command(exe: &Executable, output: &Path) -> Command {
    let mut command = Command::new(&exe.path);
    command.env(loadbench::cli::OUTPUT_ENV, output).current_dir(&exe.target.package_root).stdin(Stdio::null());
    command
}

fn spawn_error(exe: &Executable, source: std::io::Error) -> Error {
    Error::Spawn { program: format!("{} ({})", exe.target, exe.path.display()), source }
}

fn sep(text: &str) -> &'static str {
    if text.is_empty() { "" } else { ": " }
}

/// Reads a result file a bench binary wrote, refusing a schema version this build does not
/// know rather than misreading it.
fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T, String> {
    versioned::read_own(path).map_err(|err| match err {
        ReadError::Version(v) => format!(
            "it writes result schema {v}, this cargo-loadbench reads schemas {OLDEST_READABLE_VERSION} to \
             {SCHEMA_VERSION}; \
             use the cargo-loadbench version that matches loadbench-runtime"
        ),
        other => other.to_string(),
    })
}

#[cfg(test)]
// A failed expectation is a failed test; `expect` says which.
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn result_files_of_another_schema_are_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("list.json");
        std::fs::write(&path, r#"{"schema_version": 99, "scenarios": []}"#).expect("write");
        let err = read_json::<ScenarioList>(&path).expect_err("schema 99");
        assert!(err.contains("result schema 99"), "{err}");

        std::fs::write(&path, r#"{"schema_version": 1, "scenarios": []}"#).expect("write");
        let list = read_json::<ScenarioList>(&path).expect("schema 1");
        assert!(list.scenarios.is_empty());

        std::fs::write(&path, "{").expect("write");
        assert!(read_json::<ScenarioList>(&path).expect_err("truncated").starts_with("invalid JSON"));
    }

    #[cfg(unix)]
    #[test]
    fn exit_statuses_map_to_outcomes() {
        use std::os::unix::process::ExitStatusExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let missing = dir.path().join("missing.json");
        let from_code = |code: i32| ExitStatus::from_raw(code << 8);
        assert!(matches!(outcome(from_code(2), &missing), Outcome::UsageError));
        assert!(matches!(outcome(from_code(0), &missing), Outcome::CouldNotRun(_)));
        let Outcome::CouldNotRun(reason) = outcome(ExitStatus::from_raw(11), &missing) else { panic!("SIGSEGV") };
        assert!(reason.contains("signal"), "{reason}");
        let Outcome::CouldNotRun(reason) = outcome(from_code(101), &missing) else { panic!("panic exit") };
        assert!(reason.contains("101"), "{reason}");
    }
}
