//! One scenario's figures from its shards: what a single machine running the whole load would
//! have reported. Counts add up; latencies come from the shards' histograms added up (see
//! [`super::histograms`]); the time is the wall-clock window from the first shard's start to the
//! last one's end, which rates are computed over; what cannot be added (a generator's self-check,
//! a process watched) is kept per shard or as the worst shard's.

use std::path::Path;

use cargo_loadbench::ScenarioResult;
use loadbench::report::histogram::Keep;
use loadbench::report::{
    Causes, ErrorCounts, GeneratorReport, HookReport, HttpReport, LatencyReport, QuicReport, RateReport, StepReport,
    TlsReport, Warning,
};
use loadbench::threshold::Percentile;

use super::MergeError;
use super::histograms::Sum;
use super::timeline::{self, MAX_START_SPREAD_MS, ShardSeconds};

/// A scenario's and a step's latency keep their spectrum (the HTML report's "nines" chart) and
/// the merged histogram (so the merged document is as exact as its shards).
const KEEP_ALL: Keep = Keep { spectrum: true, histogram: true };

/// One shard's entry of a scenario.
#[derive(Debug, Clone, Copy)]
pub struct Part<'a> {
    /// The shard's index (`--shard I/N`'s I).
    pub index: u32,
    /// The file it was read from.
    pub path: &'a Path,
    /// Its entry.
    pub scenario: &'a ScenarioResult,
}

/// The merged entry, and the notes worth printing about it.
#[derive(Debug)]
pub struct Merged {
    /// The scenario as a whole.
    pub scenario: ScenarioResult,
    /// Figures that could not be merged exactly, in a sentence each.
    pub notes: Vec<String>,
}

