//! SIGINT (Ctrl-C), SIGTERM and SIGHUP, as every loadbench command line handles them.
//!
//! SIGHUP (a closed terminal or ssh session) is handled as SIGTERM: the run's results are still
//! written, so a run that lost its terminal loses only its console output. A process started
//! with SIGHUP ignored (`nohup`) keeps ignoring it, as its user asked.
//!
//! The first signal stops the run gracefully: no new iteration starts, those in flight may go on
//! for the grace period (`--grace`, default 5 s) and are then cancelled; the partial results are
//! reported, marked `interrupted`. The second cancels what is still in flight at once, and the
//! results gathered so far are reported (within a second; should anything hang, the process
//! exits anyway [`FAILSAFE`] later). The exit code is 130 after SIGINT, 143 after SIGTERM, 129
//! after SIGHUP, by the first signal ([`exit_code()`]). What the handler says on stderr is written
//! without a check: after SIGHUP the terminal may be gone, and a failed write must not stop the
//! results from being written.
//!
//! One handler per process, on a thread of its own, shared by everything that runs in it: a
//! bench binary's [`Harness::run`](crate::Harness::run), and `cargo loadbench` with the one-shot
//! runs it makes itself. `cargo loadbench` starts each bench binary in a process group of its own
//! (so that Ctrl-C in a terminal, sent to the whole foreground group, reaches the binary once, not
//! twice) and forwards every signal it gets to it ([`forward_to`]); the binary dies with it if it
//! is killed outright ([`die_with_parent`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use crate::exit_code;

/// After a second signal, the most the process waits for its results to be written before it
/// exits regardless.
pub const FAILSAFE: Duration = Duration::from_secs(3);

/// Environment variable giving a bench binary the process id of the `cargo loadbench` that
/// started it: the binary dies with that process ([`die_with_parent`]).
pub const PARENT_ENV: &str = "LOADBENCH_PARENT";

/// The signals seen, and the process they are passed on to.
#[derive(Debug, Default)]
struct State {
    /// Signals received so far.
    count: u32,
    /// The first one's number.
    first: Option<i32>,
    /// The bench binary running now, which gets every signal this process gets.
    child: Option<u32>,
    /// Process groups of services this process started (`cargo loadbench ab --serve`), killed
    /// before the failsafe exit so that none outlives it.
    groups: Vec<u32>,
}

static STATE: Mutex<State> = Mutex::new(State { count: 0, first: None, child: None, groups: Vec::new() });

/// Set by the first signal: the stop flag of every run made in this process.
static STOP: LazyLock<Arc<AtomicBool>> = LazyLock::new(Arc::default);

/// Set by the second signal: what is in flight is cancelled at once.
static CANCEL: LazyLock<Arc<AtomicBool>> = LazyLock::new(Arc::default);

/// Whether the handler is installed, and how that went.
static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();

