//! One self-contained HTML page with charts: the run's verdict, a table of contents, and a
//! section per scenario (the same scenario against several `--target`s shares one section, each
//! target's curves overlaid) with its status, figures, configuration and charts.
//!
//! Charts are drawn here, server-side, as inline SVG, with no JavaScript chart library: the file
//! stays small (well under 1 MB for a typical run), needs nothing vendored or pinned, and shows
//! its charts even with scripts disabled. The few lines of inline JavaScript (`page.js`) only
//! switch series on and off from the legend and highlight the hovered column. Values on hover
//! come from SVG `<title>` elements, the browser's own tooltips: one transparent `<rect>` per time
//! column (at most [`grid::MAX_COLUMNS`]; longer timelines are gathered into columns of several
//! seconds) whose title lists every series' value there, and a title on each spectrum point.
//!
//! The page is hostile-input safe: every string from the user or a server (names, labels, URLs,
//! error messages, status codes, paths, host names) goes through [`escape::Esc`], in text and
//! attributes alike, and element ids are numbers (`s0`, `s1`), never names. A
//! Content-Security-Policy, first in `<head>`, allows only the page's own inline `<style>` and
//! `<script>`, named by their SHA-256, and nothing from the network; hence no `style=""`
//! attributes and no inline event handlers.

mod axis;
mod charts;
mod escape;
mod grid;
mod plots;
mod section;
mod svg;
mod tables;
#[cfg(test)]
mod tests;
mod timeline;

use base64::Engine as _;
use cargo_loadbench::ScenarioResult;

use super::Context;
use super::status::{self, Mark};
use escape::Esc;

/// The page's style sheet, inlined.
const STYLE: &str = include_str!("page.css");
/// The page's script, inlined.
const SCRIPT: &str = include_str!("page.js");

/// The scenarios of one section: one entry, or the same scenario against several targets.
#[derive(Debug)]
pub(super) struct Group<'a> {
    /// The section's number, its id (`s0`) and its charts' (`s0-throughput`).
    pub index: usize,
    /// The scenario's display name (its label, without the target when several share it).
    pub name: String,
    /// Its entries, in the order they ran.
    pub entries: Vec<Entry<'a>>,
}

/// One entry of the results in a section.
#[derive(Debug)]
pub(super) struct Entry<'a> {
    /// Its place in the results (and in `cx.labels`).
    pub position: usize,
    /// Its results.
    pub result: &'a ScenarioResult,
    /// Its label.
    pub label: &'a str,
    /// Its target's name, when the section holds several targets.
    pub target: Option<&'a str>,
}

/// The sections: the entries of one scenario against several named targets together, in the
/// order each scenario first ran; any other entry alone.
fn groups<'a>(cx: &'a Context) -> Vec<Group<'a>> {
    let scenarios = &cx.report.scenarios;
    let mut taken = vec![false; scenarios.len()];
    let mut groups = Vec::new();
    for i in 0..scenarios.len() {
        if taken[i] {
            continue;
        }
        taken[i] = true;
        let mut members = vec![i];
        if scenarios[i].target_name.is_some() {
            for j in i + 1..scenarios.len() {
                let target = scenarios[j].target_name.as_deref();
                let new_target =
                    target.is_some() && members.iter().all(|&m| scenarios[m].target_name.as_deref() != target);
                if !taken[j] && new_target && scenarios[j].same_scenario(&scenarios[i]) {
                    taken[j] = true;
                    members.push(j);
                }
            }
        }
        let several = members.len() > 1;
        let label = |m: usize| cx.labels.get(m).map_or(scenarios[m].name.as_str(), String::as_str);
        let name = if several {
            let suffix = scenarios[i].target_name.as_deref().map(|t| format!(" [{t}]")).unwrap_or_default();
            label(i).strip_suffix(&suffix).unwrap_or(label(i)).to_owned()
        } else {
            label(i).to_owned()
        };
        let entries = members
            .into_iter()
            .map(|m| Entry {
                position: m,
                result: &scenarios[m],
                label: label(m),
                target: if several { scenarios[m].target_name.as_deref() } else { None },
            })
            .collect();
        groups.push(Group { index: groups.len(), name, entries });
    }
    groups
}

/// `sha256-…` of `text`, as a Content-Security-Policy names an inline element.
fn csp_hash(text: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, text.as_bytes());
    format!("sha256-{}", base64::engine::general_purpose::STANDARD.encode(digest.as_ref()))
}

/// The Content-Security-Policy of the page: its own inline style and script, inline `data:`
/// images at most, and nothing else.
fn content_security_policy() -> String {
    format!(
        "default-src 'none'; style-src '{}'; script-src '{}'; img-src data:; base-uri 'none'; form-action 'none'",
        csp_hash(STYLE),
        csp_hash(SCRIPT)
    )
}

/// `2026-01-01T12:00:00Z` as `2026-01-01 12:00:00 UTC`.
fn date(rfc3339: &str) -> String {
    match rfc3339.strip_suffix('Z') {
        Some(utc) => format!("{} UTC", utc.replacen('T', " ", 1)),
        None => rfc3339.replacen('T', " ", 1),
    }
}

/// A mark as text: not the emoji of the Markdown output, which a browser without an emoji font
/// (headless ones in CI, many Linux desktops) draws as empty boxes; these are in every text font.
fn glyph(mark: Mark) -> &'static str {
    match mark {
        Mark::Pass => "✓",
        Mark::Warn => "!",
        Mark::Inconclusive => "?",
        Mark::Fail => "✗",
    }
}

