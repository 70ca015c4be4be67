//! Ctrl-C, as every loadbench command line handles it: the first press stops the run gracefully
//! (no new iteration starts, those in flight finish, the partial results are reported and marked
//! `interrupted`); the second quits at once with exit code 130.
//!
//! One handler per process, shared by everything that runs in it: a bench binary's
//! [`Harness::run`](crate::Harness::run), and `cargo loadbench` with the one-shot runs it makes
//! itself. A bench binary started by `cargo loadbench` is in its process group and receives the
//! same SIGINT, so it stops and reports on its own.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, LazyLock};

use crate::exit_code;

/// Ctrl-C presses seen since the handler was installed.
static PRESSES: AtomicU32 = AtomicU32::new(0);

/// Set by the first press: the stop flag of every run made in this process.
static STOP: LazyLock<Arc<AtomicBool>> = LazyLock::new(Arc::default);

/// Installs the handler. With `announce`, the first press says what happens next on stderr (a
/// process that runs the load itself does; one that waits for a bench binary leaves it to the
/// binary). Fails when another handler is already installed.
pub fn install(announce: bool) -> Result<(), String> {
    ctrlc::set_handler(move || {
        if PRESSES.fetch_add(1, Ordering::SeqCst) > 0 {
            std::process::exit(i32::from(exit_code::INTERRUPTED));
        }
        STOP.store(true, Ordering::SeqCst);
        if announce {
            eprintln!("interrupted: finishing in-flight requests; press Ctrl-C again to quit");
        }
    })
    .map_err(|e| e.to_string())
}

/// Whether Ctrl-C was pressed.
pub fn interrupted() -> bool {
    PRESSES.load(Ordering::SeqCst) > 0
}

/// The flag the first press sets, for the runs this process makes.
pub fn stop_flag() -> Arc<AtomicBool> {
    Arc::clone(&STOP)
}
