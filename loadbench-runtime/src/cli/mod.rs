//! What every loadbench command line shares, the bench binaries' and `cargo loadbench`'s: the
//! environment variables between them, how scenarios are selected by name, how a usage error is
//! reported, what Ctrl-C does, and the flags of a distributed run (`distributed.rs`: `--shard`,
//! how a load is split, `--start-at`) and live metrics' (`remote_write.rs`: `--remote-write` and
//! its label set and interval). Each exists once, here, so the two cannot drift apart.
//!
//! Uses only the ground floor (`exit_code`).

mod cargo_env;
mod client;
mod distributed;
mod filter;
pub mod interrupt;
mod remote_write;

use std::process::ExitCode;

pub use cargo_env::{forget_the_running_package, the_running_package};
pub use client::ClientArgs;
pub use distributed::{DistributedArgs, MAX_RUN_ID, MAX_SHARDS, MAX_START_AHEAD, Shard, StartAt, parse_run_id};
pub use filter::{Filter, NoMatch};
pub use remote_write::{
    HistogramKind, Label, MIN_INTERVAL, RESERVED_LABELS, RemoteWriteArgs, RemoteWriteConfig, RemoteWriteError,
};

use loadbench_grammar::{Percentile, PercentileError};

use crate::console::err;
use crate::exit_code;

/// Environment variable naming the file where a bench binary writes its results (or its list,
/// with `--list`) for `cargo loadbench`; when set, the binary prints no table of its own.
pub const OUTPUT_ENV: &str = "LOADBENCH_OUTPUT";

/// Environment variable giving the target base URL when `--target` is not passed.
pub const TARGET_ENV: &str = "LOADBENCH_TARGET";

/// Environment variable giving the scale factor when `--scale` is not passed: every scenario
/// runs at this fraction of its attribute's load (users, count, duration, rate), as CI runs the
/// examples.
pub const SCALE_ENV: &str = "LOADBENCH_SCALE";

/// Environment variable naming latency percentiles a bench binary measures beyond the ones every
/// report holds, comma-separated (`75,99.99`): `cargo loadbench` asks so for those its
/// `--threshold`s and `--percentiles` name, which it evaluates and shows from the binary's JSON.
pub const PERCENTILES_ENV: &str = "LOADBENCH_PERCENTILES";

/// Environment variable giving a bench binary its scenarios' place in a larger run, for the
/// `[i/n]` of its progress lines: `OFFSET/TOTAL` (`3/12`: its first scenario is the 4th of 12).
/// `cargo loadbench` sets it for each binary it runs; a binary started alone counts its own.
pub const PROGRESS_ENV: &str = "LOADBENCH_PROGRESS";

/// Reads [`PROGRESS_ENV`]'s `OFFSET/TOTAL`; `None` when malformed.
///
/// ```
/// assert_eq!(loadbench::cli::parse_progress("3/12"), Some((3, 12)));
/// assert_eq!(loadbench::cli::parse_progress("13/12"), None);
/// ```
pub fn parse_progress(text: &str) -> Option<(usize, usize)> {
    let (offset, total) = text.trim().split_once('/')?;
    let (offset, total) = (offset.trim().parse().ok()?, total.trim().parse().ok()?);
    (offset < total).then_some((offset, total))
}

/// Parses a list of percentiles as `--percentiles` and [`PERCENTILES_ENV`] write it:
/// `50,95,99.9` (a leading `p` and `_` for the point are accepted: `p99_9`).
///
/// ```
/// let columns = loadbench::cli::parse_percentiles("50, 95,99.9").unwrap();
/// assert_eq!(columns.iter().map(ToString::to_string).collect::<Vec<_>>(), ["p50", "p95", "p99_9"]);
/// assert!(loadbench::cli::parse_percentiles("50,100").is_err());
/// ```
pub fn parse_percentiles(text: &str) -> Result<Vec<Percentile>, PercentileError> {
    text.split(',').filter(|part| !part.trim().is_empty()).map(Percentile::parse_percent).collect()
}

/// Reports a command-line error the way loadbench reports every usage error: one line naming the
/// problem, exit code 2. (`--help` and `--version` also arrive here, and print in full.)
pub fn report_usage_error(err: &clap::Error) -> ExitCode {
    if !err.use_stderr() {
        // `--help` on a full disk fails as any other output would; to a closed pipe, quietly.
        return match err.print() {
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                err!("error: cannot write to stdout: {e}");
                ExitCode::from(exit_code::USAGE)
            }
            _ => ExitCode::SUCCESS,
        };
    }
    err!("{}", usage_error_line(err));
    ExitCode::from(exit_code::USAGE)
}

/// The one line a usage error is reported as: clap's first line, which names the flag and the
/// problem, completed with what clap puts on the lines below it that the user needs (the
/// arguments missing, the values a flag takes), then `(see --help)`. clap's tip and usage lines
/// are left out.
pub fn usage_error_line(err: &clap::Error) -> String {
    use clap::error::{ContextKind, ContextValue, ErrorKind};

    let message = err.to_string();
    let mut lines = message.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or("error: invalid arguments");
    // "the following required arguments were not provided:" names them on the lines below.
    if let Some(named) = lines.next().filter(|_| first.ends_with(':')) {
        return format!("{first} {named} (see --help)");
    }
    // An invalid value of a flag with a fixed set of them: the set, which clap prints as a
    // `[possible values: …]` line of its own.
    if err.kind() == ErrorKind::InvalidValue
        && let Some(ContextValue::Strings(valid)) = err.get(ContextKind::ValidValue)
        && !valid.is_empty()
    {
        return format!("{first}: expected one of {} (see --help)", valid.join(", "));
    }
    format!("{first} (see --help)")
}
