//! Checks on what the clock measured, written so that they hold on a slow or busy machine and
//! still fail when the generator is wrong.
//!
//! What the generator controls is checked exactly: a run never ends before its duration, an
//! open model never runs faster than its rate. What a busy machine can shave (a late timer, a
//! thread not scheduled for a few milliseconds) gets room on one side only: a run may end a
//! little late and an open model may fall a little behind, never the other way round.

use std::time::Duration;

/// How late a run may end past its duration on a loaded machine: in-flight iterations finish,
/// and the worker threads compete with whatever else the cores are running.
pub const LATE: Duration = Duration::from_millis(400);

/// How far an open model may fall behind its rate on a loaded machine (and still be a run that
/// measures the rate asked for; a generator that cannot keep up says so in its report).
pub const BEHIND: f64 = 0.10;

/// Checks that a run measured `duration_us` for a plan of `expected`: not shorter (less 100 ms,
/// for where the measured part starts after the run's own clock, as after a warmup), and at
/// most [`LATE`] longer.
#[track_caller]
pub fn assert_ran_for(duration_us: u64, expected: Duration, what: &str) {
    let ran = Duration::from_micros(duration_us);
    let early = expected.saturating_sub(Duration::from_millis(100));
    assert!(ran >= early, "{what}: ran {ran:?}, short of {expected:?}");
    assert!(ran <= expected + LATE, "{what}: ran {ran:?}, more than {LATE:?} past {expected:?}");
}

/// Checks an open model's achieved rate against the `requested` one: never above it (3 % for
/// where the first and last arrivals fall against the measured duration), and at most
/// [`BEHIND`] below.
#[track_caller]
pub fn assert_rate(achieved: f64, requested: f64, what: &str) {
    assert!(achieved <= requested * 1.03, "{what}: achieved {achieved:.1}/s, above the {requested}/s asked");
    assert!(
        achieved >= requested * (1.0 - BEHIND),
        "{what}: achieved {achieved:.1}/s, more than {:.0} % behind the {requested}/s asked",
        BEHIND * 100.0
    );
}

/// Checks a count the clock decides (iterations in a second, in a run of a set duration)
/// against the `expected` one: at most 3 % above (exact for what the generator schedules, less
/// rounding at the edges) and at most [`BEHIND`] below.
#[track_caller]
pub fn assert_count(actual: u64, expected: u64, what: &str) {
    let ceiling = expected + (expected * 3).div_ceil(100);
    let floor = expected - (expected as f64 * BEHIND) as u64;
    assert!(actual <= ceiling, "{what}: {actual}, above the {expected} expected (+3 %)");
    assert!(actual >= floor, "{what}: {actual}, more than {:.0} % under the {expected} expected", BEHIND * 100.0);
}
