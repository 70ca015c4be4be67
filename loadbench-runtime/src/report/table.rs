//! The human-readable results table, as `cargo loadbench` and a bench binary run on its own print
//! it.
//!
//! The output is plain text with no colour and no terminal-width detection, so it is the same on
//! a terminal, in a CI log and in a test: columns are never squeezed to fit a narrow window
//! (comfy-table's dynamic arrangement misdetects widths and wraps cells to one character), and
//! cell contents are kept short instead.

use std::fmt::Write as _;
use std::time::Duration;

use comfy_table::{CellAlignment, ContentArrangement, Table, presets};

use super::units::{bytes, rate, thousands};
use super::{ConfigReport, LatencyColumns, RunReport, ScenarioReport, StepReport};
use super::{cause_lines, connections, named, notes};

/// The column headers, in order, with the latency columns of `columns`.
///
/// `iterations` and `failed` count runs of the scenario body; `responses` counts HTTP responses
/// received whole (`http.responses`), so a journey of three requests shows three times its
/// iterations; `req/s` is those responses per second of wall time
/// ([`ScenarioReport::responses_per_sec`]).
pub fn header(columns: &LatencyColumns) -> Vec<String> {
    let head = ["scenario", "iterations", "failed", "responses", "req/s"].map(str::to_owned);
    head.into_iter().chain(columns.headers()).chain(["bytes".to_owned()]).collect()
}

/// Renders `report` as a table, each scenario under its name, followed by one line per scenario
/// that could not run and one per scenario with failed iterations or non-2xx responses.
///
/// ```text
/// +----------+------------+--------+-----------+--------+-------+--------+--------+--------+----------+
/// | scenario | iterations | failed | responses |  req/s |   p50 |    p95 |    p99 |    max |    bytes |
/// +====================================================================================================+
/// | hello    |     10,000 |     12 |    10,000 | 12,360 | 812µs | 1.24ms | 3.10ms | 15.2ms | 210.0 kB |
/// +----------+------------+--------+-----------+--------+-------+--------+--------+--------+----------+
/// hello: 12 of 10,000 iterations failed: 12 × status; 12,360 iterations/s attempted, 12,345/s succeeded; HTTP status 200 ×9,988, 500 ×12
/// hello: causes: 12 × status: expected status 200, got 500 Internal Server Error
/// ```
pub fn render(report: &RunReport) -> String {
    render_with(report, &LatencyColumns::default())
}

/// [`render`] with these latency columns (`--percentiles`).
pub fn render_with(report: &RunReport, columns: &LatencyColumns) -> String {
    let rows: Vec<(&ScenarioReport, &str)> = report.scenarios.iter().map(|s| (s, s.name.as_str())).collect();
    render_rows_with(&rows, columns)
}

/// [`render`] with a label of the caller's for each scenario: `cargo loadbench` names a scenario
/// by its bench target and server too when several ran.
pub fn render_rows(rows: &[(&ScenarioReport, &str)]) -> String {
    render_rows_with(rows, &LatencyColumns::default())
}

