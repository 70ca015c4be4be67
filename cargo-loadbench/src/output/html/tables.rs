//! The tables of a section: the comparison with the baseline (and, against several targets, side
//! by side), the steps and named requests with their spectrum chart, the checks by name, and the
//! errors: kinds, HTTP statuses and causes.

use loadbench::report::{ErrorCounts, named, units};

use super::escape::{Esc, escape};
use super::{Group, charts, mark_class};
use crate::output::status::{self, Mark};
use crate::output::{Context, comparison_rows, side_by_side};

/// A table: `header`, then `rows`, every cell escaped; the columns numbered in `text` are text
/// (left-aligned, wrapping), the others numbers.
fn table(out: &mut String, header: &[&str], rows: &[Vec<String>], text: &[usize]) {
    out.push_str("<div class=\"table-wrap\"><table>\n<thead><tr>");
    for (i, cell) in header.iter().enumerate() {
        let class = if text.contains(&i) { "text" } else { "num" };
        out.push_str(&format!("<th class=\"{class}\" scope=\"col\">{}</th>", Esc(cell)));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for row in rows {
        out.push_str("<tr>");
        for (i, cell) in row.iter().enumerate() {
            let class = if text.contains(&i) { "text" } else { "num" };
            out.push_str(&format!("<td class=\"{class}\">{}</td>", escape(cell)));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div>\n");
}

/// The comparison with the baseline of each entry, with its steps and named requests; and the
/// side-by-side table of a section of several targets.
pub fn comparisons(cx: &Context, group: &Group, out: &mut String) {
    let rows: Vec<Vec<String>> = group.entries.iter().flat_map(|e| comparison_rows(e.result, e.label)).collect();
    if !rows.is_empty() {
        let baselines: Vec<&str> = group
            .entries
            .iter()
            .filter_map(|e| e.result.comparison.as_ref().map(|c| c.baseline.as_str()))
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        let title = match cx.commits {
            Some(commits) => format!("Compared with base {}", commits.base.short),
            None => format!("Compared with baseline {}", baselines.join(", ")),
        };
        out.push_str(&format!("<h3>{}</h3>\n", Esc(&title)));
        let header = cx.comparison_header();
        table(out, header, &rows, &[0, header.len() - 1]);
    }
    if group.entries.len() > 1
        && let Some(reference) = side_by_side::reference(cx)
    {
        let all = side_by_side::rows(cx, reference);
        let rows: Vec<Vec<String>> =
            group.entries.iter().filter_map(|e| all.get(e.position)).map(|row| row[1..].to_vec()).collect();
        out.push_str(&format!("<h3>Side by side, each target against {} (the first)</h3>\n", Esc(reference)));
        table(out, &side_by_side::HEADER[1..], &rows, &[0, side_by_side::HEADER.len() - 2]);
    }
}

/// The steps and named requests: a table, and a spectrum chart of their latencies.
pub fn steps(cx: &Context, group: &Group, out: &mut String) {
    let several = group.entries.len() > 1;
    let mut rows = Vec::new();
    for e in &group.entries {
        for row in status::rows(e.result) {
            let latency = |f: fn(&loadbench::report::LatencyReport) -> f64| {
                row.report.latency_us.as_ref().map_or_else(|| "-".to_owned(), |l| units::micros(f(l)))
            };
            let mut cells = vec![super::glyph(status::row(cx, &row).mark).to_owned()];
            if several {
                cells.push(e.target.unwrap_or("-").to_owned());
            }
            cells.extend([
                row.kind.to_owned(),
                row.report.name.clone(),
                units::thousands(row.report.iterations),
                units::thousands(row.report.failed),
                latency(|l| l.p50),
                latency(|l| l.p99),
            ]);
            rows.push(cells);
        }
    }
    if rows.is_empty() {
        return;
    }
    out.push_str("<h3>Steps and named requests</h3>\n");
    let mut header = vec!["", "kind", "name", "runs", "failed", "p50", "p99"];
    if several {
        header.insert(1, "target");
    }
    let text: &[usize] = if several { &[0, 1, 2, 3] } else { &[0, 1, 2] };
    table(out, &header, &rows, text);
    if let Some(chart) = charts::steps_spectrum(group) {
        out.push_str(&chart);
    }
}

/// The checks of each entry (`ctx.check`), by name: passes, failures and the rate, rounded down
/// as in the table's line (a check that failed once never reads 100.0%).
pub fn checks(group: &Group, out: &mut String) {
    let several = group.entries.len() > 1;
    let mut rows = Vec::new();
    for e in &group.entries {
        for c in &e.result.checks {
            let mut cells = if several { vec![e.target.unwrap_or("-").to_owned()] } else { Vec::new() };
            cells.extend([
                c.name.clone(),
                units::thousands(c.passes),
                units::thousands(c.fails),
                named::percent(c.passes, c.passes.saturating_add(c.fails)),
            ]);
            rows.push(cells);
        }
    }
    if rows.is_empty() {
        return;
    }
    out.push_str("<h3>Checks</h3>\n");
    let mut header = vec!["check", "passed", "failed", "pass rate"];
    if several {
        header.insert(0, "target");
    }
    table(out, &header, &rows, if several { &[0, 1] } else { &[0] });
}

/// The kinds of failure with a count, by name.
fn kinds(errors: &ErrorCounts) -> Vec<(&'static str, u64)> {
    let all = [
        ("connect", errors.connect),
        ("timeout", errors.timeout),
        ("status", errors.status),
        ("io", errors.io),
        ("scenario", errors.scenario),
        ("body too large", errors.body_too_large),
        ("tls", errors.tls),
        ("panic", errors.panic),
        ("stream reset", errors.stream_reset),
        ("protocol", errors.protocol),
        ("quic handshake timeout", errors.quic_handshake_timeout),
        ("quic idle timeout", errors.quic_idle_timeout),
        ("quic application close", errors.quic_application_close),
        ("custom", errors.custom),
    ];
    all.into_iter().filter(|(_, n)| *n > 0).collect()
}

/// The errors of each entry: failed iterations by kind, responses by status, and the causes.
pub fn errors(group: &Group, out: &mut String) {
    out.push_str("<h3>Errors and HTTP statuses</h3>\n");
    for e in &group.entries {
        let s = e.result;
        if let Some(target) = e.target {
            out.push_str(&format!("<h4>against {}</h4>\n", Esc(target)));
        }
        let kinds = kinds(&s.errors);
        let statuses: Vec<Vec<String>> =
            s.http.status.iter().map(|(code, n)| vec![code.to_string(), units::thousands(*n)]).collect();
        let mut causes = status::cause_lines(&s.causes);
        for row in status::rows(s) {
            causes.extend(
                status::cause_lines(&row.report.causes)
                    .into_iter()
                    .map(|line| format!("{} {}: {line}", row.kind, row.report.name)),
            );
        }
        if kinds.is_empty() && statuses.is_empty() && causes.is_empty() {
            out.push_str("<p class=\"no-chart\">No failed iteration and no HTTP response.</p>\n");
            continue;
        }
        out.push_str("<div class=\"side\">");
        if kinds.is_empty() {
            out.push_str(&format!("<p class=\"status {}\">No failed iteration.</p>", mark_class(Mark::Pass)));
        } else {
            let rows: Vec<Vec<String>> =
                kinds.iter().map(|(k, n)| vec![(*k).to_owned(), units::thousands(*n)]).collect();
            table(out, &["failure", "iterations"], &rows, &[0]);
        }
        if !statuses.is_empty() {
            table(out, &["HTTP status", "responses"], &statuses, &[0]);
        }
        out.push_str("</div>\n");
        if !causes.is_empty() {
            out.push_str("<ul class=\"causes\">\n");
            for line in &causes {
                out.push_str(&format!("<li>{}</li>\n", Esc(line)));
            }
            out.push_str("</ul>\n");
        }
    }
}
