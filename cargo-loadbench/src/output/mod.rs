//! The formats results can be written in: the terminal table, the versioned JSON, CSV, Markdown
//! (for pull-request comments and GitHub's job summary), JUnit XML (which CI systems show as
//! test results) and a self-contained HTML page with charts.

mod comparison;
mod csv;
mod html;
mod junit;
mod markdown;
mod side_by_side;
mod status;
mod text;

use std::io::Write as _;
use std::path::{Path, PathBuf};

use cargo_loadbench::{Commits, ComparedMetric, MetricChange, Results, ScenarioResult, ScenarioVerdict};
use loadbench::report::LatencyColumns;

#[cfg(test)]
use comparison::comparison_row;
use comparison::{comparison_notes, comparison_rows, noise_bands, old_to_new_rows, verdict_cell};

/// An output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// The table, as printed on a terminal.
    Table,
    /// The versioned results document (`loadbench::report::Results`).
    Json,
    /// One row per scenario, with a header row.
    Csv,
    /// GitHub-flavoured Markdown for pull-request comments and job summaries: a verdict line,
    /// the table with ✅/⚠️/❌ per row, the details in a collapsible block.
    Markdown,
    /// JUnit XML: a test suite per scenario, with a test case for it and for each of its steps and
    /// named requests; a failed threshold or gating regression a failure naming the causes.
    Junit,
    /// One self-contained HTML page with charts: throughput, latency over time, the latency
    /// percentile spectrum, steps, errors, runs, watched servers; no script or font from the
    /// network.
    Html,
}

impl Format {
    const ALL: [Format; 6] = [Format::Table, Format::Json, Format::Csv, Format::Markdown, Format::Junit, Format::Html];

    fn name(self) -> &'static str {
        match self {
            Format::Table => "table",
            Format::Json => "json",
            Format::Csv => "csv",
            Format::Markdown => "markdown",
            Format::Junit => "junit",
            Format::Html => "html",
        }
    }

    /// The format a file's extension names.
    fn from_extension(path: &Path) -> Option<Format> {
        match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
            "txt" => Some(Format::Table),
            "json" => Some(Format::Json),
            "csv" => Some(Format::Csv),
            "md" | "markdown" => Some(Format::Markdown),
            "xml" => Some(Format::Junit),
            "html" | "htm" => Some(Format::Html),
            _ => None,
        }
    }
}

/// One `--output [FORMAT:]FILE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputSpec {
    /// What to write.
    pub format: Format,
    /// Where.
    pub path: PathBuf,
}

impl OutputSpec {
    /// Parses `junit:results.xml` or `results.xml`.
    pub fn parse(text: &str) -> Result<OutputSpec, String> {
        if let Some((prefix, path)) = text.split_once(':')
            && let Some(format) = Format::ALL.into_iter().find(|f| f.name() == prefix)
        {
            if path.is_empty() {
                return Err(format!("`{text}` names no file after `{prefix}:`"));
            }
            return Ok(OutputSpec { format, path: PathBuf::from(path) });
        }
        let path = PathBuf::from(text);
        match Format::from_extension(&path) {
            Some(format) => Ok(OutputSpec { format, path }),
            None => Err(format!(
                "cannot tell the format of `{text}`: name it .json, .csv, .md, .xml (JUnit), .html or .txt (table), \
                 or write FORMAT:FILE such as junit:{text}"
            )),
        }
    }
}

/// Each scenario's verdict as every output marks it ([`status::scenario`]), for the JSON.
pub fn verdicts(cx: &Context) -> Vec<ScenarioVerdict> {
    cx.report
        .scenarios
        .iter()
        .map(|s| {
            let st = status::scenario(cx, s);
            ScenarioVerdict { status: st.mark.status(), reasons: st.why }
        })
        .collect()
}