fn state() -> MutexGuard<'static, State> {
    // Only counters live under the lock: one poisoned by a panic elsewhere is still right.
    STATE.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Installs the handler of SIGINT, SIGTERM and SIGHUP (once per process; later calls return the
/// first one's outcome); SIGHUP is left ignored when the process started with it ignored
/// (`nohup`). With `announce`, the signals say what happens next on stderr (a process that runs
/// the load itself does; one that waits for a bench binary leaves it to the binary).
pub fn install(announce: bool) -> Result<(), String> {
    INSTALLED
        .get_or_init(|| {
            let handled: &[i32] = if hangup_ignored() { &[SIGINT, SIGTERM] } else { &[SIGINT, SIGTERM, SIGHUP] };
            let mut signals = Signals::new(handled).map_err(|e| format!("cannot handle signals: {e}"))?;
            std::thread::Builder::new()
                .name("loadbench-signals".to_owned())
                .spawn(move || {
                    for signal in signals.forever() {
                        on_signal(signal, announce);
                    }
                })
                .map(drop)
                .map_err(|e| format!("cannot start the signal thread: {e}"))
        })
        .clone()
}

/// Whether this process started with SIGHUP ignored (`nohup`), from the kernel's mask of ignored
/// signals (Linux; elsewhere, as if not).
fn hangup_ignored() -> bool {
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else { return false };
    let mask =
        status.lines().find_map(|l| l.strip_prefix("SigIgn:")).and_then(|m| u64::from_str_radix(m.trim(), 16).ok());
    // Bit `n - 1` is signal `n`.
    mask.is_some_and(|m| m & (1 << (SIGHUP - 1)) != 0)
}

/// `line` on stderr, and nothing when stderr cannot be written (a terminal closed by SIGHUP).
fn say(line: &str) {
    crate::console::err!("{line}");
}

fn on_signal(signal: i32, announce: bool) {
    let mut state = state();
    state.count += 1;
    state.first.get_or_insert(signal);
    if let Some(child) = state.child {
        send(child, signal);
    }
    let count = state.count;
    drop(state);
    STOP.store(true, Ordering::SeqCst);
    match count {
        1 if announce => say("interrupted: no new iteration starts; those in flight get the grace period, then are \
             cancelled; signal again (Ctrl-C) to stop at once"),
        2 => {
            CANCEL.store(true, Ordering::SeqCst);
            if announce {
                say("interrupted again: cancelling what is in flight and reporting the results so far");
            }
            // Whatever holds the run up (a setup, a write), the process ends.
            let code = exit_code().unwrap_or(exit_code::INTERRUPTED);
            let _ = std::thread::Builder::new().name("loadbench-failsafe".to_owned()).spawn(move || {
                std::thread::sleep(FAILSAFE);
                for group in std::mem::take(&mut self::state().groups) {
                    kill_group(group);
                }
                std::process::exit(i32::from(code));
            });
        }
        _ => {}
    }
}

/// Passes `signal` on to process `pid`. Fails only when the process is gone, which is then moot.
fn send(pid: u32, signal: i32) {
    if let (Ok(pid), Ok(signal)) = (i32::try_from(pid), nix::sys::signal::Signal::try_from(signal)) {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), signal);
    }
}

/// Passes every signal this process gets on to `child` from now on (`None`: to no process).
/// A signal that came before, while `child` was being started, is passed on at once, so that it
/// cannot slip between the check and the start.
pub fn forward_to(child: Option<u32>) {
    let mut state = state();
    state.child = child;
    if let (Some(child), Some(first)) = (child, state.first) {
        send(child, first);
        if state.count > 1 {
            send(child, first);
        }
    }
}

/// Kills process group `group` with SIGKILL if this process exits on the failsafe after a second
/// signal, until [`release_group`]: a service started in a process group of its own (so that
/// Ctrl-C in a terminal does not reach it directly) never outlives the command that started it.
pub fn guard_group(group: u32) {
    state().groups.push(group);
}

/// Stops guarding `group` ([`guard_group`]), once it has been stopped.
pub fn release_group(group: u32) {
    state().groups.retain(|&g| g != group);
}

fn kill_group(group: u32) {
    if let Ok(group) = i32::try_from(group) {
        let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(group), nix::sys::signal::Signal::SIGKILL);
    }
}

/// Whether a first signal came.
pub fn interrupted() -> bool {
    state().count > 0
}

/// The exit code an interrupted run ends with: 130 (128 + SIGINT), 143 (128 + SIGTERM) or 129
/// (128 + SIGHUP), by the first signal; `None` when no signal came.
pub fn exit_code() -> Option<u8> {
    state().first.map(|signal| match signal {
        SIGTERM => exit_code::TERMINATED,
        SIGHUP => exit_code::HANGUP,
        _ => exit_code::INTERRUPTED,
    })
}

/// The flag the first signal sets, for the runs this process makes.
pub fn stop_flag() -> Arc<AtomicBool> {
    Arc::clone(&STOP)
}

/// The flag the second signal sets: cancel what is in flight now.
pub fn cancel_flag() -> Arc<AtomicBool> {
    Arc::clone(&CANCEL)
}

/// In a bench binary started by `cargo loadbench` ([`PARENT_ENV`] set): asks the kernel to kill
/// this process when its parent dies, even by SIGKILL (Linux's parent-death signal), and exits
/// at once if the parent is already gone. Elsewhere, or without the variable, does nothing.
pub fn die_with_parent() {
    let Some(parent) = std::env::var(PARENT_ENV).ok().and_then(|p| p.trim().parse::<i32>().ok()) else {
        return;
    };
    #[cfg(target_os = "linux")]
    {
        use nix::sys::signal::Signal;
        if nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).is_err() {
            return;
        }
        // The parent may have died before the request: then nobody would send the signal.
        if nix::unistd::getppid().as_raw() != parent {
            std::process::exit(i32::from(exit_code::TERMINATED));
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = parent;
}
