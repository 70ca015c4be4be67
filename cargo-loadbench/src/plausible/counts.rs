//! The rules of one document: counts that agree with each other and add up within 64 bits,
//! histograms that decode within bounds and hold the successes they describe, a sane shard.

use cargo_loadbench::{Results, ScenarioResult};
use loadbench::cli::{MAX_SHARDS, parse_run_id};
use loadbench::report::{Causes, ErrorCounts, LatencyReport, StepReport, histogram};

use super::{Implausible, bad_latency, bad_rate, bad_run, wrong};

/// The first thing in `report` that no run could have written: a shard index or count out of
/// range, counts that disagree (`ok` past `iterations`, error kinds that do not add up to
/// `failed`), a histogram that does not decode or holds another number of samples than the
/// successes it describes, a rate or latency that is not a duration.
pub fn check_results(report: &Results) -> Result<(), Implausible> {
    if let Some(shard) = report.shard {
        if shard.count == 0 || shard.count > MAX_SHARDS {
            return Err(wrong(
                "shard.count",
                format!("{} is not a number of shards: a run has 1 to {MAX_SHARDS}", shard.count),
            ));
        }
        if shard.index >= shard.count {
            return Err(wrong(
                "shard.index",
                format!("{} is past the {} shards, numbered from 0 to {}", shard.index, shard.count, shard.count - 1),
            ));
        }
    }
    if let Some(id) = &report.run_id {
        parse_run_id(id).map_err(|e| wrong("run_id", e))?;
    }
    for (i, s) in report.scenarios.iter().enumerate() {
        check_scenario(&format!("scenarios[{i}]"), s)?;
    }
    Ok(())
}

/// One scenario's counts, rates, latencies, rows, timeline and runs; `at` is its path.
fn check_scenario(at: &str, s: &ScenarioResult) -> Result<(), Implausible> {
    let name = &s.name;
    if s.ok > s.iterations {
        return Err(wrong(format!("{at}.ok"), format!("{} is more than `{name}`'s {} iterations", s.ok, s.iterations)));
    }
    let finished = s.ok.checked_add(s.failed).and_then(|n| n.checked_add(s.cancelled));
    if finished != Some(s.iterations) {
        let sum = finished.map_or_else(|| "past 2^64".to_owned(), |n| n.to_string());
        return Err(wrong(
            format!("{at}.iterations"),
            format!(
                "{} is not ok + failed + cancelled ({} + {} + {} = {sum})",
                s.iterations, s.ok, s.failed, s.cancelled
            ),
        ));
    }
    check_failures(at, s.failed, &s.errors, &s.causes)?;
    let statuses = s.http.status.values().try_fold(0_u64, |sum, &n| sum.checked_add(n));
    if statuses != Some(s.http.responses) {
        let sum = statuses.map_or_else(|| "past 2^64".to_owned(), |n| n.to_string());
        return Err(wrong(
            format!("{at}.http.status"),
            format!("the responses by status add up to {sum}, not the {} of http.responses", s.http.responses),
        ));
    }
    for (figure, value) in [("rps", s.rps), ("attempts_per_sec", s.attempts_per_sec)] {
        if let Some(what) = bad_rate(figure, value) {
            return Err(wrong(format!("{at}.{figure}"), what));
        }
    }
    check_latency(&format!("{at}.latency_us"), s.latency_us.as_ref(), Some((s.ok, format!("`{name}` has"))))?;
    for (rows, kind) in [(&s.steps, "steps"), (&s.requests, "requests")] {
        for (j, row) in rows.iter().enumerate() {
            check_row(&format!("{at}.{kind}[{j}]"), row)?;
        }
    }
    for (k, second) in s.timeline.iter().enumerate() {
        let field = format!("{at}.timeline[{k}]");
        let Some(successes) = second.requests.checked_sub(second.errors) else {
            return Err(wrong(
                format!("{field}.errors"),
                format!("{} is more than the second's {} requests", second.errors, second.requests),
            ));
        };
        if let Some(text) = &second.histogram {
            check_histogram(&format!("{field}.histogram"), text, Some((successes, "the second has".to_owned())))?;
        }
    }
    for (field, times) in [("connect_us", &s.connect_us), ("tls_handshake_us", &s.tls_handshake_us)] {
        check_latency(&format!("{at}.{field}"), times.as_ref(), None)?;
    }
    if let Some(quic) = &s.quic {
        if quic.zero_rtt_accepted > quic.zero_rtt_offered {
            return Err(wrong(
                format!("{at}.quic.zero_rtt_accepted"),
                format!(
                    "{} is more than the {} connections that offered 0-RTT",
                    quic.zero_rtt_accepted, quic.zero_rtt_offered
                ),
            ));
        }
        for (field, times) in [("zero_rtt_us", &quic.zero_rtt_us), ("ttfb_us", &quic.ttfb_us)] {
            check_latency(&format!("{at}.quic.{field}"), times.as_ref(), None)?;
        }
    }
    for (j, run) in s.runs.iter().enumerate() {
        if let Some(what) = bad_run(run) {
            return Err(wrong(format!("{at}.runs[{j}]"), what));
        }
    }
    Ok(())
}

