//! The document a run writes: its header (the schema version, the tool, the machine, the start)
//! around one entry per scenario, and the list of scenarios a bench binary holds (`--list`).
//!
//! These types are the contract between a bench binary, `cargo loadbench` and any tool that reads
//! the files; they change only together with [`SCHEMA_VERSION`].

use serde::{Deserialize, Serialize};

use super::scenario::{ConfigReport, ScenarioReport, rfc3339};

/// Version of the JSON layout of [`RunReport`] and [`ScenarioList`].
///
/// Bumped on any change that an older reader would misread; readers should refuse a version they
/// do not know rather than guess.
pub const SCHEMA_VERSION: u32 = 2;

/// The oldest [`SCHEMA_VERSION`] this build still reads. Version 2 only added fields (each with a
/// default) and the meaning of none changed, so a version 1 file (a baseline saved before) reads
/// as a version 2 one whose new fields are absent.
pub const OLDEST_READABLE_VERSION: u32 = 1;

/// Everything one run produced: one entry per scenario, plus where and when it ran.
///
/// A bench binary's entries are [`ScenarioReport`]s. `cargo loadbench` writes the same document
/// with entries of its own type, which add what only it knows (the bench target, comparisons with
/// a baseline) to each scenario's report; hence the type parameter.
///
/// ```
/// let json = r#"{"schema_version":2,"tool":{"name":"loadbench","version":"0.1.0"},
///   "started_at":"2026-01-01T00:00:00Z","machine":{"os":"linux","arch":"x86_64","cpus":2,
///   "hostname":null,"kernel":null},"scenarios":[]}"#;
/// let report: loadbench::report::RunReport = serde_json::from_str(json).unwrap();
/// assert_eq!(report.schema_version, loadbench::report::SCHEMA_VERSION);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunReport<S = ScenarioReport> {
    /// Always [`SCHEMA_VERSION`] when written by this version.
    pub schema_version: u32,
    /// The program that wrote the file.
    pub tool: ToolInfo,
    /// Wall-clock start of the run, RFC 3339 in UTC.
    pub started_at: String,
    /// The machine the generator ran on.
    pub machine: MachineInfo,
    /// True when a signal (Ctrl-C, SIGTERM) stopped the run: the scenarios running then are
    /// marked `interrupted` too, and those after it are missing.
    #[serde(default)]
    pub interrupted: bool,
    /// With `--shard I/N`: which part of a distributed run this document holds; absent otherwise
    /// (`cargo loadbench merge` makes one document of all the parts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardReport>,
    /// With `--start-at TIME`: the instant the run waited for, and how late it started after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<StartReport>,
    /// With `--run-id ID`: the name of the run this document is part of (`kube job` gives its
    /// shards the Job's name), which every shard of one run shares; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// How `cargo loadbench` judged the run: the settings its verdict was made with, so that
    /// `cargo loadbench report` renders the same verdict from the file; absent in a bench
    /// binary's document and in files from before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<GateReport>,
    /// One entry per scenario, in the order they ran.
    pub scenarios: Vec<S>,
}

/// The settings a run's verdict was made with ([`RunReport::gate`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GateReport {
    /// What the run was compared with: the baseline's name (`--baseline NAME`); absent when it was
    /// compared with nothing or, under `cargo loadbench ab`, with a commit (the comparisons name it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<String>,
    /// Whether a regression failed the run.
    pub fail_on_regression: bool,
    /// Whether a scenario that measured nothing by the warnings' rules failed it (`--fail-on-warning`).
    pub fail_on_warning: bool,
    /// Whether an inconclusive run exited 0 (`--allow-inconclusive`).
    pub allow_inconclusive: bool,
    /// Whether a scenario with no successful iteration was allowed (`--allow-failures`).
    pub allow_failures: bool,
    /// Whether nothing failed the run (`--no-gate`).
    pub no_gate: bool,
}

/// Which part of a distributed run a document holds (`--shard I/N`): shard `index` (from 0) of
/// `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardReport {
    /// From 0 to `count - 1`: Kubernetes' `JOB_COMPLETION_INDEX`.
    pub index: u32,
    /// How many shards the run has.
    pub count: u32,
}

/// The instant a run waited for (`--start-at`) and how late it started after it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StartReport {
    /// The instant asked for, RFC 3339 in UTC with milliseconds.
    pub at: String,
    /// How long after it the run started, in milliseconds (0 when on time).
    pub late_ms: u64,
}

impl<S> RunReport<S> {
    /// An empty report of this tool on this machine, started at `started_at`.
    pub fn new(started_at: std::time::SystemTime) -> RunReport<S> {
        RunReport {
            schema_version: SCHEMA_VERSION,
            tool: ToolInfo { name: "loadbench".into(), version: env!("CARGO_PKG_VERSION").into() },
            started_at: rfc3339(started_at),
            machine: MachineInfo::current(),
            interrupted: false,
            shard: None,
            start: None,
            run_id: None,
            gate: None,
            scenarios: Vec::new(),
        }
    }

    /// The same header with `scenarios` as its entries.
    pub fn with_scenarios<T>(self, scenarios: Vec<T>) -> RunReport<T> {
        RunReport {
            schema_version: self.schema_version,
            tool: self.tool,
            started_at: self.started_at,
            machine: self.machine,
            interrupted: self.interrupted,
            shard: self.shard,
            start: self.start,
            run_id: self.run_id,
            gate: self.gate,
            scenarios,
        }
    }
}

/// Name and version of the writer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolInfo {
    /// `loadbench`.
    pub name: String,
    /// The crate version of the runtime that measured.
    pub version: String,
}

/// A description of the generator's machine, so results from different machines are not
/// compared unknowingly.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MachineInfo {
    /// `std::env::consts::OS`.
    pub os: String,
    /// `std::env::consts::ARCH`.
    pub arch: String,
    /// Logical CPUs available to the process.
    pub cpus: usize,
    /// Host name, when it could be read.
    pub hostname: Option<String>,
    /// Kernel release, when it could be read.
    pub kernel: Option<String>,
}

impl MachineInfo {
    /// The machine this process runs on.
    pub fn current() -> MachineInfo {
        let read =
            |path: &str| std::fs::read_to_string(path).ok().map(|s| s.trim().to_owned()).filter(|s| !s.is_empty());
        MachineInfo {
            os: std::env::consts::OS.to_owned(),
            arch: std::env::consts::ARCH.to_owned(),
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
            hostname: read("/proc/sys/kernel/hostname"),
            kernel: read("/proc/sys/kernel/osrelease"),
        }
    }
}

/// The scenarios a bench binary holds, as `--list` writes them for `cargo loadbench`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScenarioList {
    /// Always [`SCHEMA_VERSION`] when written by this version.
    pub schema_version: u32,
    /// The scenarios, sorted by name.
    pub scenarios: Vec<ScenarioInfo>,
}

/// One registered scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScenarioInfo {
    /// The scenario's name.
    pub name: String,
    /// Rust module that defines it.
    pub module_path: String,
    /// Source file that defines it.
    pub file: String,
    /// Line of the attribute.
    pub line: u32,
    /// The load from the attribute (before command-line overrides).
    pub config: ConfigReport,
}
