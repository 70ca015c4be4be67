//! The charts of a scenario's section, built from its results: what each chart shows, its series
//! (one set per target when the section holds several), and the note that stands in for a chart
//! without data. The charts over time share one [`Grid`] of columns.

use loadbench::report::{SpectrumPoint, TimelineSecond};

use super::Group;
use super::axis::{Unit, clock};
use super::escape::Esc;
use super::grid::{Grid, How, gathered, timeline_end};
use super::plots::{self, Panel};
use super::svg::{self, Chart, Dash, Series};
use super::timeline;
use crate::output::status;

/// One of a second's latencies.
type Figure = fn(&TimelineSecond) -> Option<f64>;

/// `fast: p50` in a section of several targets, `p50` otherwise.
fn named(target: Option<&str>, what: &str) -> String {
    target.map_or_else(|| what.to_owned(), |t| format!("{t}: {what}"))
}

/// A figure a chart draws for each target: its name, its colour when the section has one target,
/// and its dash (which tells the figures of one target apart, on screen and in print).
type Metric = (&'static str, usize, Dash);

/// The throughput chart's figures.
const THROUGHPUT: [Metric; 2] = [("it/s", 0, Dash::Solid), ("errors/s", 1, Dash::Dashed)];
/// The latency chart's figures.
const LATENCY: [Metric; 3] = [("p50", 0, Dash::Solid), ("p90", 2, Dash::Dashed), ("p99", 1, Dash::Dotted)];
/// The arrival rate chart's figures.
const ARRIVALS: [Metric; 3] =
    [("requested", 6, Dash::Dashed), ("achieved", 0, Dash::Solid), ("dropped", 1, Dash::Dotted)];

/// The series of `metric` for the `index`th entry of `group`: in the metric's colour when the
/// section has one target, in the target's when it has several.
fn series(group: &Group, index: usize, (what, colour, dash): Metric, points: Vec<Option<(f64, f64)>>) -> Series {
    let entry = &group.entries[index];
    let colour = if group.entries.len() > 1 { index } else { colour };
    Series::new(named(entry.target, what), colour, points).dashed(dash)
}

/// A paragraph standing in for a chart without data.
fn note(title: &str, why: &str) -> String {
    format!("<p class=\"no-chart\"><strong>{}</strong>: {}</p>\n", Esc(title), Esc(why))
}

fn chart(
    group: &Group,
    kind: &'static str,
    title: &'static str,
    what: String,
    unit: Unit,
    y_title: &'static str,
) -> Chart {
    Chart {
        kind,
        id: format!("s{}-{kind}", group.index),
        title,
        label: format!("{title} of {}: {what}", group.name),
        unit,
        y_title,
        series: Vec::new(),
    }
}

/// Keeps the series that have a point.
fn drawn(series: Vec<Series>) -> Vec<Series> {
    series.into_iter().filter(|s| s.points.iter().any(Option::is_some)).collect()
}

/// A count of each second of `timeline` as a rate per second, over the seconds its load ran in
/// (see [`timeline`]).
fn rates(
    grid: &Grid,
    covered: &timeline::Covered,
    timeline: &[TimelineSecond],
    count: fn(&TimelineSecond) -> u64,
) -> Vec<Option<(f64, f64)>> {
    let ran = timeline.iter().filter(|s| s.second < covered.load_end);
    grid.points(covered.load_end, ran.map(|s| (s.second, Some(count(s) as f64), 1.0)), How::Rate(covered.span))
}

/// The run each entry's timeline is of under `--runs N`, as a line above the charts over time
/// (unescaped); `None` for a single run.
pub fn timeline_run(group: &Group) -> Option<String> {
    let runs: Vec<(Option<&str>, (usize, usize))> =
        group.entries.iter().filter_map(|e| Some((e.target, timeline::of(e.result).run?))).collect();
    let (_, first) = *runs.first()?;
    let why = "seconds of different runs do not line up, so they are not merged; the figures above are \
               the medians across runs";
    if runs.len() == group.entries.len() && runs.iter().all(|(_, run)| *run == first) {
        let each = if runs.len() > 1 { "each target's " } else { "" };
        let which = if first.0 == 1 { ", the first" } else { "" };
        return Some(format!("Over time: {each}{}{which} ({why}).", timeline::run_name(first)));
    }
    let each: Vec<String> = runs
        .iter()
        .map(|(t, run)| format!("{}{}", t.map_or_else(String::new, |t| format!("{t}: ")), timeline::run_name(*run)))
        .collect();
    Some(format!("Over time: {} ({why}).", each.join(", ")))
}

/// The charts over time: throughput and latency, from the timelines.
pub fn over_time(group: &Group) -> String {
    let end = group.entries.iter().map(|e| timeline_end(&e.result.timeline)).max().unwrap_or(0);
    if end == 0 {
        return note("Throughput and latency over time", "no timeline: the run was shorter than a second");
    }
    let grid = Grid::new(end);
    let mut throughput = chart(
        group,
        "throughput",
        "Throughput",
        format!("iterations and errors per second over {}", clock(end as f64)),
        Unit::PerSecond,
        "per second",
    );
    let mut latency = chart(
        group,
        "latency",
        "Latency over time",
        format!("p50, p90 and p99 per second over {}", clock(end as f64)),
        Unit::Micros,
        "latency",
    );
    let mut drained = Vec::new();
    for (i, e) in group.entries.iter().enumerate() {
        let (t, own_end) = (&e.result.timeline, timeline_end(&e.result.timeline));
        let covered = timeline::of(e.result);
        let rate = |f: fn(&TimelineSecond) -> u64| rates(&grid, &covered, t, f);
        throughput.series.push(series(group, i, THROUGHPUT[0], rate(|s| s.requests)));
        throughput.series.push(series(group, i, THROUGHPUT[1], rate(|s| s.errors)));
        drained.extend(covered.drained.map(|d| timeline::drained_note(e.target, &d)));
        let weight = |s: &TimelineSecond| (s.requests.saturating_sub(s.errors)).max(1) as f64;
        let figures: [(Figure, How); 3] =
            [(|s| s.p50_us, How::Mean), (|s| s.p90_us, How::Mean), (|s| s.p99_us, How::Max)];
        for (metric, (value, how)) in LATENCY.into_iter().zip(figures) {
            let points = grid.points(own_end, t.iter().map(|s| (s.second, value(s), weight(s))), how);
            latency.series.push(series(group, i, metric, points));
        }
    }
    let mut out =
        gathered(plots::time_chart(&throughput, grid.end as f64, &grid.columns), &grid, "their mean per second");
    for line in drained {
        out.push_str(&format!("<p class=\"chart-note\">{}</p>\n", Esc(&line)));
    }
    latency.series = drawn(latency.series);
    if latency.series.is_empty() {
        out.push_str(&note("Latency over time", "no second had a successful iteration"));
    } else {
        let chart = plots::time_chart(&latency, grid.end as f64, &grid.columns);
        out.push_str(&gathered(
            chart,
            &grid,
            "p50 and p90 are their means weighted by successes, p99 the worst second's",
        ));
    }
    out
}

fn spectrum_points(spectrum: &[SpectrumPoint]) -> Vec<Option<(f64, f64)>> {
    spectrum.iter().map(|p| Some((p.percentile, p.value_us))).collect()
}

/// The latency percentile spectrum: each target's, and the baseline's under it, dashed.
pub fn spectrum(group: &Group) -> String {
    let mut chart = chart(
        group,
        "spectrum",
        "Latency percentile spectrum",
        "latency at each percentile".into(),
        Unit::Micros,
        "latency",
    );
    let several = group.entries.len() > 1;
    for (i, e) in group.entries.iter().enumerate() {
        let own = e.result.latency_us.as_ref().map(|l| l.spectrum.as_slice()).unwrap_or_default();
        let name = e.target.map_or_else(|| "this run".to_owned(), str::to_owned);
        chart.series.push(Series::new(name, i, spectrum_points(own)));
        if let Some(c) = e.result.comparison.as_ref().filter(|c| !c.baseline_spectrum.is_empty()) {
            let name = format!("baseline {}", c.baseline);
            let name = e.target.map_or_else(|| name.clone(), |t| format!("{name} ({t})"));
            let colour = if several { i } else { 6 };
            chart.series.push(Series::new(name, colour, spectrum_points(&c.baseline_spectrum)).dashed(Dash::Dashed));
        }
    }
    chart.series = drawn(chart.series);
    if chart.series.is_empty() {
        return note("Latency percentile spectrum", "no spectrum: no iteration succeeded, or the results predate it");
    }
    plots::spectrum_chart(&chart)
}

/// The spectrum of each step and named request, one curve each; `None` when none has one.
pub fn steps_spectrum(group: &Group) -> Option<String> {
    let mut chart = chart(
        group,
        "steps-spectrum",
        "Steps and named requests: latency percentile spectrum",
        "latency at each percentile of each step and named request".into(),
        Unit::Micros,
        "latency",
    );
    for e in &group.entries {
        for row in status::rows(e.result) {
            let spectrum = row.report.latency_us.as_ref().map(|l| l.spectrum.as_slice()).unwrap_or_default();
            let what = if row.kind == "step" { row.report.name.clone() } else { format!("↳ {}", row.report.name) };
            let colour = chart.series.len();
            chart.series.push(Series::new(named(e.target, &what), colour, spectrum_points(spectrum)));
        }
    }
    chart.series = drawn(chart.series);
    for (i, series) in chart.series.iter_mut().enumerate() {
        series.colour = i;
        series.dash = if i / svg::PALETTE.len() % 2 == 1 { Dash::Dashed } else { Dash::Solid };
    }
    (!chart.series.is_empty()).then(|| plots::spectrum_chart(&chart))
}

/// Each run of `--runs N`: successful iterations per second (it/s), p50 and p99 as dots, one per run; `None` for a single run
/// (whose results hold that run as their one entry of `runs`).
pub fn runs(group: &Group) -> Option<String> {
    let n = group.entries.iter().map(|e| e.result.runs.len()).max().filter(|&n| n > 1)?;
    let mut chart =
        chart(group, "runs", "Runs", format!("it/s, p50 and p99 of each of {n} runs"), Unit::PerSecond, "it/s");
    let several = group.entries.len() > 1;
    let dots = |f: &dyn Fn(&cargo_loadbench::RunSample) -> Option<f64>, runs: &[cargo_loadbench::RunSample]| {
        runs.iter().enumerate().map(|(r, run)| f(run).map(|v| ((r + 1) as f64, v))).collect::<Vec<_>>()
    };
    for (i, e) in group.entries.iter().enumerate() {
        chart.series.push(Series::new(named(e.target, "it/s"), i, dots(&|r| Some(r.rps), &e.result.runs)));
    }
    for (i, e) in group.entries.iter().enumerate() {
        let (p50, p99) = if several { (2 * i, 2 * i + 1) } else { (2, 1) };
        let latency = |f: fn(&loadbench::report::LatencyReport) -> f64| {
            move |r: &cargo_loadbench::RunSample| r.latency_us.as_ref().map(f)
        };
        chart.series.push(Series::new(named(e.target, "p50"), p50, dots(&latency(|l| l.p50), &e.result.runs)));
        chart.series.push(Series::new(named(e.target, "p99"), p99, dots(&latency(|l| l.p99), &e.result.runs)));
    }
    let rps = group.entries.len();
    let panels = [
        Panel { unit: Unit::PerSecond, y_title: "it/s", series: rps },
        Panel { unit: Unit::Micros, y_title: "latency", series: chart.series.len() - rps },
    ];
    Some(plots::dot_chart(&chart, n, &panels))
}

/// The watched server processes' CPU and memory over time; `None` when none was watched.
pub fn watched(group: &Group) -> Option<String> {
    let processes: Vec<_> = group
        .entries
        .iter()
        .flat_map(|e| e.result.watched.iter().map(move |w| (e, w)))
        .filter(|(_, w)| !w.series.is_empty())
        .collect();
    if processes.is_empty() {
        let any = group.entries.iter().any(|e| !e.result.watched.is_empty());
        return any.then(|| note("Server CPU and memory", "no samples over time: the results predate them"));
    }
    let end =
        processes.iter().flat_map(|(_, w)| w.series.iter().map(|s| s.second.saturating_add(1))).max().unwrap_or(1);
    let grid = Grid::new(end);
    let over = clock(end as f64);
    let mut cpu = chart(
        group,
        "watch-cpu",
        "Server CPU",
        format!("CPU of each watched process over {over}, in percent of one core"),
        Unit::Percent,
        "CPU (% of a core)",
    );
    let mut rss = chart(
        group,
        "watch-rss",
        "Server memory",
        format!("resident memory of each watched process over {over}"),
        Unit::Bytes,
        "resident memory",
    );
    for (i, (e, w)) in processes.iter().enumerate() {
        let own_end = w.series.iter().map(|s| s.second.saturating_add(1)).max().unwrap_or(0);
        let name = named(e.target, &w.name);
        let cpu_points = grid.points(own_end, w.series.iter().map(|s| (s.second, s.cpu_percent, 1.0)), How::Mean);
        let rss_points =
            grid.points(own_end, w.series.iter().map(|s| (s.second, s.rss_bytes.map(|b| b as f64), 1.0)), How::Max);
        cpu.series.push(Series::new(name.clone(), i, cpu_points));
        rss.series.push(Series::new(name, i, rss_points));
    }
    let mut out = String::new();
    for (chart, how) in [(cpu, "CPU is their mean"), (rss, "memory is their highest")] {
        let title = chart.title;
        let chart = Chart { series: drawn(chart.series), ..chart };
        if chart.series.is_empty() {
            out.push_str(&note(title, "the process could not be read"));
        } else {
            out.push_str(&gathered(plots::time_chart(&chart, grid.end as f64, &grid.columns), &grid, how));
        }
    }
    Some(out)
}

/// The requested rate over time: flat, or along `rate_stages` (`[milliseconds, per second]`,
/// a straight line from 0 through each).
fn requested(config: &loadbench::report::ConfigReport, reported: Option<f64>, end: f64) -> Vec<Option<(f64, f64)>> {
    if !config.rate_stages.is_empty() {
        let mut at = 0.0;
        let mut points = vec![Some((0.0, 0.0))];
        for &(ms, rate) in &config.rate_stages {
            at += ms as f64 / 1000.0;
            points.push(Some((at, rate as f64)));
        }
        return points;
    }
    match config.rate.or(reported) {
        Some(rate) => vec![Some((0.0, rate)), Some((end.max(1.0), rate))],
        None => Vec::new(),
    }
}

/// The open model's arrivals: requested, achieved (iterations ended per second) and dropped;
/// `None` in the closed model.
pub fn rate(group: &Group) -> Option<String> {
    let open = |e: &&super::Entry| {
        e.result.rate.is_some() || e.result.config.rate.is_some() || !e.result.config.rate_stages.is_empty()
    };
    if !group.entries.iter().any(|e| open(&e)) {
        return None;
    }
    let end = group.entries.iter().map(|e| timeline_end(&e.result.timeline)).max().unwrap_or(0);
    let stages_end = group
        .entries
        .iter()
        .map(|e| e.result.config.rate_stages.iter().fold(0u64, |sum, s| sum.saturating_add(s.0)).div_ceil(1000))
        .max()
        .unwrap_or(0);
    let grid = Grid::new(end.max(stages_end).max(1));
    let mut chart = chart(
        group,
        "rate",
        "Arrival rate",
        "requested, achieved and dropped arrivals per second".into(),
        Unit::PerSecond,
        "arrivals per second",
    );
    for (i, e) in group.entries.iter().enumerate().filter(|(_, e)| open(e)) {
        let (t, own_end) = (&e.result.timeline, timeline_end(&e.result.timeline));
        let requested = requested(&e.result.config, e.result.rate.map(|r| r.requested), own_end as f64);
        let covered = timeline::of(e.result);
        let achieved = rates(&grid, &covered, t, |s| s.requests);
        let dropped = rates(&grid, &covered, t, |s| s.dropped);
        for (metric, points) in ARRIVALS.into_iter().zip([requested, achieved, dropped]) {
            chart.series.push(series(group, i, metric, points));
        }
    }
    chart.series = drawn(chart.series);
    Some(if chart.series.is_empty() {
        note("Arrival rate", "no timeline: the run was shorter than a second")
    } else {
        gathered(plots::time_chart(&chart, grid.end as f64, &grid.columns), &grid, "rates are their mean per second")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rate_ramp_is_drawn_through_its_stages() {
        let config = loadbench::report::ConfigReport {
            rate_stages: vec![(10_000, 100), (5_000, 100), (5_000, 0)],
            ..Default::default()
        };
        assert_eq!(requested(&config, None, 20.0), [(0.0, 0.0), (10.0, 100.0), (15.0, 100.0), (20.0, 0.0)].map(Some));
        let flat = loadbench::report::ConfigReport { rate: Some(50.0), ..Default::default() };
        assert_eq!(requested(&flat, None, 8.0), [(0.0, 50.0), (8.0, 50.0)].map(Some));
    }
}