/// A step's or named request's counts and latency; `at` is its path.
fn check_row(at: &str, row: &StepReport) -> Result<(), Implausible> {
    let finished = row.ok.checked_add(row.failed);
    if finished != Some(row.iterations) {
        let sum = finished.map_or_else(|| "past 2^64".to_owned(), |n| n.to_string());
        return Err(wrong(
            format!("{at}.iterations"),
            format!("{} is not ok + failed ({} + {} = {sum}) of `{}`", row.iterations, row.ok, row.failed, row.name),
        ));
    }
    check_failures(at, row.failed, &row.errors, &row.causes)?;
    check_latency(&format!("{at}.latency_us"), row.latency_us.as_ref(), Some((row.ok, format!("`{}` has", row.name))))
}

/// `failed` against its kinds (`errors`, equal) and its causes (`causes`, at most: files from
/// before causes were kept have none); `at` is the path of what holds them.
fn check_failures(at: &str, failed: u64, errors: &ErrorCounts, causes: &Causes) -> Result<(), Implausible> {
    match kinds_total(errors) {
        Some(total) if total == failed => {}
        total => {
            let sum = total.map_or_else(|| "past 2^64".to_owned(), |n| n.to_string());
            return Err(wrong(format!("{at}.errors"), format!("the kinds add up to {sum}, not the {failed} failed")));
        }
    }
    let described = causes.top.iter().try_fold(causes.others, |sum, c| sum.checked_add(c.count));
    if described.is_none_or(|n| n > failed) {
        let sum = described.map_or_else(|| "past 2^64".to_owned(), |n| n.to_string());
        return Err(wrong(
            format!("{at}.causes"),
            format!("they describe {sum} failures, more than the {failed} failed"),
        ));
    }
    Ok(())
}

/// The sum of every kind of `errors`, checked; `None` when it does not fit. Read from the kinds
/// as they are written, so that a kind added to [`ErrorCounts`] is counted without a change here.
fn kinds_total(errors: &ErrorCounts) -> Option<u64> {
    let value = serde_json::to_value(errors).ok()?;
    value.as_object()?.values().try_fold(0_u64, |sum, n| sum.checked_add(n.as_u64().unwrap_or(0)))
}

/// A latency's figures (durations, in order) and its histogram, when it has one: it decodes and,
/// with `successes` (`(n, "`hello` has")`), holds exactly `n` samples.
fn check_latency(
    at: &str,
    latency: Option<&LatencyReport>,
    successes: Option<(u64, String)>,
) -> Result<(), Implausible> {
    let Some(latency) = latency else { return Ok(()) };
    if let Some(what) = bad_latency(latency) {
        return Err(wrong(at, what));
    }
    match &latency.histogram {
        Some(text) => check_histogram(&format!("{at}.histogram"), text, successes),
        None => Ok(()),
    }
}

