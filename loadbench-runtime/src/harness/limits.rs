//! Open-file limits: raised at start, and checked against the asked concurrency.

/// File descriptors kept free for everything that is not a virtual user's socket: stdio, the
/// runtime's own descriptors, an embedded server's listener and its accepted connections.
const SPARE_FILES: u64 = 64;

/// Raises the soft limit on open files to the hard limit and returns the limit now in force
/// (`None` where the platform has no such limit or it cannot be read).
pub(crate) fn raise_open_files() -> Option<u64> {
    rlimit::increase_nofile_limit(u64::MAX).ok()
}

/// Checks that `concurrency` sockets fit under `limit`, with one clear message when they do not:
/// otherwise the run would end in thousands of "too many open files" connect errors.
pub(crate) fn check_concurrency(concurrency: u32, limit: Option<u64>) -> Result<(), String> {
    let Some(limit) = limit else { return Ok(()) };
    // An embedded server in the same process holds the other end of each connection.
    let needed = u64::from(concurrency) * 2 + SPARE_FILES;
    if needed <= limit {
        return Ok(());
    }
    Err(format!(
        "concurrency {concurrency} needs about {needed} open files (one socket per virtual user, plus the server's side \
         when it runs in this process), but the limit is {limit}; raise it with `ulimit -n {needed}` or lower the concurrency"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concurrency_within_the_limit_passes() {
        assert!(check_concurrency(1_000, Some(20_000)).is_ok());
        assert!(check_concurrency(1_000, None).is_ok());
    }

    #[test]
    fn concurrency_over_the_limit_names_both_numbers() {
        let err = check_concurrency(50_000, Some(20_000)).unwrap_err();
        assert!(err.contains("concurrency 50000"), "{err}");
        assert!(err.contains("limit is 20000"), "{err}");
    }
}
