//! Exit codes of bench binaries and of `cargo loadbench`. Stable: CI scripts depend on them.

/// The run completed. Request errors are counted and reported, not fatal.
pub const OK: u8 = 0;
/// A gate failed: a threshold or a regression against a baseline; a scenario none of whose
/// iterations succeeded (unless `--allow-failures`); or, with `--fail-on-warning`, a
/// scenario measured nothing (no HTTP exchange, or iterations faster than a round trip). A run
/// that measured nothing ran, so it is not [`SCENARIO_FAILED`]; its figures cannot be trusted,
/// as a missed threshold's cannot, and CI scripts already read 1 as "ran but did not pass".
pub const GATE_FAILED: u8 = 1;
/// Usage, configuration or build error: a bad flag or file, a filter that matches nothing; also
/// an output that could not be written, a file after the run or stdout or stderr at any time
/// (what could be printed still is).
pub const USAGE: u8 = 2;
/// A scenario could not run: its binary crashed or its setup failed.
pub const SCENARIO_FAILED: u8 = 3;
/// The run was inconclusive: its figures are the generator's, not the server's. The generator was
/// saturated (its self-check's rule), dropped more than 1 % of the open model's arrivals, or
/// reached more than 5 % below the asked rate (or a scenario's own threshold on `saturated`,
/// `dropped` or `rate` failed). `--allow-inconclusive` makes it 0. A gate that failed in the same
/// run still makes it [`GATE_FAILED`].
pub const INCONCLUSIVE: u8 = 4;
/// Stopped by Ctrl-C (128 + SIGINT, as shells expect); the partial results were still reported,
/// with `interrupted: true`, so `cargo loadbench && deploy` does not go on after a stopped run.
pub const INTERRUPTED: u8 = 130;
/// Stopped by SIGTERM (128 + 15), as `timeout`, CI runners and service managers send it; like
/// [`INTERRUPTED`], the partial results were still reported, with `interrupted: true`.
pub const TERMINATED: u8 = 143;
/// Stopped by SIGHUP (128 + 1): the terminal or ssh session the run was started from closed.
/// Handled as SIGTERM: the partial results were still written (to files; the terminal may be
/// gone), with `interrupted: true`. A run started under `nohup` ignores SIGHUP and goes on.
pub const HANGUP: u8 = 129;