/// What every format needs besides the report.
#[derive(Debug)]
pub struct Context<'a> {
    /// The merged results, with threshold outcomes and comparisons filled in.
    pub report: &'a Results,
    /// The table's name for each scenario, qualified by target only when several ran.
    pub labels: Vec<String>,
    /// `--runs`.
    pub runs: u32,
    /// `--baseline NAME`, when comparing.
    pub baseline: Option<&'a str>,
    /// Whether a regression fails the run.
    pub fail_on_regression: bool,
    /// Further lines worth reading, such as a baseline recorded on another machine.
    pub notes: Vec<String>,
    /// The latency columns of the results table (`--percentiles`).
    pub columns: LatencyColumns,
    /// Whether a warning that a scenario measured nothing fails the run (`--fail-on-warning`).
    pub fail_on_warning: bool,
    /// `--allow-failures`: a scenario with no successful iteration is a warning, not a failure.
    pub allow_failures: bool,
    /// `--allow-inconclusive`: an inconclusive scenario is still marked so, but does not fail the
    /// run (JUnit then notes it rather than reporting an error).
    pub allow_inconclusive: bool,
    /// `--save-baseline NAME`: the name this run is saved as, which names it in the Markdown
    /// heading when it is compared with another baseline.
    pub saves_as: Option<&'a str>,
    /// The HTML reports written beside the other outputs, which the Markdown names: a pull
    /// request's comment or GitHub's summary page cannot show them.
    pub html_reports: Vec<PathBuf>,
    /// With `cargo loadbench ab`: the two commits compared, as the comparisons name them.
    pub commits: Option<&'a Commits>,
}

impl<'a> Context<'a> {
    /// The context of `report`.
    pub fn new(report: &'a Results, runs: u32, baseline: Option<&'a str>, fail_on_regression: bool) -> Context<'a> {
        // Results of `cargo loadbench ab` say what they compare, whether just measured or read
        // back by `cargo loadbench report`.
        let commits = report.scenarios.iter().find_map(|s| s.comparison.as_ref()?.commits.as_ref());
        Context {
            report,
            labels: labels(&report.scenarios),
            runs,
            baseline: baseline.or(commits.map(|c| c.base.short.as_str())),
            fail_on_regression,
            notes: Vec::new(),
            columns: LatencyColumns::default(),
            fail_on_warning: false,
            allow_failures: false,
            allow_inconclusive: false,
            saves_as: None,
            html_reports: Vec::new(),
            commits,
        }
    }

    fn scenarios(&self) -> impl Iterator<Item = (&'a ScenarioResult, &str)> {
        self.report.scenarios.iter().zip(self.labels.iter().map(String::as_str))
    }
}

/// The name shown for each scenario: qualified by bench target (and package) only when the
/// report spans several, so the common single-target table stays narrow; and followed by the
/// name of the server it ran against (`hello [fast]`) when it ran against several
/// (`--target NAME=URL`, repeated).
pub fn labels(scenarios: &[ScenarioResult]) -> Vec<String> {
    let distinct = |key: fn(&ScenarioResult) -> Option<&str>| {
        let mut values: Vec<Option<&str>> = scenarios.iter().map(key).collect();
        values.sort_unstable();
        values.dedup();
        values.len() > 1
    };
    let by_package = distinct(|s| s.package.as_deref());
    let by_bench = by_package || distinct(|s| s.bench.as_deref());
    let by_target = distinct(|s| s.target_name.as_deref());
    scenarios
        .iter()
        .map(|s| {
            let mut label = String::new();
            for (part, wanted) in [(&s.package, by_package), (&s.bench, by_bench)] {
                if let (Some(part), true) = (part, wanted) {
                    label.push_str(part);
                    label.push('/');
                }
            }
            label.push_str(&s.name);
            if let (Some(target), true) = (&s.target_name, by_target) {
                label.push_str(" [");
                label.push_str(target);
                label.push(']');
            }
            label
        })
        .collect()
}

/// `report` in `format`.
pub fn render(format: Format, cx: &Context) -> Result<String, String> {
    match format {
        Format::Table => Ok(text::render(cx)),
        Format::Json => serde_json::to_string_pretty(cx.report).map(|json| json + "\n").map_err(|e| e.to_string()),
        Format::Csv => csv::render(cx),
        Format::Markdown => Ok(markdown::render(cx)),
        Format::Junit => junit::render(cx),
        Format::Html => html::render(cx),
    }
}

