//! Everything that stops `cargo loadbench` before it has results to show, and the exit code each
//! one maps to.

use std::path::PathBuf;

use loadbench::exit_code;

/// A failure that ends the run. `main` prints it as one `error: …` line and exits with
/// [`Error::exit_code`].
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `--manifest-path` names a file that does not exist.
    #[error("manifest not found: {}", .0.display())]
    ManifestNotFound(PathBuf),

    /// `cargo metadata` failed; `message` is cargo's own explanation.
    #[error("cannot read the workspace: {message}")]
    Metadata {
        /// Cargo's error output, without its `error: ` prefix.
        message: String,
    },

    /// No workspace member has a bench target and a dependency on `loadbench-runtime`.
    #[error("no bench targets that depend on loadbench-runtime in {}", .root.display())]
    NoBenchTargets {
        /// The workspace root that was searched.
        root: PathBuf,
    },

    /// `-p SPEC` names no workspace member.
    #[error("package `{spec}` is not a member of the workspace; members: {members}")]
    UnknownPackage {
        /// The spec as given.
        spec: String,
        /// Comma-separated member names.
        members: String,
    },

    /// `-p SPEC` names a member without loadbench bench targets.
    #[error("package `{package}` has no bench targets that depend on loadbench-runtime")]
    PackageWithoutBenches {
        /// The package name.
        package: String,
    },

    /// `--bench NAME` names no bench target of the selected packages.
    #[error("no bench target named `{name}`; available: {available}")]
    UnknownBench {
        /// The name as given.
        name: String,
        /// Comma-separated bench target names.
        available: String,
    },

    /// A program (cargo, a bench binary) could not be started at all.
    #[error("cannot run {program}: {source}")]
    Spawn {
        /// What was being started.
        program: String,
        /// Why it failed.
        #[source]
        source: std::io::Error,
    },

    /// `cargo bench --no-run` failed; cargo has already printed why on stderr.
    #[error("build failed")]
    BuildFailed,

    /// Cargo finished but did not report an executable for a bench target it was asked to build.
    #[error("cargo built no executable for bench target `{bench}` of package `{package}`")]
    MissingExecutable {
        /// The package name.
        package: String,
        /// The bench target name.
        bench: String,
    },

    /// A bench binary wrote a result file this version cannot read.
    #[error("cannot read what {target} reported: {reason}")]
    Protocol {
        /// `package/bench`.
        target: String,
        /// What was wrong with the file.
        reason: String,
    },

    /// The bench targets were built and asked, but none has any scenario.
    #[error("no #[loadbench::scenario] functions in {targets}")]
    NoScenarios {
        /// Comma-separated `package/bench` names.
        targets: String,
    },

    /// The filters match no scenario.
    #[error(transparent)]
    NoMatch(#[from] loadbench::cli::NoMatch),

    /// Temporary files for the bench binaries' results could not be created.
    #[error("cannot create a temporary directory: {0}")]
    TempDir(#[source] std::io::Error),

    /// `[workspace.metadata.loadbench]` (or the package's) does not parse or is out of range.
    #[error("invalid [{table}.metadata.loadbench] in {}: {reason}", .manifest.display())]
    Settings {
        /// `workspace` or `package`.
        table: &'static str,
        /// The manifest that holds it.
        manifest: PathBuf,
        /// What is wrong.
        reason: String,
    },

    /// `--baseline NAME` names a baseline that was never saved.
    #[error("no baseline named `{name}` in {}; save one with --save-baseline {name}", .dir.display())]
    BaselineMissing {
        /// The name.
        name: String,
        /// Where baselines are kept.
        dir: PathBuf,
    },

    /// The baseline's file is missing, corrupt, or of another schema.
    #[error("cannot read baseline `{name}` from {}: {reason}", .path.display())]
    BaselineUnreadable {
        /// The name.
        name: String,
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },

    /// The `--target`s do not go together (see [`crate::targets::Targets`]).
    #[error("--target: {0}")]
    Targets(String),

    /// A TLS file (`--cacert`, `--cert`, `--key`) cannot be used.
    #[error(transparent)]
    Tls(#[from] loadbench::http::TlsSetupError),

    /// The request of `cargo loadbench url` cannot be built.
    #[error(transparent)]
    Request(#[from] loadbench::oneshot::RequestError),

    /// A flag that only applies to a run was given to `cargo loadbench report`.
    #[error("{flag} only applies to a run; `cargo loadbench report` renders saved results and takes no {flag}")]
    NotForReport {
        /// The flag, such as `--runs`.
        flag: &'static str,
    },

    /// A file given to `cargo loadbench report` is not a results document this build reads.
    #[error("cannot read results {}: {reason}", .path.display())]
    SavedResults {
        /// The file as given.
        path: PathBuf,
        /// Why, in a few words.
        reason: String,
    },

    /// A file given to `cargo loadbench report` or `merge` holds figures no run could have
    /// written (see [`crate::plausible`]).
    #[error("{}: {field}: {what}", .path.display())]
    Implausible {
        /// The file as given.
        path: PathBuf,
        /// The field, as a JSON path.
        field: String,
        /// What is wrong with it.
        what: String,
    },

    /// A flag about a workspace's scenarios was given to `cargo loadbench url`.
    #[error("{flag} selects a workspace's scenarios; `cargo loadbench url` sends one request and takes no {flag}")]
    NotForUrl {
        /// The flag, such as `--bench`.
        flag: &'static str,
    },

    /// `cargo loadbench url --pipeline D` without `--connections`: its users each own a
    /// connection, with one request in flight on it.
    #[error(
        "--pipeline needs --connections with `cargo loadbench url`: each virtual user has one request in flight, so only users sharing connections can pipeline (TechEmpower's plaintext: -c 256 --connections 16 --pipeline 16)"
    )]
    PipelineWithoutConnections,

    /// `cargo loadbench url` was given a bare path and no `--target`s to send it to.
    #[error(
        "`{path}` is a path without a server: give a full URL such as http://127.0.0.1:8080{path}, or two or more --target NAME=URL to send it to"
    )]
    PathWithoutTargets {
        /// The path as given.
        path: String,
    },

    /// A `--threshold SCENARIO:…` names a scenario that is not selected.
    #[error("--threshold `{threshold}` names no selected scenario; selected: {selected}")]
    ThresholdScenario {
        /// The threshold as given.
        threshold: String,
        /// The selected scenario names.
        selected: String,
    },

    /// The files given to `cargo loadbench merge` are not every shard of one run, or cannot be
    /// merged exactly (boxed: it names two files, and every `Result` here carries its size).
    #[error(transparent)]
    Merge(Box<crate::merge::MergeError>),

    /// A flag of `cargo loadbench` that `kube` has no use for: the bench binary's go after `--`.
    #[error(
        "{flag} does not apply here: the bench binary's flags go after `--` in `cargo loadbench kube job … -- --target URL FILTER`, the merged results' to `kube collect`"
    )]
    NotForKube {
        /// The flag, such as `--runs`.
        flag: &'static str,
    },

    /// `kube` options that do not go together, or a Job that is not a loadbench run.
    #[error("{0}")]
    KubeOptions(String),

    /// kubectl is not installed (nor where `LOADBENCH_KUBECTL` says): `kube job --apply` and
    /// `kube collect` need it.
    #[error("cannot run `{program}`: not found; install kubectl, or name it with LOADBENCH_KUBECTL")]
    KubectlMissing {
        /// The program that was looked for.
        program: String,
    },

    /// kubectl ran and failed; `message` is its own last line.
    #[error("`{command}` failed: {message}")]
    Kubectl {
        /// The command line, as a user would type it.
        command: String,
        /// kubectl's explanation.
        message: String,
    },

    /// A pod's log holds results that cannot be taken (cut off, twice, another shard's).
    #[error("cannot take the results from the log of pod {pod}: {reason}")]
    KubeResults {
        /// The pod's name.
        pod: String,
        /// What is wrong.
        reason: String,
    },

    /// `kube collect --timeout` passed before the Job finished.
    #[error(
        "job {name} did not finish within {timeout}; run `cargo loadbench kube collect` again later, or with a longer --timeout"
    )]
    KubeTimeout {
        /// The Job's name.
        name: String,
        /// The timeout, as a flag takes it.
        timeout: String,
    },

    /// The Job failed or some shard left no results: the load did not all run.
    #[error("{0}")]
    KubeIncomplete(String),

    /// `cargo loadbench ab` cannot start: a revision that names no commit, a path outside the
    /// repository, no crate that uses loadbench, git or the toolchain missing.
    #[error("{0}")]
    Ab(String),

    /// `cargo loadbench ab`: a side could not be checked out, built or served.
    #[error("{side}: {reason}")]
    Side {
        /// `base 1a2b3c4 (Add a cache)`.
        side: String,
        /// Why, in a few words (a service's last lines may follow on lines of their own).
        reason: String,
    },

    /// A flag of `cargo loadbench` that `ab` does not take.
    #[error("{flag} does not apply to `cargo loadbench ab`: {why}")]
    NotForAb {
        /// The flag, such as `--target`.
        flag: &'static str,
        /// What to do instead.
        why: &'static str,
    },

    /// A result or baseline file could not be written where it was asked for; found before the
    /// run, so that a typo costs no load-test time.
    #[error("cannot write {}: {reason}", .path.display())]
    Output {
        /// The file asked for.
        path: PathBuf,
        /// Why it cannot be written.
        reason: String,
    },
}