/// A histogram decodes (within the bounds of [`histogram::decode`]) and, with `successes`, holds
/// exactly that many samples: one holding more or fewer would rewrite a merge's percentiles.
fn check_histogram(at: &str, text: &str, successes: Option<(u64, String)>) -> Result<(), Implausible> {
    let h =
        histogram::decode(text).map_err(|reason| wrong(at, format!("not a histogram loadbench reads: {reason}")))?;
    match successes {
        Some((n, whose)) if h.len() != n => {
            Err(wrong(at, format!("it holds {} samples, but {whose} {n} successes: one sample per success", h.len())))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use loadbench::report::{ConfigReport, ScenarioReport, TimelineSecond};

    use super::*;

    /// A histogram of `n` samples of 1 ms, encoded.
    fn samples(n: u64) -> String {
        let mut h =
            hdrhistogram::Histogram::<u64>::new_with_bounds(1, 10_000_000_000, 3).unwrap_or_else(|e| panic!("{e}"));
        h.record_n(1_000_000, n).unwrap_or_else(|e| panic!("{e}"));
        histogram::encode(&h).unwrap_or_else(|e| panic!("{e}"))
    }

    /// One scenario of 10 iterations, 9 ok, one step and one second alike, each histogram whole.
    fn document() -> Results {
        let mut s = ScenarioResult::new(ScenarioReport::not_started("hello", ConfigReport::default()));
        (s.iterations, s.ok, s.failed, s.errors.timeout) = (10, 9, 1, 1);
        (s.http.responses, s.http.status) = (9, [(200, 9)].into_iter().collect());
        let latency = histogram::latency_report(
            &histogram::decode(&samples(9)).unwrap_or_else(|e| panic!("{e}")),
            &[],
            histogram::Keep { spectrum: false, histogram: true },
        );
        s.latency_us = latency.clone();
        s.steps = vec![StepReport {
            name: "login".into(),
            iterations: 10,
            ok: 9,
            failed: 1,
            errors: ErrorCounts { timeout: 1, ..ErrorCounts::default() },
            causes: Causes::default(),
            latency_us: latency,
        }];
        s.timeline = vec![TimelineSecond {
            second: 0,
            requests: 10,
            errors: 1,
            dropped: 0,
            p50_us: Some(1_000.0),
            p90_us: Some(1_000.0),
            p99_us: Some(1_000.0),
            histogram: Some(samples(9)),
        }];
        let mut results = Results::new(std::time::SystemTime::UNIX_EPOCH);
        results.scenarios = vec![s];
        results
    }

    fn judged(change: impl FnOnce(&mut ScenarioResult)) -> Result<(), String> {
        let mut results = document();
        change(&mut results.scenarios[0]);
        check_results(&results).map_err(|e| e.to_string())
    }

    #[test]
    fn quic_s_counts_and_times_are_held_to_what_a_run_writes() {
        let quic = |offered, accepted, zero_rtt: Option<LatencyReport>| {
            judged(move |s| {
                s.quic = Some(loadbench::report::QuicReport {
                    zero_rtt_offered: offered,
                    zero_rtt_accepted: accepted,
                    zero_rtt_us: zero_rtt,
                    ttfb_us: s.latency_us.clone(),
                })
            })
        };
        let whole = document().scenarios[0].latency_us.clone();
        assert_eq!(quic(4, 3, whole.clone()), Ok(()));
        assert_eq!(
            quic(3, 4, whole.clone()),
            Err("scenarios[0].quic.zero_rtt_accepted: 4 is more than the 3 connections that offered 0-RTT".into())
        );
        let damaged = whole.map(|l| LatencyReport { histogram: Some("not a histogram".into()), ..l });
        let refused = quic(4, 3, damaged).unwrap_err();
        assert!(refused.starts_with("scenarios[0].quic.zero_rtt_us.histogram: "), "{refused}");
    }

    #[test]
    fn a_whole_document_passes_and_each_row_and_second_is_held_to_its_counts() {
        assert_eq!(judged(|_| {}), Ok(()));
        assert_eq!(
            judged(|s| s.steps[0].ok = 10),
            Err("scenarios[0].steps[0].iterations: 10 is not ok + failed (10 + 1 = 11) of `login`".into())
        );
        assert_eq!(
            judged(|s| s.steps[0].errors.timeout = 0),
            Err("scenarios[0].steps[0].errors: the kinds add up to 0, not the 1 failed".into())
        );
        assert_eq!(
            judged(|s| s.timeline[0].errors = 11),
            Err("scenarios[0].timeline[0].errors: 11 is more than the second's 10 requests".into())
        );
        assert_eq!(
            judged(|s| s.timeline[0].histogram = Some(samples(90))),
            Err("scenarios[0].timeline[0].histogram: it holds 90 samples, but the second has 9 successes: one sample per success".into())
        );
        assert_eq!(
            judged(|s| s.steps[0].latency_us.as_mut().map_or((), |l| l.histogram = Some(samples(8)))),
            Err("scenarios[0].steps[0].latency_us.histogram: it holds 8 samples, but `login` has 9 successes: one sample per success".into())
        );
        assert_eq!(
            judged(|s| s.http.status.insert(503, 1).map_or((), drop)),
            Err("scenarios[0].http.status: the responses by status add up to 10, not the 9 of http.responses".into())
        );
    }

    #[test]
    fn shards_and_run_ids_are_sane() {
        let with = |shard: Option<(u32, u32)>, id: Option<&str>| {
            let mut results = document();
            results.shard = shard.map(|(index, count)| loadbench::report::ShardReport { index, count });
            results.run_id = id.map(str::to_owned);
            check_results(&results).map_err(|e| e.to_string())
        };
        assert_eq!(with(Some((9_999, 10_000)), Some("loadbench-20261201-110405")), Ok(()));
        assert_eq!(
            with(Some((0, 0)), None),
            Err("shard.count: 0 is not a number of shards: a run has 1 to 10000".into())
        );
        assert_eq!(with(Some((3, 3)), None), Err("shard.index: 3 is past the 3 shards, numbered from 0 to 2".into()));
        assert!(with(None, Some("two words")).is_err_and(|e| e.starts_with("run_id: `two words` is not a run id")));
    }
}
