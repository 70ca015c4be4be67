//! The command line of `cargo loadbench report`.

use std::path::PathBuf;

const REPORT_AFTER_HELP: &str = "\
Reads the JSON that `cargo loadbench --output results.json` (or --json) wrote and renders it
again, running nothing: `cargo loadbench report results.json --output report.html` makes the
HTML report of a CI artifact. The output, threshold and baseline options of `cargo loadbench`
apply, as after a run: --threshold adds conditions, --baseline NAME compares, --save-baseline
NAME saves the results as a baseline.

Several files are shown together, in the order given. A scenario found in more than one file
(the same run on two commits, say) is shown once per file, named after the file, and its
curves share the charts of the HTML report.

Exit codes: 0 rendered, 1 a gate failed in the results (a threshold, a regression with
--fail-on-regression; never with --no-gate), 2 a file that cannot be read or is not a results
document of this version, a flag that only applies to a run, or an output that cannot be
written.";

/// Arguments of `cargo loadbench report`.
#[derive(Debug, clap::Args)]
#[command(after_help = REPORT_AFTER_HELP)]
pub struct ReportArgs {
    /// Results files written by `cargo loadbench --output FILE.json` or `--json FILE`
    #[arg(value_name = "RESULTS.json", required = true)]
    pub files: Vec<PathBuf>,
}