/// [`render_rows`] with these latency columns (`--percentiles`).
pub fn render_rows_with(rows: &[(&ScenarioReport, &str)], columns: &LatencyColumns) -> String {
    if rows.is_empty() {
        return "no scenarios ran\n".to_owned();
    }
    let mut table = Table::new();
    table
        .load_style(presets::ASCII_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(header(columns));
    for &(scenario, label) in rows {
        table.add_row(row(scenario, label, columns));
        for step in &scenario.steps {
            table.add_row(step_row_with(scenario, step, columns));
        }
        for request in &scenario.requests {
            table.add_row(request_row_with(scenario, request, columns));
        }
    }
    // Everything but the name is a number; right-aligned numbers line up by magnitude.
    for column in table.column_iter_mut().skip(1) {
        column.set_cell_alignment(CellAlignment::Right);
    }

    let mut out = table.to_string();
    out.push('\n');
    for line in notes::group_lines(rows) {
        let _ = writeln!(out, "{line}");
    }
    for &(scenario, label) in rows {
        if let Some(error) = &scenario.setup_error {
            let _ = writeln!(out, "{label}: did not run: {error}");
        } else if let Some(line) = notes::failure_line(scenario) {
            let _ = writeln!(out, "{label}: {line}");
        }
        if let Some(line) = super::refused::line(scenario) {
            let _ = writeln!(out, "{label}: {line}");
        }
        for line in cause_lines::lines(scenario, label) {
            let _ = writeln!(out, "{line}");
        }
        for warning in &scenario.warnings {
            let _ = writeln!(out, "{label}: warning: {warning}");
        }
        if let Some(line) = notes::cancelled_line(scenario) {
            let _ = writeln!(out, "{label}: {line}");
        }
        if let Some(line) = named::checks_line(scenario) {
            let _ = writeln!(out, "{label}: {line}");
        }
        if let Some(line) = super::feed::ran_out_line(scenario) {
            let _ = writeln!(out, "{label}: {line}");
        }
        if let Some(line) = super::remote_write::line(scenario) {
            let _ = writeln!(out, "{label}: {line}");
        }
        if let Some(line) = notes::threshold_line(scenario) {
            let _ = writeln!(out, "{label}: {line}");
        }
        for reason in super::inconclusive::reasons(scenario) {
            let _ = writeln!(out, "{label}: inconclusive: {reason}");
        }
        for (what, hook) in [("setup", &scenario.user_setup), ("teardown", &scenario.user_teardown)] {
            if let Some(hook) = hook.as_ref().filter(|h| h.failed > 0) {
                let why = hook.first_error.as_deref().unwrap_or("no message");
                let _ = writeln!(
                    out,
                    "{label}: {what} failed for {} of {} virtual users (first: {why})",
                    thousands(hook.failed),
                    thousands(hook.runs)
                );
            }
        }
        if let Some(line) = notes::open_model_line(scenario) {
            let _ = writeln!(out, "{label}: {line}");
        }
        if let Some(factor) = scenario.config.scale {
            let _ = writeln!(out, "{label}: reduced to {factor} of its declared load (--scale, LOADBENCH_SCALE)");
        }
        if let Some(line) = connections::transport_line(scenario) {
            let _ = writeln!(out, "{label}: {line}");
        }
        if let Some(line) = connections::connection_line(scenario) {
            let _ = writeln!(out, "{label}: {line}");
        }
        if let Some(line) = connections::quic_line(scenario) {
            let _ = writeln!(out, "{label}: {line}");
        }
        if let Some(line) = connections::insecure_line(scenario) {
            let _ = writeln!(out, "{label}: {line}");
        }
        if let Some(line) = connections::redirects_line(scenario) {
            let _ = writeln!(out, "{label}: {line}");
        }
        if let Some(line) = notes::saturation_line(scenario) {
            let _ = writeln!(out, "{label}: {line}");
        }
        for watched in &scenario.watched {
            let _ = writeln!(out, "{label}: {}", notes::watch_line(watched));
        }
    }
    out
}

/// One-line description of a scenario's load, such as
/// `concurrency 1000, count 100000, timeout 30s, target http://127.0.0.1:8080`.
pub fn describe_config(config: &ConfigReport) -> String {
    let ms = |ms: u64| humantime::format_duration(Duration::from_millis(ms));
    let mut out = if !config.stages.is_empty() {
        let stages: Vec<String> = config.stages.iter().map(|&(d, n)| format!("{} → {n}", ms(d))).collect();
        format!("stages [{}]", stages.join(", "))
    } else if !config.rate_stages.is_empty() {
        let stages: Vec<String> = config.rate_stages.iter().map(|&(d, r)| format!("{} → {r}/s", ms(d))).collect();
        format!("rate stages [{}], max_concurrency {}", stages.join(", "), config.concurrency)
    } else {
        match config.rate {
            Some(per_second) => format!("rate {}/s, max_concurrency {}", rate(per_second), config.concurrency),
            None => format!("concurrency {}", config.concurrency),
        }
    };
    if let Some(n) = config.connections {
        let _ = write!(out, ", connections {n}");
    }
    if let Some(depth) = config.pipeline {
        let _ = write!(out, ", pipeline {depth}");
    }
    if config.http2 {
        out.push_str(", http2");
    }
    if config.http3 {
        out.push_str(", http3");
    }
    if let Some(count) = config.count {
        let _ = write!(out, ", count {count}");
    }
    if let Some(ms) = config.duration_ms {
        let _ = write!(out, ", duration {}", humantime::format_duration(Duration::from_millis(ms)));
    }
    if let Some((min, max)) = config.think_time_ms {
        if min == max {
            let _ = write!(out, ", think time {}", ms(min));
        } else {
            let _ = write!(out, ", think time {}..{}", ms(min), ms(max));
        }
    }
    if let Some(n) = config.warmup_count {
        let _ = write!(out, ", warmup {n} iterations");
    }
    if let Some(ms) = config.warmup_ms {
        let _ = write!(out, ", warmup {}", humantime::format_duration(Duration::from_millis(ms)));
    }
    let _ = write!(out, ", timeout {}", humantime::format_duration(Duration::from_millis(config.timeout_ms)));
    if let Some(target) = &config.target {
        let _ = write!(out, ", target {target}");
    }
    if let Some(group) = &config.group {
        let _ = write!(out, ", group {group}");
    }
    if let Some(factor) = config.scale {
        let _ = write!(out, ", scale {factor}");
    }
    if !config.thresholds.is_empty() || !config.row_thresholds.is_empty() {
        let rows = config.row_thresholds.iter().map(ToString::to_string);
        let thresholds: Vec<String> = config.thresholds.iter().map(ToString::to_string).chain(rows).collect();
        let _ = write!(out, ", thresholds [{}]", thresholds.join(", "));
    }
    out
}

fn row(s: &ScenarioReport, label: &str, columns: &LatencyColumns) -> Vec<String> {
    let name = if s.interrupted { format!("{label} (interrupted)") } else { label.to_owned() };
    if s.setup_error.is_some() {
        let mut cells = vec!["-".to_owned(); header(columns).len()];
        cells[0] = name;
        cells[1] = "did not run".to_owned();
        return cells;
    }
    let mut cells = vec![
        name,
        thousands(s.iterations),
        thousands(s.failed),
        thousands(s.http.responses),
        rate(s.responses_per_sec()),
    ];
    cells.extend(columns.cells(s.latency_us.as_ref()));
    cells.push(bytes(s.http.bytes_received));
    cells
}

/// A step's row, indented under its scenario: its runs, failures, successful runs per second of
/// the scenario's wall time (as a scenario's `rps` counts successes, so a step that never
/// succeeded shows 0, however fast it failed) and latencies, and `-` for responses and bytes
/// (counted for the scenario as a whole, not per step). The Markdown output puts the same rows
/// under its scenarios.
pub fn step_row(s: &ScenarioReport, step: &StepReport) -> Vec<String> {
    step_row_with(s, step, &LatencyColumns::default())
}

/// [`step_row`] with these latency columns.
pub fn step_row_with(s: &ScenarioReport, step: &StepReport, columns: &LatencyColumns) -> Vec<String> {
    let mut cells = vec![
        format!("  └ {}", step.name),
        thousands(step.iterations),
        thousands(step.failed),
        "-".to_owned(),
        rate(s.per_second(step.ok)),
    ];
    cells.extend(columns.cells(step.latency_us.as_ref()));
    cells.push("-".to_owned());
    cells
}

/// A named request's row (`.name(…)`), as a step's but for its marker (`  ↳ GET /items/{id}`):
/// its requests, failures (errors and statuses of 400 or more), successful requests per second
/// of the scenario's wall time, the latencies of its successful requests, and `-` for responses
/// and bytes.
pub fn request_row(s: &ScenarioReport, request: &StepReport) -> Vec<String> {
    request_row_with(s, request, &LatencyColumns::default())
}

/// [`request_row`] with these latency columns.
pub fn request_row_with(s: &ScenarioReport, request: &StepReport, columns: &LatencyColumns) -> Vec<String> {
    let mut cells = step_row_with(s, request, columns);
    cells[0] = format!("  {} {}", named::REQUEST_MARKER, request.name);
    cells
}

#[cfg(test)]
mod tests;
