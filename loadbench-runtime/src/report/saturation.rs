//! What limited a run whose generator was saturated, said plainly with its figures: the
//! generator's own CPU, the machine (another process had the CPU), or the generator's event loop
//! held up while it neither ran nor waited for a CPU (a blocking call in a body).
//!
//! The line is written from the JSON's figures alone, so the bench binary's table, `cargo
//! loadbench`'s and a merged `--runs` summary say the same.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::GeneratorReport;
use super::units::micros;

/// 99th-percentile wake-up lag from which the generator counts as saturated: well above timer
/// granularity (about 1 ms) and the noise of a busy shared machine, well below the latencies a
/// stalled generator adds. Here, with the line that names it, rather than in the self-check
/// that applies it, so that the line can tell from a file's figures whether the timers were late.
pub(crate) const SATURATED_LAG: Duration = Duration::from_millis(20);

/// What limited a run whose generator was saturated ([`GeneratorReport::limit`]).
///
/// ```
/// use loadbench::report::GeneratorLimit;
/// let json = serde_json::to_string(&GeneratorLimit::MachineBusy).unwrap();
/// assert_eq!(json, r#""machine_busy""#);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum GeneratorLimit {
    /// The generator was busy: its worker threads used (nearly) all the CPU they had, so it could
    /// not send more; its figures may be its own limit, not the server's.
    GeneratorCpu,
    /// The machine was busy: the worker threads' timers fired late while they used little CPU
    /// and waited for one (or the platform does not say whether they waited): another process,
    /// or a server on the same cores, had the CPU. Latencies may include that wait.
    MachineBusy,
    /// The generator's event loop was held up while its threads used little CPU and did not
    /// wait for one: a scenario body blocked its thread (`std::thread::sleep`, blocking I/O, a
    /// lock), or a long stretch of its own work delayed the other users.
    GeneratorStalled,
}

