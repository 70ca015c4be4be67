//! A scenario's section: its heading and, for each target it ran against, its status and why,
//! thresholds, generator saturation, key figures and configuration; then its charts and tables
//! in a fixed order (throughput, latency, spectrum, steps, checks, errors, runs, watched servers,
//! arrival rate). Under `--runs N` the charts over time say which run they show.

use cargo_loadbench::ScenarioResult;
use loadbench::report::{ConfigReport, MachineInfo, units};

use super::axis::millis;
use super::escape::{Esc, with_code};
use super::{Entry, Group, charts, date, mark_class, mark_span, tables};
use crate::output::Context;
use crate::output::status::{self, Mark};

/// `linux x86_64, 8 CPUs, host ci-7, kernel 6.8.0`.
pub fn machine(m: &MachineInfo) -> String {
    let mut out = format!("{} {}, {} CPU{}", m.os, m.arch, m.cpus, if m.cpus == 1 { "" } else { "s" });
    if let Some(host) = &m.hostname {
        out.push_str(&format!(", host {host}"));
    }
    if let Some(kernel) = &m.kernel {
        out.push_str(&format!(", kernel {kernel}"));
    }
    out
}

/// Appends the section of `group`.
pub fn render(cx: &Context, group: &Group, out: &mut String) {
    let mark = group.entries.iter().map(|e| status::scenario(cx, e.result).mark).max().unwrap_or(Mark::Pass);
    out.push_str(&format!(
        "<section class=\"scenario {}\" id=\"s{i}\" aria-labelledby=\"s{i}-title\">\n<h2 id=\"s{i}-title\">{} {}</h2>\n",
        mark_class(mark),
        mark_span(mark),
        Esc(&group.name),
        i = group.index
    ));
    for entry in &group.entries {
        summary(cx, entry, out);
    }
    tables::comparisons(cx, group, out);
    let timeline_run = charts::timeline_run(group)
        .map(|line| format!("<p class=\"timeline-run\">{}</p>\n", Esc(&line)))
        .unwrap_or_default();
    out.push_str("<h3>Throughput and latency</h3>\n");
    out.push_str(&timeline_run);
    out.push_str(&charts::over_time(group));
    out.push_str(&charts::spectrum(group));
    tables::steps(cx, group, out);
    tables::checks(group, out);
    tables::errors(group, out);
    if let Some(runs) = charts::runs(group) {
        out.push_str("<h3>Repeated runs</h3>\n");
        out.push_str(&runs);
    }
    if let Some(watched) = charts::watched(group) {
        out.push_str("<h3>Server processes</h3>\n");
        out.push_str(&watched);
    }
    if let Some(rate) = charts::rate(group) {
        out.push_str("<h3>Open model: arrival rate</h3>\n");
        out.push_str(&timeline_run);
        out.push_str(&rate);
    }
    out.push_str("</section>\n");
}

/// One entry's status, thresholds, saturation, figures and configuration.
fn summary(cx: &Context, entry: &Entry, out: &mut String) {
    let s = entry.result;
    let st = status::scenario(cx, s);
    out.push_str("<div class=\"entry\">\n");
    if let Some(target) = entry.target {
        out.push_str(&format!("<h3 class=\"target\">against <span class=\"name\">{}</span></h3>\n", Esc(target)));
    }
    let verdict = match st.mark {
        Mark::Pass => "passed",
        Mark::Warn => "passed, with warnings",
        Mark::Inconclusive => "inconclusive: the generator's figures, not the server's",
        Mark::Fail => "failed",
    };
    out.push_str(&format!("<div class=\"status {}\"><p>{} {verdict}</p>", mark_class(st.mark), mark_span(st.mark)));
    if !st.why.is_empty() {
        out.push_str("<ul>");
        for why in &st.why {
            out.push_str(&format!("<li>{}</li>", with_code(why)));
        }
        out.push_str("</ul>");
    }
    out.push_str("</div>\n");
    flags(s, out);
    if !s.thresholds.is_empty() {
        out.push_str("<ul class=\"thresholds\">\n");
        for outcome in &s.thresholds {
            // A condition on the generator that failed leaves the figures inconclusive; it fails
            // nothing.
            let (class, mark, word) = match (outcome.passed, outcome.threshold.metric.is_generator()) {
                (true, _) => ("pass", Mark::Pass, "met"),
                (false, true) => ("inconclusive", Mark::Inconclusive, "not met, so inconclusive"),
                (false, false) => ("fail", Mark::Fail, "failed"),
            };
            out.push_str(&format!(
                "<li class=\"{class}\">{} threshold {word}: <code>{}</code></li>\n",
                mark_span(mark),
                Esc(&outcome.to_string())
            ));
        }
        out.push_str("</ul>\n");
    }
    // Said as the table says it: a saturated generator the scenario's own threshold allowed.
    // (When it made the scenario inconclusive, the status above gives the same line.)
    if let Some(line) = loadbench::report::inconclusive::saturation_warning(s) {
        out.push_str(&format!("<p class=\"banner warn\">⚠️ {}</p>\n", Esc(&line)));
    }
    figures(s, out);
    config(cx, s, out);
    out.push_str("</div>\n");
}

