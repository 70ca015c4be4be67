//! The lines under the results table: failures by kind, cancelled iterations, a group's totals,
//! the open model's rate, thresholds, the generator's saturation and the processes watched. Kept
//! apart from the table's rows (`table.rs`), which they follow in the output.

use std::fmt::Write as _;
use std::time::Duration;

use super::units::{bytes, rate, thousands};
use super::{ScenarioReport, ThresholdOutcome, WatchReport};

/// `3 iterations cancelled: still in flight when the 5s grace period ended (not failures, not in
/// the latency)`, or `None` when none was.
pub(super) fn cancelled_line(s: &ScenarioReport) -> Option<String> {
    (s.cancelled > 0).then(|| {
        let grace = humantime::format_duration(Duration::from_millis(s.config.grace_ms));
        let noun = if s.cancelled == 1 { "iteration" } else { "iterations" };
        format!(
            "{} {noun} cancelled: still in flight when the {grace} grace period ended, or at a second signal \
             (not failures, not in the latency)",
            thousands(s.cancelled)
        )
    })
}

/// One line per group of scenarios that ran together: their totals, as one workload.
/// `group shop (insert_records + query_records, together): 12,345 iterations, 3 failed, 24,690
/// responses, 2,468 req/s`, as the table's columns count them.
pub(super) fn group_lines(rows: &[(&ScenarioReport, &str)]) -> Vec<String> {
    let mut groups: Vec<&str> = Vec::new();
    for (s, _) in rows {
        if let Some(group) = s.config.group.as_deref().filter(|g| !groups.contains(g)) {
            groups.push(group);
        }
    }
    groups
        .into_iter()
        .filter_map(|group| {
            let members: Vec<&(&ScenarioReport, &str)> = rows
                .iter()
                .filter(|(s, _)| s.config.group.as_deref() == Some(group) && s.setup_error.is_none())
                .collect();
            // A group of one is just a scenario (say, when a filter selected one member).
            if members.len() < 2 {
                return None;
            }
            let names: Vec<&str> = members.iter().map(|(_, label)| *label).collect();
            let iterations: u64 = members.iter().map(|(s, _)| s.iterations).sum();
            let failed: u64 = members.iter().map(|(s, _)| s.failed).sum();
            let responses: u64 = members.iter().map(|(s, _)| s.http.responses).sum();
            // They ran at the same time, so their rates add up.
            let per_second: f64 = members.iter().map(|(s, _)| s.responses_per_sec()).sum();
            Some(format!(
                "group {group} ({}, together): {} iterations, {} failed, {} responses, {} req/s",
                names.join(" + "),
                thousands(iterations),
                thousands(failed),
                thousands(responses),
                rate(per_second)
            ))
        })
        .collect()
}

/// `open model: 2,000/s requested, 1,985/s achieved, 30 dropped (0.3%)` for a scenario with
/// `rate`, so that a server (or generator) that could not keep up is visible without the JSON.
pub(super) fn open_model_line(s: &ScenarioReport) -> Option<String> {
    let r = s.rate.as_ref()?;
    let mut line = format!("open model: {}/s requested, {}/s achieved", rate(r.requested), rate(r.achieved));
    if s.dropped > 0 {
        let arrivals = s.iterations + s.dropped;
        let share = s.dropped as f64 / arrivals as f64 * 100.0;
        let _ = write!(line, ", {} dropped ({share:.1}%): no virtual user was free", thousands(s.dropped));
    }
    Some(line)
}

/// `app (pid 4242): CPU avg 85%, peak 99%; RSS 64.1 MB at start, 70.2 MB peak, 66.0 MB at end`.
pub(super) fn watch_line(w: &WatchReport) -> String {
    let mut parts = Vec::new();
    if let (Some(avg), Some(peak)) = (w.cpu_avg_percent, w.cpu_peak_percent) {
        parts.push(format!("CPU avg {avg:.0}%, peak {peak:.0}%"));
    }
    if let (Some(start), Some(peak), Some(end)) = (w.rss_start_bytes, w.rss_peak_bytes, w.rss_end_bytes) {
        parts.push(format!("RSS {} at start, {} peak, {} at end", bytes(start), bytes(peak), bytes(end)));
    }
    if let Some(note) = &w.note {
        parts.push(note.clone());
    }
    format!("{} (pid {}): {}", w.name, w.pid, parts.join("; "))
}