impl Error {
    /// The process exit code for this error: usage, configuration or build errors, which the
    /// documented exit codes group under one number, but for a distributed run whose load did not
    /// all run.
    pub fn exit_code(&self) -> u8 {
        match self {
            // Part of the load did not run, as when a scenario could not.
            Error::KubeIncomplete(_) => exit_code::SCENARIO_FAILED,
            // A side of an A/B comparison could not be built or served: nothing to compare.
            Error::Side { .. } => exit_code::SCENARIO_FAILED,
            _ => exit_code::USAGE,
        }
    }

    /// Whether this error only says that there is nothing to run: no bench target using
    /// loadbench (in the workspace, the `-p` package or under the `--bench` name), no scenario in
    /// them, or none the filters select. `--allow-no-scenarios` turns these into a note.
    pub fn is_no_scenarios(&self) -> bool {
        matches!(
            self,
            Error::NoBenchTargets { .. }
                | Error::UnknownPackage { .. }
                | Error::PackageWithoutBenches { .. }
                | Error::UnknownBench { .. }
                | Error::NoScenarios { .. }
                | Error::NoMatch(_)
        )
    }
}

impl From<crate::merge::MergeError> for Error {
    fn from(err: crate::merge::MergeError) -> Self {
        Error::Merge(Box::new(err))
    }
}

impl From<cargo_metadata::Error> for Error {
    fn from(err: cargo_metadata::Error) -> Self {
        let message = match err {
            // Cargo's explanation is the useful part; drop its own `error: ` so the line does
            // not read `error: …: error: …`.
            cargo_metadata::Error::CargoMetadata { stderr } => {
                let text = stderr.trim();
                text.strip_prefix("error: ").unwrap_or(text).to_owned()
            }
            other => other.to_string(),
        };
        Error::Metadata { message }
    }
}