/// The table's line for a saturated generator, `None` when it was not:
///
/// - `warning: generator busy: its worker threads were at 96% CPU (2 threads); these figures may
///   be its own limit, not the server's`
/// - `warning: machine busy: timers fired 31.0ms late (p99) while the generator used 2% CPU (2
///   worker threads) and waited for a CPU 40% of the time; another process (or the server, on the
///   same cores) took the CPU; latencies may include that wait`
/// - `warning: generator stalled: timers fired 31.0ms late (p99) while its worker threads used 2%
///   CPU and hardly waited for one; a scenario body blocks its thread (std::thread::sleep,
///   blocking I/O, a lock) or runs long without yielding; latencies include that wait`
///
/// When the reads flagged the run ([`GeneratorReport::late_reads`]), their lateness is named
/// too, or alone when the timers were on time: `what the server sent waited 6.10ms (p99) before
/// it was read while …`.
pub(crate) fn line(g: &GeneratorReport) -> Option<String> {
    if !g.saturated {
        return None;
    }
    let cpu = g.cpu_utilization.map_or_else(|| "an unknown share of".to_owned(), |u| format!("{:.0}%", u * 100.0));
    let threads = |noun: &str| {
        if g.worker_threads == 1 { format!("1 {noun}thread") } else { format!("{} {noun}threads", g.worker_threads) }
    };
    // What was late: the timers unless only the reads flagged the run, and the reads when they did.
    let timers_late = g.lag_p99_us.is_none_or(|us| us >= SATURATED_LAG.as_micros() as u64);
    let reads = g.read_delay_p99_us.filter(|_| g.late_reads);
    let mut late = Vec::new();
    if timers_late || reads.is_none() {
        late.push(format!(
            "timers fired {}",
            g.lag_p99_us.map_or_else(|| "late".to_owned(), |us| format!("{} late (p99)", micros(us as f64)))
        ));
    }
    if let Some(us) = reads {
        late.push(format!("what the server sent waited {} (p99) before it was read", micros(us as f64)));
    }
    let late = late.join(" and ");
    let waited = g.waited_for_cpu.map(|w| format!(" and waited for a CPU {:.0}% of the time", w * 100.0));
    Some(match g.limit {
        Some(GeneratorLimit::GeneratorCpu) => format!(
            "warning: generator busy: its worker threads were at {cpu} CPU ({}); these figures may be its own limit, \
             not the server's",
            threads("")
        ),
        Some(GeneratorLimit::MachineBusy) => format!(
            "warning: machine busy: {late} while the generator used {cpu} CPU ({}){}; another process \
             (or the server, on the same cores) took the CPU; latencies may include that wait",
            threads("worker "),
            waited.unwrap_or_default()
        ),
        Some(GeneratorLimit::GeneratorStalled) => format!(
            "warning: generator stalled: {late} while its worker threads used {cpu} CPU and hardly \
             waited for one{}; a scenario body blocks its thread (std::thread::sleep, blocking I/O, a lock) or runs \
             long without yielding; latencies include that wait",
            g.waited_for_cpu.map(|w| format!(" ({:.0}% of the time)", w * 100.0)).unwrap_or_default()
        ),
        // A file written before the cause was recorded: its figures, without a verdict.
        None => {
            let mut why = Vec::new();
            if g.cpu_utilization.is_some() {
                why.push(format!("CPU {cpu} of {}", threads("worker ")));
            }
            if let Some(lag) = g.lag_p99_us {
                why.push(format!("timer lag p99 {}", micros(lag as f64)));
            }
            format!(
                "warning: the generator was saturated ({}); these figures may show loadbench's limit, not the server's",
                why.join(", ")
            )
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(limit: Option<GeneratorLimit>, cpu: f64, lag_us: u64, waited: Option<f64>) -> GeneratorReport {
        GeneratorReport {
            worker_threads: 2,
            cpu_seconds: Some(cpu * 2.0),
            cpu_utilization: Some(cpu),
            lag_p99_us: Some(lag_us),
            lag_max_us: Some(lag_us * 2),
            saturated: true,
            waited_for_cpu: waited,
            limit,
            read_delay_p99_us: None,
            read_delay_max_us: None,
            late_reads: false,
        }
    }

    #[test]
    fn a_busy_generator_is_said_to_be_busy() {
        let line = line(&report(Some(GeneratorLimit::GeneratorCpu), 0.96, 25_000, Some(0.01)));
        assert_eq!(
            line.as_deref(),
            Some(
                "warning: generator busy: its worker threads were at 96% CPU (2 threads); these figures may be its \
                 own limit, not the server's"
            )
        );
    }

    #[test]
    fn a_busy_machine_is_said_to_be_busy_with_the_figures() {
        let line = line(&report(Some(GeneratorLimit::MachineBusy), 0.02, 31_000, Some(0.4))).unwrap_or_default();
        assert_eq!(
            line,
            "warning: machine busy: timers fired 31.0ms late (p99) while the generator used 2% CPU (2 worker \
             threads) and waited for a CPU 40% of the time; another process (or the server, on the same cores) \
             took the CPU; latencies may include that wait"
        );
        assert!(!line.contains("generator busy"), "never both: {line}");
        // Where the platform does not say how long the threads waited, the wait is left out.
        let unknown = super::line(&report(Some(GeneratorLimit::MachineBusy), 0.02, 31_000, None)).unwrap_or_default();
        assert!(unknown.contains("used 2% CPU (2 worker threads); another process"), "{unknown}");
    }

    #[test]
    fn a_stalled_generator_points_at_the_body() {
        let line = line(&report(Some(GeneratorLimit::GeneratorStalled), 0.03, 52_000, Some(0.001))).unwrap_or_default();
        assert!(line.starts_with("warning: generator stalled: timers fired 52.0ms late (p99)"), "{line}");
        assert!(line.contains("used 3% CPU and hardly waited for one (0% of the time)"), "{line}");
        assert!(line.contains("std::thread::sleep"), "{line}");
        assert!(!line.contains("another process"), "{line}");
    }

    #[test]
    fn late_reads_are_named_as_what_was_late() {
        let late = |limit| GeneratorReport {
            read_delay_p99_us: Some(6_100),
            read_delay_max_us: Some(9_000),
            late_reads: true,
            ..report(Some(limit), 0.03, 1_200, Some(0.001))
        };
        let stalled = line(&late(GeneratorLimit::GeneratorStalled)).unwrap_or_default();
        assert!(
            stalled.starts_with(
                "warning: generator stalled: what the server sent waited 6.10ms (p99) before it was read while its \
                 worker threads used 3% CPU"
            ),
            "{stalled}"
        );
        assert!(!stalled.contains("timers fired"), "{stalled}");
        let busy = line(&late(GeneratorLimit::MachineBusy)).unwrap_or_default();
        assert!(busy.starts_with("warning: machine busy: what the server sent waited 6.10ms (p99) before it was read while the generator used 3% CPU"), "{busy}");
        // Measured but not what flagged the run: the timers are named, as before.
        let timers = GeneratorReport { late_reads: false, ..late(GeneratorLimit::GeneratorStalled) };
        assert!(line(&timers).unwrap_or_default().contains("timers fired 1.20ms late (p99) while"));
        // Both late: both named.
        let both = GeneratorReport { lag_p99_us: Some(31_000), ..late(GeneratorLimit::MachineBusy) };
        assert!(
            line(&both).unwrap_or_default().starts_with(
                "warning: machine busy: timers fired 31.0ms late (p99) and what the server sent waited 6.10ms (p99) \
                 before it was read while the generator used 3% CPU"
            ),
            "{:?}",
            line(&both)
        );
    }

    #[test]
    fn a_report_without_a_cause_keeps_the_old_line_and_an_unsaturated_one_has_none() {
        let old = line(&report(None, 0.45, 58_100, None)).unwrap_or_default();
        assert_eq!(
            old,
            "warning: the generator was saturated (CPU 45% of 2 worker threads, timer lag p99 58.1ms); these figures \
             may show loadbench's limit, not the server's"
        );
        let fine = GeneratorReport { saturated: false, ..report(None, 0.1, 100, None) };
        assert_eq!(line(&fine), None);
    }
}
