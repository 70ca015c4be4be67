//! The plain progress of a non-terminal display (CI logs): a line at each 10 % step.

use std::time::Duration;

use crate::config::Load;

/// The counts read at one tick.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Reading {
    pub(super) done: u64,
    pub(super) failed: u64,
    pub(super) elapsed: Duration,
}

/// The 10 % steps of a non-terminal progress display: one line per step, as `ab` prints them,
/// even when a tick (or the whole run) spans several steps, so a CI log always shows the same
/// steps.
///
/// Each line gives the counts as of its step, not of the tick that noticed it: when one tick
/// spans several steps, the counts at each are interpolated between this reading and the last
/// (the only two known), so the 10 % line of a run that failed throughout says 200 failed, not
/// the 2000 that had failed by the time it was printed.
#[derive(Debug)]
pub(super) struct Steps {
    load: Load,
    reported_tenths: u32,
    last: Reading,
}

impl Steps {
    pub(super) fn new(load: Load) -> Steps {
        Steps { load, reported_tenths: 0, last: Reading::default() }
    }

    /// The lines of the steps reached by `now`, in order.
    pub(super) fn reached(&mut self, now: Reading) -> Vec<String> {
        let load = self.load;
        // Steps of a handful of iterations (a smoke run of one) say nothing; the total does.
        let tenths = match load {
            Load::Count(n) if n < 10 => 0,
            _ => ((fraction(load, now.done, now.elapsed) * 10.0).floor() as u32).min(9),
        };
        let last = self.last;
        self.last = now;
        let mut lines = Vec::new();
        while self.reported_tenths < tenths {
            self.reported_tenths += 1;
            let step = self.reported_tenths;
            let line = match load {
                Load::Count(n) => {
                    let done = n * u64::from(step) / 10;
                    let at = share(done.saturating_sub(last.done), now.done.saturating_sub(last.done));
                    let failed = between(last.failed, now.failed, at).min(done);
                    let elapsed =
                        last.elapsed.as_secs_f64() + now.elapsed.saturating_sub(last.elapsed).as_secs_f64() * at;
                    format!("{}% ({done} of {n} iterations, {failed} failed, {elapsed:.1}s)", step * 10)
                }
                Load::Duration(d) => {
                    let time = d.mul_f64(f64::from(step) / 10.0);
                    let since = time.saturating_sub(last.elapsed).as_secs_f64();
                    let at = (since / (now.elapsed.saturating_sub(last.elapsed)).as_secs_f64().max(1e-9)).min(1.0);
                    let done = between(last.done, now.done, at);
                    let failed = between(last.failed, now.failed, at).min(done);
                    format!(
                        "{}% ({:.1}s of {}, {done} iterations, {failed} failed)",
                        step * 10,
                        time.as_secs_f64(),
                        humantime::format_duration(d)
                    )
                }
            };
            lines.push(line);
        }
        lines
    }
}

/// Fraction of the work done, from 0 to 1.
fn fraction(load: Load, done: u64, elapsed: Duration) -> f64 {
    match load {
        Load::Count(0) => 1.0,
        Load::Count(n) => done as f64 / n as f64,
        Load::Duration(d) if d.is_zero() => 1.0,
        Load::Duration(d) => elapsed.as_secs_f64() / d.as_secs_f64(),
    }
    .min(1.0)
}

/// `part / whole`, from 0 to 1 (1 when `whole` is 0).
fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 { 1.0 } else { (part as f64 / whole as f64).min(1.0) }
}

/// The count a fraction `at` of the way from `from` to `to`, to the nearest whole.
fn between(from: u64, to: u64, at: f64) -> u64 {
    from + (to.saturating_sub(from) as f64 * at).round() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(done: u64, failed: u64, ms: u64) -> Reading {
        Reading { done, failed, elapsed: Duration::from_millis(ms) }
    }

    #[test]
    fn each_line_gives_the_counts_as_of_its_step() {
        // A run that failed throughout and was over within one tick.
        let mut steps = Steps::new(Load::Count(2_000));
        let lines = steps.reached(reading(2_000, 2_000, 100));
        assert_eq!(lines.len(), 9, "{lines:?}");
        assert_eq!(lines[0], "10% (200 of 2000 iterations, 200 failed, 0.0s)");
        assert!(lines[4].starts_with("50% (1000 of 2000 iterations, 1000 failed, "), "{}", lines[4]);
        assert!(steps.reached(reading(2_000, 2_000, 200)).is_empty(), "every step once");

        // Failures that began late are not reported early.
        let mut steps = Steps::new(Load::Count(1_000));
        assert_eq!(steps.reached(reading(150, 0, 100)), ["10% (100 of 1000 iterations, 0 failed, 0.1s)"]);
        let lines = steps.reached(reading(350, 200, 200));
        assert_eq!(
            lines,
            ["20% (200 of 1000 iterations, 50 failed, 0.1s)", "30% (300 of 1000 iterations, 150 failed, 0.2s)"]
        );
    }

    #[test]
    fn duration_steps_interpolate_by_time() {
        let mut steps = Steps::new(Load::Duration(Duration::from_secs(1)));
        assert!(steps.reached(reading(50, 0, 50)).is_empty());
        let lines = steps.reached(reading(250, 200, 250));
        assert_eq!(
            lines,
            ["10% (0.1s of 1s, 100 iterations, 50 failed)", "20% (0.2s of 1s, 200 iterations, 150 failed)"]
        );
    }

    #[test]
    fn small_counts_print_no_steps() {
        assert!(Steps::new(Load::Count(5)).reached(reading(5, 5, 100)).is_empty());
    }
}