/// `warning: generator busy: …`, `machine busy: …` or `generator stalled: …` when loadbench
/// itself may have been the limit (`saturation`), unless that made the scenario inconclusive:
/// the `inconclusive:` line says it then.
pub(super) fn saturation_line(s: &ScenarioReport) -> Option<String> {
    super::inconclusive::saturation_warning(s)
}

/// `thresholds failed: p99 < 50ms (was 61.2ms)` when any threshold on the server failed,
/// `thresholds met: …` when all held, `None` when none was checked. A failed condition on the
/// generator is not among the failed: its `inconclusive:` line says it.
pub(super) fn threshold_line(s: &ScenarioReport) -> Option<String> {
    if s.thresholds.is_empty() {
        return None;
    }
    let failed: Vec<String> = s
        .thresholds
        .iter()
        .filter(|o| !o.passed && !o.threshold.metric.is_generator())
        .map(ToString::to_string)
        .collect();
    if failed.is_empty() {
        let met: Vec<String> = s.thresholds.iter().map(ThresholdOutcome::condition).collect();
        return Some(format!("thresholds met: {}", met.join(", ")));
    }
    let noun = if failed.len() == 1 { "threshold" } else { "thresholds" };
    Some(format!("{noun} failed: {}", failed.join(", ")))
}

/// `12 of 500 iterations failed: 10 × connect, 2 × status; 512 iterations/s attempted, 500/s
/// succeeded; HTTP status 200 ×488, 500 ×2`, or `None` when every iteration succeeded with a 2xx
/// response. Failures by kind are written `count × kind`, as their causes are
/// ([`cause_lines`](super::cause_lines)), so a count is never read as an HTTP status.
pub(super) fn failure_line(s: &ScenarioReport) -> Option<String> {
    let non_2xx = s.http.status.keys().any(|code| !(200..300).contains(code));
    if s.failed == 0 && !non_2xx {
        return None;
    }
    let mut line = String::new();
    if s.failed > 0 {
        let e = &s.errors;
        let kinds = [
            ("connect", e.connect),
            ("timeout", e.timeout),
            ("status", e.status),
            ("io", e.io),
            ("scenario", e.scenario),
            ("body_too_large", e.body_too_large),
            ("tls", e.tls),
            ("panic", e.panic),
            ("stream_reset", e.stream_reset),
            ("protocol", e.protocol),
            ("quic_handshake_timeout", e.quic_handshake_timeout),
            ("quic_idle_timeout", e.quic_idle_timeout),
            ("quic_application_close", e.quic_application_close),
            ("custom", e.custom),
        ]
        .into_iter()
        .filter(|&(_, n)| n > 0)
        .map(|(kind, n)| format!("{} × {kind}", thousands(n)))
        .collect::<Vec<_>>()
        .join(", ");
        let _ = write!(line, "{} of {} iterations failed: {kinds}", thousands(s.failed), thousands(s.iterations));
        // The table's req/s counts responses, whatever their status: the iterations' own rates,
        // offered and delivered (the JSON's `attempts_per_sec` and `rps`), are worth seeing here.
        let _ = write!(line, "; {} iterations/s attempted, {}/s succeeded", rate(s.attempts_per_sec), rate(s.rps));
    }
    if non_2xx {
        if !line.is_empty() {
            line.push_str("; ");
        }
        let codes = s.http.status.iter().map(|(code, n)| format!("{code} ×{}", thousands(*n))).collect::<Vec<_>>();
        let _ = write!(line, "HTTP status {}", codes.join(", "));
    }
    Some(line)
}