/// Appends `markdown` to the file GitHub Actions names in `GITHUB_STEP_SUMMARY`, which it shows
/// on the run's summary page. Appends, because earlier steps may have written there too.
pub fn append(path: &Path, markdown: &str) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
    file.write_all(b"\n")?;
    file.write_all(markdown.as_bytes())
}

/// The line under the table when scenarios ran several times.
fn runs_note(cx: &Context) -> Option<String> {
    (cx.runs > 1).then(|| {
        format!(
            "{} runs of each scenario, in rounds: iterations, failed, responses and bytes are totals, req/s is the \
             responses over the runs' time; latencies are medians across runs.",
            cx.runs
        )
    })
}

/// The thresholds of a scenario in one cell: `met`, `failed: …`, or `-` when it has none.
fn thresholds_cell(scenario: &ScenarioResult) -> String {
    if scenario.thresholds.is_empty() {
        return "-".to_owned();
    }
    let failed: Vec<String> = scenario.thresholds.iter().filter(|o| !o.passed).map(ToString::to_string).collect();
    if failed.is_empty() { "met".to_owned() } else { format!("failed: {}", failed.join(", ")) }
}

/// The metric change of `metric`, if compared.
fn change_of(scenario: &ScenarioResult, metric: ComparedMetric) -> Option<&MetricChange> {
    scenario.comparison.as_ref()?.metrics.iter().find(|m| m.metric == metric)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use cargo_loadbench::RunSample;
    use loadbench::report::check;
    use loadbench::report::{ConfigReport, LatencyReport, ScenarioReport};
    use loadbench::threshold::Threshold;

    #[test]
    fn a_threshold_on_a_row_is_listed_with_its_name_in_every_output() {
        let mut report = sample_report();
        let hello = &mut report.scenarios[0];
        hello.config.row_thresholds = vec!["{login}: p99 < 1s".parse().unwrap_or_else(|e| panic!("{e}"))];
        check::judge(hello);
        let missed = "{login}: p99 < 1s (no step or named request `login` was recorded)";
        assert_eq!(hello.thresholds.last().map(ToString::to_string).as_deref(), Some(missed));
        let cx = Context::new(&report, 3, Some("main"), false);
        let markdown = markdown::render(&cx);
        let escaped = r"{login}: p99 \< 1s (no step or named request \`login\` was recorded)";
        assert!(markdown.contains(&format!("hello ({escaped})")), "the verdict line: {markdown}");
        let xml = junit::render(&cx).unwrap_or_else(|e| panic!("{e}"));
        assert!(xml.contains("threshold failed: {login}: p99 &lt; 1s (no step or named request `login`"), "{xml}");
        let html = html::render(&cx).unwrap_or_else(|e| panic!("{e}"));
        assert!(html.contains("{login}: p99 &lt; 1s (no step or named request"), "html lists it");
    }

    #[test]
    fn output_formats_come_from_a_prefix_or_the_extension() {
        let spec = |text: &str| OutputSpec::parse(text).map(|o| (o.format, o.path.display().to_string()));
        assert_eq!(spec("r.json"), Ok((Format::Json, "r.json".into())));
        assert_eq!(spec("out/r.CSV"), Ok((Format::Csv, "out/r.CSV".into())));
        assert_eq!(spec("summary.md"), Ok((Format::Markdown, "summary.md".into())));
        assert_eq!(spec("junit.xml"), Ok((Format::Junit, "junit.xml".into())));
        assert_eq!(spec("table.txt"), Ok((Format::Table, "table.txt".into())));
        assert_eq!(spec("out/report.html"), Ok((Format::Html, "out/report.html".into())));
        assert_eq!(spec("report.HTM"), Ok((Format::Html, "report.HTM".into())));
        assert_eq!(spec("html:report"), Ok((Format::Html, "report".into())));
        assert_eq!(spec("junit:results"), Ok((Format::Junit, "results".into())));
        assert_eq!(spec("markdown:C:/x.txt"), Ok((Format::Markdown, "C:/x.txt".into())));
        assert_eq!(spec("C:/x.json"), Ok((Format::Json, "C:/x.json".into())), "a drive letter is not a format");
        assert!(spec("results").is_err_and(|e| e.starts_with("cannot tell the format of `results`")));
        assert_eq!(spec("json:"), Err("`json:` names no file after `json:`".to_owned()));
    }

    /// A report with three scenarios: `hello` regressed against `main` and met its threshold,
    /// `guarded` missed one, `fresh` is new.
    /// The first scenario of [`sample_report`] against two targets, `fast` and a copy named
    /// `second`, compared with the first.
    pub(crate) fn two_targets_report(second: &str) -> Results {
        let mut report = sample_report();
        report.scenarios.truncate(1);
        report.scenarios[0].comparison = None;
        report.scenarios[0].target_name = Some("fast".into());
        let mut twin = report.scenarios[0].clone();
        twin.target_name = Some(second.into());
        report.scenarios.push(twin);
        crate::targets::compare_with_first(&mut report, "fast", 0.05);
        report
    }

    pub(crate) fn sample_report() -> Results {
        let config = ConfigReport {
            concurrency: 5,
            count: Some(100),
            timeout_ms: 1_000,
            target: Some("http://127.0.0.1:1".into()),
            ..ConfigReport::default()
        };
        let latency = |p50: f64| LatencyReport {
            mean: p50,
            stdev: 1.0,
            min: p50,
            p50,
            p90: p50,
            p95: p50,
            p99: p50 * 2.0,
            p99_9: p50 * 2.0,
            max: p50 * 3.0,
            percentiles: Default::default(),
            spectrum: Vec::new(),
            histogram: None,
        };
        let scenario = |name: &str, rps: f64, p50: f64| {
            let mut s = ScenarioResult::new(ScenarioReport::not_started(name, config.clone()));
            s.package = Some("shop".into());
            s.bench = Some("api".into());
            s.iterations = 300;
            s.ok = 300;
            s.duration_us = 1_500_000;
            s.rps = rps;
            s.latency_us = Some(latency(p50));
            s.http.bytes_received = 6_000;
            // Two requests an iteration.
            s.http.responses = 600;
            s.runs = vec![RunSample::of(&s); 3];
            s
        };
        let threshold = |text: &str| -> Threshold { text.parse().unwrap_or_else(|e| panic!("{e}")) };
        let mut hello = scenario("hello", 245.0, 20_300.0);
        hello.config.thresholds = vec![threshold("error_rate<0.01")];
        hello.thresholds = check::evaluate(&hello);
        let old = scenario("hello", 1_000.0, 200.0);
        hello.comparison = Some(crate::compare::compare(&hello, Some(&old), "main", 0.05));
        let mut guarded = scenario("guarded|pipe", 100.0, 20_000.0);
        guarded.config.thresholds = vec![threshold("p50<10ms")];
        guarded.thresholds = check::evaluate(&guarded);
        guarded.comparison = Some(crate::compare::compare(&guarded, Some(&guarded.clone()), "main", 0.05));
        let mut fresh = scenario("fresh", 50.0, 100.0);
        fresh.comparison = Some(crate::compare::compare(&fresh, None, "main", 0.05));
        let mut report = Results::new(std::time::SystemTime::UNIX_EPOCH);
        report.scenarios = vec![hello, guarded, fresh];
        report
    }

    #[test]
    fn the_comparison_row_shows_old_new_and_change() {
        let report = sample_report();
        let row = comparison_row(&report.scenarios[0], "hello").unwrap_or_default();
        assert_eq!(
            row,
            [
                "hello",
                "1,000",
                "245",
                "-75.5%",
                "200µs",
                "20.3ms",
                "+10,050%",
                "400µs",
                "40.6ms",
                "+10,050%",
                "regressed (it/s, p50, p99)"
            ]
        );
        assert_eq!(comparison_row(&report.scenarios[1], "g").unwrap_or_default()[10], "no change");
        assert_eq!(
            comparison_row(&report.scenarios[2], "f").unwrap_or_default()[1..],
            ["-", "-", "-", "-", "-", "-", "-", "-", "-", "new"]
        );
    }
}