/// Interrupted, cancelled, not run, feed ran out.
fn flags(s: &ScenarioResult, out: &mut String) {
    let mut lines = Vec::new();
    if let Some(error) = &s.setup_error {
        lines.push(("fail", format!("Did not run: {error}")));
    }
    if s.interrupted {
        lines.push(("fail", "Interrupted: the figures cover what ran before the stop.".to_owned()));
    }
    if s.cancelled > 0 {
        lines.push((
            "warn",
            format!("{} iterations still in flight at the end were cancelled.", units::thousands(s.cancelled)),
        ));
    }
    if let Some(ran_out) = &s.feed_ran_out {
        lines.push((
            "warn",
            format!(
                "The feed ran out after {} records: {} iterations not started.",
                units::thousands(ran_out.records),
                units::thousands(ran_out.not_started)
            ),
        ));
    }
    for (class, line) in lines {
        out.push_str(&format!("<p class=\"banner {class}\">{}</p>\n", Esc(&line)));
    }
}

/// The key figures, as tiles.
fn figures(s: &ScenarioResult, out: &mut String) {
    let latency = |f: fn(&loadbench::report::LatencyReport) -> f64| {
        s.latency_us.as_ref().map_or_else(|| "-".to_owned(), |l| units::micros(f(l)))
    };
    let mut tiles = vec![
        ("iterations", units::thousands(s.iterations)),
        ("failed", units::thousands(s.failed)),
        ("responses", units::thousands(s.http.responses)),
        ("req/s", units::rate(s.responses_per_sec())),
        ("p50", latency(|l| l.p50)),
        ("p90", latency(|l| l.p90)),
        ("p99", latency(|l| l.p99)),
        ("max", latency(|l| l.max)),
    ];
    if s.dropped > 0 {
        tiles.push(("dropped", units::thousands(s.dropped)));
    }
    out.push_str("<dl class=\"figures\">");
    for (name, value) in tiles {
        let class = if name == "failed" && s.failed > 0 { " class=\"bad\"" } else { "" };
        out.push_str(&format!("<div{class}><dt>{name}</dt><dd>{}</dd></div>", Esc(&value)));
    }
    out.push_str("</dl>\n");
}

/// The load asked for, where it went, and when and where it ran.
fn config(cx: &Context, s: &ScenarioResult, out: &mut String) {
    let c: &ConfigReport = &s.config;
    let mut rows: Vec<(&str, String)> = Vec::new();
    if !c.stages.is_empty() {
        let stages: Vec<String> = c.stages.iter().map(|&(ms, n)| format!("{} → {n}", millis(ms))).collect();
        rows.push(("user stages", stages.join(", ")));
    } else if c.rate.is_none() && c.rate_stages.is_empty() {
        rows.push(("concurrency", units::thousands(u64::from(c.concurrency))));
    }
    if !c.rate_stages.is_empty() {
        let stages: Vec<String> = c.rate_stages.iter().map(|&(ms, r)| format!("{} → {r}/s", millis(ms))).collect();
        rows.push(("rate stages", stages.join(", ")));
    } else if let Some(rate) = c.rate {
        rows.push(("rate", format!("{}/s", units::rate(rate))));
    }
    if c.rate.is_some() || !c.rate_stages.is_empty() {
        rows.push(("max concurrency", units::thousands(u64::from(c.concurrency))));
    }
    if let Some(rate) = &s.rate {
        rows.push((
            "arrivals",
            format!("{}/s requested, {}/s achieved", units::rate(rate.requested), units::rate(rate.achieved)),
        ));
    }
    if let Some(count) = c.count {
        rows.push(("count", units::thousands(count)));
    }
    if let Some(ms) = c.duration_ms {
        rows.push(("duration", millis(ms)));
    }
    if let Some(n) = c.connections {
        rows.push(("connections", units::thousands(u64::from(n))));
    }
    if let Some(depth) = c.pipeline {
        rows.push(("pipeline", depth.to_string()));
    }
    let asked = if c.http3 {
        Some("HTTP/3")
    } else if c.http2 {
        Some("HTTP/2")
    } else {
        None
    };
    if asked.is_some() || s.http.version.is_some() {
        let spoken = s.http.version.map_or("-", |v| v.as_str());
        rows.push((
            "HTTP",
            match asked {
                Some(asked) => format!("{asked} asked for, {spoken} spoken"),
                None => spoken.to_owned(),
            },
        ));
    }
    if let Some((min, max)) = c.think_time_ms {
        rows.push(("think time", if min == max { millis(min) } else { format!("{}–{}", millis(min), millis(max)) }));
    }
    if let Some(n) = c.warmup_count {
        rows.push(("warmup", format!("{} iterations", units::thousands(n))));
    }
    if let Some(ms) = c.warmup_ms {
        rows.push(("warmup", millis(ms)));
    }
    rows.push(("timeout", millis(c.timeout_ms)));
    if let Some(target) = &c.target {
        rows.push(("target", target.clone()));
    }
    if let Some(to) = &c.connect_to {
        rows.push(("connected to", to.clone()));
    }
    if let Some(feed) = &c.feed {
        rows.push(("feed", format!("{} ({} records)", feed.path, units::thousands(feed.records))));
    }
    if let Some(group) = &c.group {
        rows.push(("group", group.clone()));
    }
    if let Some(scale) = c.scale {
        rows.push(("scaled by", format!("{scale}")));
    }
    if let (Some(package), Some(bench)) = (&s.package, &s.bench) {
        rows.push(("bench", format!("{package} / {bench}")));
    }
    rows.push(("started", date(&s.started_at)));
    rows.push(("ran for", units::micros(s.duration_us as f64)));
    rows.push(("machine", machine(&cx.report.machine)));
    rows.push(("loadbench", cx.report.tool.version.clone()));
    out.push_str("<dl class=\"config\">");
    for (name, value) in rows {
        out.push_str(&format!("<dt>{}</dt><dd>{}</dd>", Esc(name), Esc(&value)));
    }
    out.push_str("</dl>\n");
}
