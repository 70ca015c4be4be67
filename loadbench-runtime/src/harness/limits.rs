//! Open-file limits: raised at start, and checked against the asked concurrency.

/// File descriptors the generator holds whatever its load: stdio, the progress and sampler
/// threads, a watched process's `/proc` files, a result file being written.
const FIXED_FILES: u64 = 32;

/// File descriptors each worker thread's runtime holds (its epoll instance and its waker, with
/// room to spare).
const FILES_PER_WORKER: u64 = 4;

/// Raises the soft limit on open files to the hard limit and returns the limit now in force
/// (`None` where the platform has no such limit or it cannot be read).
pub(crate) fn raise_open_files() -> Option<u64> {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).ok()?;
    // Refused (a hard limit the kernel will not grant as a soft one), the soft limit stays.
    if soft < hard && setrlimit(Resource::RLIMIT_NOFILE, hard, hard).is_ok() { Some(hard) } else { Some(soft) }
}

/// Checks that `concurrency` sockets, spread over `workers` threads, fit under `limit`, with one
/// clear message when they do not: otherwise the run would end in thousands of "too many open
/// files" connect errors.
///
/// What is counted is what this process holds: one socket per virtual user, plus a fixed share;
/// and, only when the server runs in this process too (`server_here`: a
/// `Harness::default_target` started in-process), its end of every connection. A server elsewhere
/// (`cargo loadbench url`, `--target`) has limits of its own.
pub(crate) fn check_concurrency(
    concurrency: u32,
    workers: usize,
    server_here: bool,
    limit: Option<u64>,
) -> Result<(), String> {
    let Some(limit) = limit else { return Ok(()) };
    let users = u64::from(concurrency);
    let needed = users
        .saturating_mul(if server_here { 2 } else { 1 })
        .saturating_add(FIXED_FILES)
        .saturating_add(FILES_PER_WORKER.saturating_mul(workers as u64));
    if needed <= limit {
        return Ok(());
    }
    let server = if server_here { ", plus the server's side, as it runs in this process" } else { "" };
    Err(format!(
        "concurrency {concurrency} needs about {needed} open files (one socket per virtual user{server}, and a few per \
         worker thread), but the limit is {limit}; raise it with `ulimit -n {needed}` or lower the concurrency"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concurrency_within_the_limit_passes() {
        assert!(check_concurrency(1_000, 8, true, Some(20_000)).is_ok());
        assert!(check_concurrency(1_000, 8, true, None).is_ok());
        // `ulimit -n 256` leaves room for 150 connections to a server elsewhere.
        assert!(check_concurrency(150, 2, false, Some(256)).is_ok());
    }

    #[test]
    fn concurrency_over_the_limit_names_both_numbers() {
        let err = check_concurrency(50_000, 2, false, Some(20_000)).unwrap_err();
        assert!(err.contains("concurrency 50000 needs about 50040 open files"), "{err}");
        assert!(err.contains("limit is 20000"), "{err}");
        assert!(!err.contains("server"), "{err}");
        // The server's side counts only when it shares this process's limit.
        let err = check_concurrency(150, 2, true, Some(256)).unwrap_err();
        assert!(err.contains("needs about 340 open files"), "{err}");
        assert!(err.contains("as it runs in this process"), "{err}");
    }
}