/// A mark as a coloured badge, its meaning in its title.
fn mark_span(mark: Mark) -> String {
    let title = match mark {
        Mark::Pass => "passed",
        Mark::Warn => "warning",
        Mark::Inconclusive => "inconclusive",
        Mark::Fail => "failed",
    };
    format!("<span class=\"mark {}\" title=\"{title}\">{}</span>", mark_class(mark), glyph(mark))
}

/// The class of a mark: `pass`, `warn`, `inconclusive`, `fail`.
fn mark_class(mark: Mark) -> &'static str {
    match mark {
        Mark::Pass => "pass",
        Mark::Warn => "warn",
        Mark::Inconclusive => "inconclusive",
        Mark::Fail => "fail",
    }
}

/// The verdict of the run, as the Markdown output's line says it (unescaped: the caller escapes).
fn verdict(cx: &Context) -> (Mark, String) {
    status::run(cx, str::to_owned)
}

/// The page's header: title, run, verdict, notes.
fn header(cx: &Context, out: &mut String) {
    let report = cx.report;
    out.push_str("<header class=\"top\">\n<h1>loadbench report</h1>\n");
    let machine = section::machine(&report.machine);
    out.push_str(&format!(
        "<p class=\"meta\">{} · loadbench {} · {}</p>\n",
        Esc(&date(&report.started_at)),
        Esc(&report.tool.version),
        Esc(&machine)
    ));
    let (mark, text) = verdict(cx);
    out.push_str(&format!(
        "<p class=\"verdict {}\">{} {}</p>\n",
        mark_class(mark),
        mark_span(mark),
        escape::with_code(&text)
    ));
    if report.interrupted {
        out.push_str("<p class=\"banner fail\">The run was interrupted: the scenarios running then are marked, those after it are missing.</p>\n");
    }
    let mut notes: Vec<String> = Vec::new();
    if cx.commits.is_some() {
        // Backticks mark code in the notes: a subject's own would pair with the commits'.
        notes.extend(cx.comparison_title(|subject| subject.replace('`', "'")).map(|title| format!("{title}.")));
    } else if let Some(baseline) = cx.baseline {
        let head = cx.saves_as.map_or_else(|| "This run".to_owned(), |name| format!("`{name}`"));
        notes.push(format!("{head} compared with baseline `{baseline}`."));
    }
    notes.extend(super::runs_note(cx));
    notes.extend(super::comparison_notes(cx));
    if let Some(reference) = super::side_by_side::reference(cx) {
        notes.extend(super::side_by_side::notes(cx, reference));
    }
    notes.extend(cx.notes.iter().cloned());
    if !notes.is_empty() {
        out.push_str("<ul class=\"notes\">\n");
        for note in &notes {
            out.push_str(&format!("<li>{}</li>\n", escape::with_code(note)));
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</header>\n");
}

/// The table of contents: a link to each section, with its mark.
fn contents(cx: &Context, groups: &[Group], out: &mut String) {
    if groups.is_empty() {
        out.push_str("<p class=\"no-chart\">No scenario ran.</p>\n");
        return;
    }
    out.push_str("<nav class=\"toc\" aria-label=\"Scenarios\">\n<h2>Scenarios</h2>\n<ol>\n");
    for group in groups {
        let mark = group.entries.iter().map(|e| status::scenario(cx, e.result).mark).max().unwrap_or(Mark::Pass);
        out.push_str(&format!("<li><a href=\"#s{}\">{} {}</a>", group.index, mark_span(mark), Esc(&group.name)));
        let targets: Vec<&str> = group.entries.iter().filter_map(|e| e.target).collect();
        if !targets.is_empty() {
            out.push_str(&format!(" <span class=\"muted\">against {}</span>", Esc(&targets.join(", "))));
        }
        out.push_str("</li>\n");
    }
    out.push_str("</ol>\n</nav>\n");
}

/// The HTML page of `cx`.
pub fn render(cx: &Context) -> Result<String, String> {
    let groups = groups(cx);
    let mut out = String::with_capacity(64 * 1024);
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n");
    // The policy first, so that it governs everything after it.
    out.push_str(&format!("<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">\n", content_security_policy()));
    out.push_str(
        "<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
    );
    out.push_str(
        "<meta name=\"referrer\" content=\"no-referrer\">\n<meta name=\"generator\" content=\"cargo loadbench\">\n",
    );
    out.push_str(&format!("<title>loadbench report · {}</title>\n", Esc(&date(&cx.report.started_at))));
    out.push_str("<style>");
    out.push_str(STYLE);
    out.push_str("</style>\n</head>\n<body>\n<div class=\"page\">\n");
    header(cx, &mut out);
    contents(cx, &groups, &mut out);
    out.push_str("<main>\n");
    for group in &groups {
        section::render(cx, group, &mut out);
    }
    out.push_str("</main>\n");
    out.push_str(&format!(
        "<footer>Written by cargo loadbench {}. Hover a chart for its values; click a legend entry to hide or show its series.</footer>\n",
        Esc(&cx.report.tool.version)
    ));
    out.push_str("</div>\n<script>");
    out.push_str(SCRIPT);
    out.push_str("</script>\n</body>\n</html>\n");
    Ok(out)
}
