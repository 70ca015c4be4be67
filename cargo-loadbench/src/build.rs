//! Builds the bench targets with `cargo bench --no-run` and finds their executables.

use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use cargo_metadata::{Message, TargetKind};

use crate::discover::BenchTarget;
use crate::error::Error;
use crate::toolchain::Toolchain;

/// A built bench binary.
#[derive(Debug, Clone)]
pub struct Executable {
    /// The target it was built from.
    pub target: BenchTarget,
    /// The binary, under `target/release/deps/`.
    pub path: PathBuf,
}

#[cfg(test)]
impl Executable {
    /// A made-up built binary of bench target `bench` in package `shop`, for tests of what runs
    /// it.
    pub(crate) fn example(bench: &str) -> Executable {
        let target = BenchTarget {
            package: "shop".into(),
            package_id: cargo_metadata::PackageId { repr: format!("shop {bench}") },
            bench: bench.into(),
            package_root: PathBuf::from("/shop"),
            source: PathBuf::from(format!("/shop/benches/{bench}.rs")),
        };
        Executable { target, path: PathBuf::from(format!("/bin/{bench}")) }
    }
}

/// Builds `targets` in one `cargo bench --no-run` and returns their executables, in the order of
/// `targets`.
///
/// `cargo bench` rather than `cargo build --benches`: the latter uses the dev profile, so the
/// load generator would run unoptimized. Cargo's progress and compiler errors go straight to our
/// stderr, exactly as cargo prints them; only the JSON messages on stdout are read here.
pub fn build(manifest_path: Option<&Path>, targets: &[BenchTarget]) -> Result<Vec<Executable>, Error> {
    build_with(&Toolchain::running(), manifest_path, targets)
}

/// [`build`] with `toolchain`'s cargo.
pub fn build_with(
    toolchain: &Toolchain,
    manifest_path: Option<&Path>,
    targets: &[BenchTarget],
) -> Result<Vec<Executable>, Error> {
    let mut command = toolchain.command();
    command.args(["bench", "--no-run", "--message-format=json-render-diagnostics"]);
    // Started by `cargo run` (the repository's main command), this process carries the
    // variables of cargo-loadbench's own package; the bench build must not see them.
    loadbench::cli::forget_the_running_package(&mut command);
    if let Some(path) = manifest_path {
        command.arg("--manifest-path").arg(path);
    }
    // Cargo applies every `--bench` to every `-p` and builds the pairs that exist, which is
    // exactly the selection: discovery only narrows by package and by bench name.
    for package in unique(targets.iter().map(|t| t.package.as_str())) {
        command.args(["-p", package]);
    }
    for bench in unique(targets.iter().map(|t| t.bench.as_str())) {
        command.args(["--bench", bench]);
    }
    command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::inherit());

    let mut child = command.spawn().map_err(|source| Error::Spawn { program: "cargo bench".into(), source })?;
    let mut paths: Vec<Option<PathBuf>> = vec![None; targets.len()];
    if let Some(stdout) = child.stdout.take() {
        // Read to the end before waiting: cargo blocks once the pipe is full, so waiting first
        // could deadlock on a large build.
        for message in Message::parse_stream(BufReader::new(stdout)) {
            // Only a failed read ends up here (unparsable lines arrive as `TextLine`); dropping
            // the pipe then makes cargo stop instead of blocking, and its exit status tells.
            let Ok(message) = message else { break };
            if let Message::CompilerArtifact(artifact) = message
                && artifact.target.is_kind(TargetKind::Bench)
                && let Some(executable) = artifact.executable
                && let Some(i) =
                    targets.iter().position(|t| t.package_id == artifact.package_id && t.bench == artifact.target.name)
            {
                paths[i] = Some(executable.into_std_path_buf());
            }
        }
    }
    let status = child.wait().map_err(|source| Error::Spawn { program: "cargo bench".into(), source })?;
    if !status.success() {
        return Err(Error::BuildFailed);
    }

    targets
        .iter()
        .zip(paths)
        .map(|(target, path)| match path {
            Some(path) => Ok(Executable { target: target.clone(), path }),
            None => Err(Error::MissingExecutable { package: target.package.clone(), bench: target.bench.clone() }),
        })
        .collect()
}

/// The distinct items, in first-seen order.
fn unique<'a>(items: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut seen = Vec::new();
    for item in items {
        if !seen.contains(&item) {
            seen.push(item);
        }
    }
    seen
}
