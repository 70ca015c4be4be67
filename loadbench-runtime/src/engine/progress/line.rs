//! The terminal's line for one running scenario, as a pure function of what the progress thread
//! read: `[2/5] checkout  43%  12.3s / ETA 7s  1,234 req/s  p50 1.20ms p99 8.00ms  errors: 3 × io
//! users 50/50`.

use std::time::Duration;

use super::window::Recent;
use crate::config::Load;
use crate::report::units::{micros, thousands};

/// Where a scenario stands in the run: the `i` of `[i/n]`, from 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Position {
    pub(crate) index: usize,
    pub(crate) of: usize,
}

/// Active users: in flight (or, in the open model, estimated from the rate and the latency) out
/// of the most the scenario has now (the ramp's current target, else its concurrency).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Users {
    pub(crate) active: u32,
    pub(crate) of: u32,
    /// The open model's `active` is an estimate (Little's law), shown with `~`.
    pub(crate) estimated: bool,
}

/// Everything one line shows.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Snapshot<'a> {
    pub(crate) position: Position,
    pub(crate) name: &'a str,
    pub(crate) load: Load,
    /// Since the measured part's start; `None` during the warmup.
    pub(crate) elapsed: Option<Duration>,
    /// Iterations done so far (successes and failures).
    pub(crate) done: u64,
    pub(crate) recent: Recent,
    /// Failures so far by kind, as the report names them, in the report's order.
    pub(crate) errors: Vec<(&'static str, u64)>,
    pub(crate) users: Users,
}

impl Snapshot<'_> {
    /// The part of the work done, from 0 to 1.
    pub(crate) fn fraction(&self) -> f64 {
        let elapsed = self.elapsed.unwrap_or_default();
        match self.load {
            Load::Count(0) => 1.0,
            Load::Count(n) => self.done as f64 / n as f64,
            Load::Duration(d) if d.is_zero() => 1.0,
            Load::Duration(d) => elapsed.as_secs_f64() / d.as_secs_f64(),
        }
        .clamp(0.0, 1.0)
    }

    /// The line's head: `[2/5] checkout`.
    pub(crate) fn head(&self) -> String {
        format!("[{}/{}] {}", self.position.index, self.position.of, self.name)
    }

    /// The figures after the head.
    pub(crate) fn figures(&self) -> String {
        let Some(elapsed) = self.elapsed else {
            return format!("warming up  {}", self.users_text());
        };
        let rate = self
            .recent
            .ok_per_sec
            .map_or_else(|| "- req/s".to_owned(), |r| format!("{} req/s", thousands(r.round() as u64)));
        let latency = |p: Option<f64>| p.map_or_else(|| "-".to_owned(), micros);
        format!(
            "{:>3.0}%  {} / ETA {}  {rate}  p50 {} p99 {}  {}  {}",
            self.fraction() * 100.0,
            clock(elapsed),
            eta(self.load, self.done, elapsed).map_or_else(|| "-".to_owned(), clock),
            latency(self.recent.p50_us),
            latency(self.recent.p99_us),
            self.errors_text(),
            self.users_text(),
        )
    }

    fn errors_text(&self) -> String {
        let listed: Vec<String> =
            self.errors.iter().filter(|(_, n)| *n > 0).map(|(kind, n)| format!("{} × {kind}", thousands(*n))).collect();
        if listed.is_empty() { "no errors".to_owned() } else { format!("errors: {}", listed.join(", ")) }
    }

    fn users_text(&self) -> String {
        let approx = if self.users.estimated { "~" } else { "" };
        format!("users {approx}{}/{}", self.users.active, self.users.of)
    }
}

impl std::fmt::Display for Snapshot<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}  {}", self.head(), self.figures())
    }
}

/// Time left: exact for a duration; for a count, what is left at the rate so far. `None` before
/// the first iteration of a count.
pub(crate) fn eta(load: Load, done: u64, elapsed: Duration) -> Option<Duration> {
    match load {
        Load::Duration(d) => Some(d.saturating_sub(elapsed)),
        Load::Count(n) if done >= n => Some(Duration::ZERO),
        Load::Count(_) if done == 0 || elapsed.is_zero() => None,
        Load::Count(n) => {
            let per_iteration = elapsed.as_secs_f64() / done as f64;
            Some(Duration::from_secs_f64(((n - done) as f64 * per_iteration).min(1e9)))
        }
    }
}

/// `12.3s` under a minute, `4m 05s` under an hour, `2h 03m` above.
pub(crate) fn clock(t: Duration) -> String {
    let s = t.as_secs();
    if s < 60 {
        format!("{:.1}s", t.as_secs_f64())
    } else if s < 3_600 {
        format!("{}m {:02}s", s / 60, s % 60)
    } else {
        format!("{}h {:02}m", s / 3_600, s % 3_600 / 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checkout() -> Snapshot<'static> {
        Snapshot {
            position: Position { index: 2, of: 5 },
            name: "checkout",
            load: Load::Duration(Duration::from_millis(19_300)),
            elapsed: Some(Duration::from_millis(12_300)),
            done: 15_000,
            recent: Recent { ok_per_sec: Some(1_234.4), p50_us: Some(1_200.0), p99_us: Some(8_000.0), mean_us: None },
            errors: vec![("connect", 0), ("status", 0), ("io", 3)],
            users: Users { active: 50, of: 50, estimated: false },
        }
    }

    #[test]
    fn the_line_says_which_how_far_how_fast_how_slow_and_how_many_errors() {
        assert_eq!(
            checkout().to_string(),
            "[2/5] checkout   64%  12.3s / ETA 7.0s  1,234 req/s  p50 1.20ms p99 8.00ms  errors: 3 × io  users 50/50"
        );
        let mut open = checkout();
        open.errors = vec![("status", 12), ("io", 3)];
        open.users = Users { active: 37, of: 100, estimated: true };
        assert!(open.to_string().ends_with("errors: 12 × status, 3 × io  users ~37/100"), "{open}");
        open.errors = vec![("io", 0)];
        assert!(open.to_string().contains("  no errors  "), "{open}");
    }

    #[test]
    fn before_any_figure_the_line_says_so() {
        let mut start = checkout();
        start.recent = Recent::default();
        start.load = Load::Count(10_000);
        start.done = 0;
        assert_eq!(start.figures(), "  0%  12.3s / ETA -  - req/s  p50 - p99 -  errors: 3 × io  users 50/50");
        start.elapsed = None;
        assert_eq!(start.figures(), "warming up  users 50/50");
    }

    #[test]
    fn the_eta_of_a_count_comes_from_the_rate_so_far_and_of_a_duration_is_exact() {
        let s = Duration::from_secs;
        assert_eq!(eta(Load::Count(1_000), 250, s(10)), Some(s(30)));
        assert_eq!(eta(Load::Count(1_000), 0, s(10)), None);
        assert_eq!(eta(Load::Count(1_000), 1_000, s(10)), Some(Duration::ZERO));
        assert_eq!(eta(Load::Duration(s(60)), 5, s(45)), Some(s(15)));
        assert_eq!(eta(Load::Duration(s(60)), 5, s(70)), Some(Duration::ZERO));
        assert_eq!(clock(Duration::from_millis(7_049)), "7.0s");
        assert_eq!(clock(s(245)), "4m 05s");
        assert_eq!(clock(s(7_380)), "2h 03m");
    }
}