/// The scenario of `parts` (one per shard, in shard order, with equal `config`s), with the
/// latency percentiles `asked` for (`--percentiles` and `--threshold`s) beside those its own
/// thresholds and its shards' reports hold.
pub fn merge(parts: &[Part<'_>], asked: &[Percentile]) -> Result<Merged, MergeError> {
    let Some(first) = parts.first() else { return Err(MergeError::NoShards) };
    let name = label(first.scenario);
    let mut notes = Vec::new();
    let mut merged = first.scenario.clone();
    // Whole: the shares, comparisons and outcomes of a part are not the whole's.
    merged.share = None;
    merged.comparison = None;
    merged.side_by_side = None;
    merged.thresholds.clear();
    let sum = |figure: fn(&ScenarioResult) -> u64| parts.iter().map(|p| figure(p.scenario)).sum::<u64>();
    merged.iterations = sum(|s| s.iterations);
    merged.ok = sum(|s| s.ok);
    merged.failed = sum(|s| s.failed);
    merged.dropped = sum(|s| s.dropped);
    merged.cancelled = sum(|s| s.cancelled);
    merged.warmup_iterations = sum(|s| s.warmup_iterations);
    merged.errors = ErrorCounts::default();
    merged.causes = Causes::default();
    merged.http = HttpReport::default();
    for part in parts {
        merged.errors.add(&part.scenario.errors);
        // Ranked again: the ten most frequent over all shards, the rest in `others`.
        merged.causes.merge(&part.scenario.causes);
        merged.http.add(&part.scenario.http);
    }
    merged.tls = parts.iter().filter_map(|p| p.scenario.tls.as_ref()).fold(None, |total: Option<TlsReport>, tls| {
        let mut total = total.unwrap_or_default();
        total.add(tls);
        Some(total)
    });
    merged.checks = crate::rounds::sum_checks(parts.iter().flat_map(|p| &p.scenario.checks));
    merged.user_setup = merge_hooks(parts, |s| s.user_setup.as_ref());
    merged.user_teardown = merge_hooks(parts, |s| s.user_teardown.as_ref());
    merged.feed_ran_out = parts.iter().filter_map(|p| p.scenario.feed_ran_out).reduce(|a, b| {
        // Every shard reads the whole file: its records are the file's, the iterations left
        // unstarted add up.
        loadbench::report::FeedRanOut { records: a.records.max(b.records), not_started: a.not_started + b.not_started }
    });
    merged.not_started = sum(|s| s.not_started);
    // Every shard connects to its own address: the first that found nothing there names it, the
    // refused connections add up.
    merged.nothing_listening = parts
        .iter()
        .filter_map(|p| p.scenario.nothing_listening.clone())
        .reduce(|a, b| loadbench::report::NothingListening { refused: a.refused + b.refused, ..a });
    merged.remote_write = parts.iter().filter_map(|p| p.scenario.remote_write.clone()).reduce(|mut a, b| {
        a.add(&b);
        a
    });
    merged.interrupted = parts.iter().any(|p| p.scenario.interrupted);
    merged.setup_error =
        parts.iter().find_map(|p| p.scenario.setup_error.as_ref().map(|e| format!("shard {}: {e}", p.index)));
    merged.watched = parts
        .iter()
        .flat_map(|p| p.scenario.watched.iter().map(move |w| (p.index, w)))
        .map(|(index, w)| loadbench::report::WatchReport { name: format!("shard {index}: {}", w.name), ..w.clone() })
        .collect();
    merged.warnings = merge_warnings(parts);
    merged.generator = merge_generators(parts);

    // The wall-clock window, and the rates over it.
    let window = Window::of(parts, &name)?;
    if let Some((start_ms, started_at)) = window.start {
        merged.started_unix_ms = Some(start_ms);
        merged.started_at = started_at.to_owned();
    }
    merged.duration_us = window.duration_us;
    merged.rps = merged.per_second(merged.ok);
    merged.attempts_per_sec = merged.per_second(merged.ok + merged.failed);
    let requested: Vec<f64> = parts.iter().filter_map(|p| p.scenario.rate.map(|r| r.requested)).collect();
    merged.rate = (!requested.is_empty())
        .then(|| RateReport { requested: requested.iter().sum(), achieved: merged.per_second(merged.iterations) });
    merged.timeline = match window.start {
        Some((earliest_ms, _)) => {
            let shards: Vec<ShardSeconds<'_>> = parts
                .iter()
                .filter_map(|p| {
                    let start_ms = p.scenario.started_unix_ms?;
                    Some(ShardSeconds { path: p.path, start_ms, seconds: &p.scenario.timeline })
                })
                .collect();
            timeline::merge(&shards, earliest_ms, &name)?
        }
        None => Vec::new(),
    };

    // Latencies, from the histograms added up.
    let extra = extra_percentiles(parts, asked);
    let latencies = parts.iter().map(|p| (p.path, p.scenario.latency_us.as_ref(), p.scenario.ok));
    merged.latency_us = added(latencies, || format!("the latency of `{name}`"))?.latency(&extra, KEEP_ALL);
    merged.steps = merge_rows(parts, |s| &s.steps, &format!("step {{}} of `{name}`"), &extra)?;
    merged.requests = merge_rows(parts, |s| &s.requests, &format!("named request {{}} of `{name}`"), &extra)?;
    let (connect, note) = connection_times(parts, |s| s.connect_us.as_ref(), &format!("`{name}`'s connect times"))?;
    merged.connect_us = connect;
    notes.extend(note);
    let (handshake, note) =
        connection_times(parts, |s| s.tls_handshake_us.as_ref(), &format!("`{name}`'s TLS handshake times"))?;
    merged.tls_handshake_us = handshake;
    notes.extend(note);
    merged.quic = merge_quic(parts, &name, &mut notes)?;
    Ok(Merged { scenario: merged, notes })
}

/// The scenario as refusals and notes name it: `hello`, or `hello [fast]` against a named target.
pub fn label(s: &ScenarioResult) -> String {
    match &s.target_name {
        Some(target) => format!("{} [{target}]", s.name),
        None => s.name.clone(),
    }
}

/// From the first shard's start to the last one's end.
#[derive(Debug)]
struct Window<'a> {
    /// The earliest `started_unix_ms`, with that shard's `started_at`; `None` when no shard ran.
    start: Option<(u64, &'a str)>,
    duration_us: u64,
}

impl<'a> Window<'a> {
    /// The window of `parts`; a shard that ran without saying when it started cannot be placed
    /// in it, nor can shards that started too far apart to be one run.
    fn of(parts: &[Part<'a>], name: &str) -> Result<Window<'a>, MergeError> {
        let mut start: Option<(u64, &'a str)> = None;
        let mut end_us: u64 = 0;
        let mut latest_ms: u64 = 0;
        for part in parts {
            let s = part.scenario;
            let Some(ms) = s.started_unix_ms else {
                if s.iterations > 0 || s.dropped > 0 || !s.timeline.is_empty() {
                    return Err(MergeError::NoStart { path: part.path.to_owned(), scenario: name.to_owned() });
                }
                continue;
            };
            if start.is_none_or(|(earliest, _)| ms < earliest) {
                start = Some((ms, s.started_at.as_str()));
            }
            latest_ms = latest_ms.max(ms);
            end_us = end_us.max(ms.saturating_mul(1_000).saturating_add(s.duration_us));
        }
        match start {
            Some((earliest, _)) if latest_ms - earliest > MAX_START_SPREAD_MS => {
                Err(MergeError::StartsApart { scenario: name.to_owned(), hours: (latest_ms - earliest) / 3_600_000 })
            }
            Some((earliest, at)) => {
                Ok(Window { start: Some((earliest, at)), duration_us: end_us - earliest.saturating_mul(1_000) })
            }
            // None ran: the longest shard's duration (0 when none started) stands.
            None => {
                Ok(Window { start: None, duration_us: parts.iter().map(|p| p.scenario.duration_us).max().unwrap_or(0) })
            }
        }
    }
}

/// The sum of the histograms of `latencies` (each shard's file, latency and successes); `what`
/// names the latency in a refusal. A latency without a histogram is refused unless its shard had
/// no success: there is then nothing to add.
fn added<'a>(
    latencies: impl Iterator<Item = (&'a Path, Option<&'a LatencyReport>, u64)>,
    what: impl Fn() -> String,
) -> Result<Sum, MergeError> {
    let mut sum = Sum::default();
    for (path, latency, ok) in latencies {
        match latency.and_then(|l| l.histogram.as_deref()) {
            Some(text) => sum.add(text).map_err(|reason| MergeError::BadHistogram {
                path: path.to_owned(),
                what: what(),
                reason,
            })?,
            None if ok > 0 => return Err(MergeError::NoHistogram { path: path.to_owned(), what: what() }),
            None => {}
        }
    }
    Ok(sum)
}

/// The percentiles each latency reports beside the fixed ones: those asked on the command line,
/// those the scenario's thresholds test (as the runtime adds them:
/// `loadbench-runtime/src/harness/runner.rs`), and any a shard's report already holds, so that the
/// merge loses none.
fn extra_percentiles(parts: &[Part<'_>], asked: &[Percentile]) -> Vec<Percentile> {
    let mut all: Vec<Percentile> = asked.to_vec();
    for part in parts {
        let s = part.scenario;
        all.extend(s.config.thresholds.iter().filter_map(|t| t.metric.percentile()));
        let rows = s.steps.iter().chain(&s.requests).filter_map(|r| r.latency_us.as_ref());
        let held = s.latency_us.iter().chain(rows).flat_map(|l| l.percentiles.keys());
        all.extend(held.filter_map(|name| name.parse::<Percentile>().ok()));
    }
    all.sort_unstable();
    all.dedup();
    all
}

/// Steps (or named requests: `rows` picks which) by name, in the order the shards first ran
/// them: counts added, latencies from their histograms added. `what` names a row in a refusal,
/// `{}` standing for its name.
fn merge_rows(
    parts: &[Part<'_>],
    rows: fn(&ScenarioResult) -> &Vec<StepReport>,
    what: &str,
    extra: &[Percentile],
) -> Result<Vec<StepReport>, MergeError> {
    let mut names: Vec<&str> = Vec::new();
    for row in parts.iter().flat_map(|p| rows(p.scenario)) {
        if !names.contains(&row.name.as_str()) {
            names.push(&row.name);
        }
    }
    names
        .into_iter()
        .map(|name| {
            let of: Vec<(&Path, &StepReport)> = parts
                .iter()
                .flat_map(|p| rows(p.scenario).iter().filter(|r| r.name == name).map(move |r| (p.path, r)))
                .collect();
            let mut errors = ErrorCounts::default();
            let mut causes = Causes::default();
            for (_, row) in &of {
                errors.add(&row.errors);
                causes.merge(&row.causes);
            }
            let latencies = of.iter().map(|(path, r)| (*path, r.latency_us.as_ref(), r.ok));
            let latency = added(latencies, || format!("the latency of {}", what.replace("{}", &format!("`{name}`"))))?;
            Ok(StepReport {
                name: name.to_owned(),
                iterations: of.iter().map(|(_, r)| r.iterations).sum(),
                ok: of.iter().map(|(_, r)| r.ok).sum(),
                failed: of.iter().map(|(_, r)| r.failed).sum(),
                errors,
                causes,
                latency_us: latency.latency(extra, KEEP_ALL),
            })
        })
        .collect()
}

/// Connect or handshake times (`pick`): from the histograms added up when every shard wrote one;
/// else the slowest shard's (by p99) as it is, with a note saying so, since the figures of shards
/// measured apart cannot be combined into percentiles.
fn connection_times(
    parts: &[Part<'_>],
    pick: fn(&ScenarioResult) -> Option<&LatencyReport>,
    what: &str,
) -> Result<(Option<LatencyReport>, Option<String>), MergeError> {
    let present: Vec<(&Part<'_>, &LatencyReport)> = parts.iter().filter_map(|p| Some((p, pick(p.scenario)?))).collect();
    if present.iter().all(|(_, l)| l.histogram.is_some()) {
        let latencies = present.iter().map(|(p, l)| (p.path, Some(*l), 1));
        let sum = added(latencies, || what.to_owned())?;
        return Ok((sum.latency(&[], Keep { spectrum: false, histogram: true }), None));
    }
    let worst = present.iter().fold(None, |worst: Option<&(&Part<'_>, &LatencyReport)>, candidate| match worst {
        Some(w) if w.1.p99 >= candidate.1.p99 => Some(w),
        _ => Some(candidate),
    });
    let Some((part, latency)) = worst else { return Ok((None, None)) };
    let without: Vec<String> =
        present.iter().filter(|(_, l)| l.histogram.is_none()).map(|(p, _)| p.path.display().to_string()).collect();
    let note = format!(
        "{what} are shard {}'s, the slowest shard's by p99, not merged: {} wrote them without a histogram",
        part.index,
        without.join(", ")
    );
    Ok((Some((*latency).clone()), Some(note)))
}

/// The QUIC part over the shards that have one: 0-RTT counts added, its times and the times to
/// first byte as [`connection_times`] merges the connect times; `None` when no shard has one.
fn merge_quic(parts: &[Part<'_>], name: &str, notes: &mut Vec<String>) -> Result<Option<QuicReport>, MergeError> {
    let quic: Vec<&QuicReport> = parts.iter().filter_map(|p| p.scenario.quic.as_ref()).collect();
    if quic.is_empty() {
        return Ok(None);
    }
    let (zero_rtt_us, note) =
        connection_times(parts, |s| s.quic.as_ref()?.zero_rtt_us.as_ref(), &format!("`{name}`'s 0-RTT times"))?;
    notes.extend(note);
    let (ttfb_us, note) =
        connection_times(parts, |s| s.quic.as_ref()?.ttfb_us.as_ref(), &format!("`{name}`'s times to first byte"))?;
    notes.extend(note);
    Ok(Some(QuicReport {
        zero_rtt_offered: quic.iter().map(|q| q.zero_rtt_offered).sum(),
        zero_rtt_accepted: quic.iter().map(|q| q.zero_rtt_accepted).sum(),
        zero_rtt_us,
        ttfb_us,
    }))
}

/// A per-user hook's runs over the shards (each ran its own users): counts added, the first
/// shard's first error kept.
fn merge_hooks(parts: &[Part<'_>], pick: fn(&ScenarioResult) -> Option<&HookReport>) -> Option<HookReport> {
    parts.iter().filter_map(|p| pick(p.scenario)).fold(None, |total: Option<HookReport>, hook| {
        let mut total = total.unwrap_or_default();
        total.runs += hook.runs;
        total.failed += hook.failed;
        total.first_error = total.first_error.or_else(|| hook.first_error.clone());
        Some(total)
    })
}

/// One warning of each kind, the first shard's wording: every shard that measured nothing says
/// it alike, and one line says it for the whole run.
fn merge_warnings(parts: &[Part<'_>]) -> Vec<Warning> {
    let mut warnings: Vec<Warning> = Vec::new();
    for warning in parts.iter().flat_map(|p| &p.scenario.warnings) {
        if !warnings.iter().any(|w| w.kind == warning.kind) {
            warnings.push(warning.clone());
        }
    }
    warnings
}

/// The worst shard's self-check (saturated first, then the busiest, then the latest to wake),
/// with every shard's worker threads: one saturated generator taints the whole run's figures,
/// and the table must still say so.
fn merge_generators(parts: &[Part<'_>]) -> Option<GeneratorReport> {
    let reports: Vec<&GeneratorReport> = parts.iter().filter_map(|p| p.scenario.generator.as_ref()).collect();
    let rank = |g: &GeneratorReport| (g.saturated, g.cpu_utilization.unwrap_or(0.0), g.lag_p99_us.unwrap_or(0));
    let worst = reports.iter().copied().fold(None, |worst: Option<&GeneratorReport>, g| match worst {
        Some(w) if rank(w).partial_cmp(&rank(g)).is_some_and(|o| o.is_ge()) => Some(w),
        _ => Some(g),
    })?;
    Some(GeneratorReport { worker_threads: reports.iter().map(|g| g.worker_threads).sum(), ..worst.clone() })
}
