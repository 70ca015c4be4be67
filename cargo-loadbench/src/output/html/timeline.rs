//! What an entry's timeline covers: which run of `--runs N` it is, how long that run lasted, and
//! which of its seconds the load ran in.
//!
//! A run ends with its drain: once a timed load's deadline passes no iteration starts, and the
//! iterations in flight then finish over a few milliseconds (or, against a slow server, longer).
//! The timeline counts iterations by the second they ended in, so a second after the deadline
//! holds only that tail. Drawn as a rate over a second, it reads as throughput collapsing at the
//! end; drawn as a rate over its few milliseconds, as a spike or a drop depending on the slowest
//! in-flight iteration. Neither is the server's throughput, so the throughput line (and the
//! achieved arrival rate) stops where the load did, and a note says what was left out; the
//! latencies of those iterations are real and still drawn. This is what k6 users expect of a
//! throughput panel in Grafana: requests per second while the load ran, with no cliff made by the
//! last, partial bucket. A last second the load still ran in, but only part of (a count reached,
//! or a deadline part-way into it), is a rate over the part of it the run covered: 300 iterations
//! in its first half are 600 a second.

use cargo_loadbench::ScenarioResult;
use loadbench::report::units;

use super::axis::millis;
use super::grid::timeline_end;

/// What a timeline covers, for the rates drawn from it.
#[derive(Debug, Clone, PartialEq)]
pub struct Covered {
    /// `(k, n)`: the timeline is run `k` (from 1) of `n`, when the scenario ran more than once.
    pub run: Option<(usize, usize)>,
    /// How long the run it is of lasted, in seconds; infinite when unknown (each second whole).
    pub span: f64,
    /// The seconds before this one are those the load ran in, and the rates drawn.
    pub load_end: u64,
    /// The tail after a timed load's deadline, when seconds of the timeline hold only it.
    pub drained: Option<Drained>,
}

/// The seconds of a timeline after its load's deadline.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Drained {
    /// The deadline, in milliseconds since the start.
    pub deadline_ms: u64,
    /// The iterations that ended after it (in the seconds left out).
    pub iterations: u64,
    /// How long after the deadline the last one ended, in seconds; `None` when unknown.
    pub lasted: Option<f64>,
}

/// What the timeline of `s` covers.
///
/// Under `--runs N` the entry's timeline is its first run's (seconds of different runs do not line
/// up, so they are not merged); its duration is the runs' total, so the run's own is taken from
/// `runs`, the one that started when the entry did.
pub fn of(s: &ScenarioResult) -> Covered {
    let end = timeline_end(&s.timeline);
    let (run, duration_us) = if s.runs.len() > 1 {
        match s.runs.iter().position(|r| r.started_at == s.started_at) {
            Some(k) => (Some((k + 1, s.runs.len())), Some(s.runs[k].duration_us)),
            None => (None, None),
        }
    } else {
        (None, Some(s.duration_us))
    };
    let span = duration_us.map_or(f64::INFINITY, |us| us as f64 / 1e6);
    let deadline_ms = s.config.duration_ms.filter(|&ms| ms > 0);
    // The seconds that start before the deadline: a deadline part-way into a second keeps it.
    let load_end = deadline_ms.map_or(end, |ms| end.min(ms.div_ceil(1_000)));
    let drained = deadline_ms.filter(|_| load_end < end).map(|deadline_ms| Drained {
        deadline_ms,
        iterations: s.timeline.iter().filter(|t| t.second >= load_end).map(|t| t.requests).sum(),
        lasted: Some(span - deadline_ms as f64 / 1e3).filter(|t| t.is_finite() && *t >= 0.0),
    });
    Covered { run, span, load_end, drained }
}

/// `run 2 of 5`.
pub fn run_name((k, n): (usize, usize)) -> String {
    format!("run {k} of {n}")
}

/// The note under the throughput chart of an entry whose drain was left out (unescaped).
pub fn drained_note(target: Option<&str>, drained: &Drained) -> String {
    let load = target.map_or_else(|| "The load".to_owned(), |t| format!("{t}: the load"));
    let tail = match drained.lasted {
        Some(lasted) => format!(" over the next {}", units::micros(lasted * 1e6)),
        None => String::new(),
    };
    let (which, their) = match drained.iterations {
        1 => ("the iteration".to_owned(), "Its latency is"),
        n => (format!("the {} iterations", units::thousands(n)), "Their latencies are"),
    };
    format!(
        "{load} ended at {}; {which} still in flight then finished{tail}. The throughput line stops at the \
         load's end: no iteration started after it, so its rate would read as a drop. {their} drawn.",
        millis(drained.deadline_ms)
    )
}
