//! Which bench targets to build: workspace members that depend on `loadbench-runtime`, narrowed
//! by `-p` and `--bench`.

use std::fmt;
use std::path::{Path, PathBuf};

use cargo_metadata::{DependencyKind, Metadata, Package, PackageId, TargetKind};

use crate::error::Error;
use crate::settings::Settings;
use crate::toolchain::Toolchain;

/// The package users depend on (its library is named `loadbench`).
pub const RUNTIME_PACKAGE: &str = "loadbench-runtime";

/// One bench target of a workspace member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BenchTarget {
    /// The package name.
    pub package: String,
    /// The package's id, to match cargo's build messages to this target.
    pub package_id: PackageId,
    /// The bench target name (`[[bench]] name`).
    pub bench: String,
    /// The directory holding the package's `Cargo.toml`; bench binaries run there, as under
    /// `cargo bench`, so relative paths in scenarios mean the same thing.
    pub package_root: PathBuf,
    /// The bench target's root source file (`benches/api.rs`), read only to explain a target
    /// that is set up wrong ([`crate::mistakes`]).
    pub source: PathBuf,
}

impl fmt::Display for BenchTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.package, self.bench)
    }
}

/// What `cargo loadbench` needs to know about the workspace.
#[derive(Debug, Clone)]
pub struct Workspace {
    /// The selected loadbench bench targets, in `cargo metadata`'s order (packages as it lists
    /// them, each package's bench targets as its manifest declares them); never empty.
    pub targets: Vec<BenchTarget>,
    /// Cargo's target directory (honours `CARGO_TARGET_DIR`); baselines are kept under it.
    pub target_dir: PathBuf,
    /// Defaults from `[workspace.metadata.loadbench]`.
    pub settings: Settings,
}

/// [`read`], failing when the selection finds no bench target (the tests' shorthand).
#[cfg(test)]
pub fn discover(manifest_path: Option<&Path>, packages: &[String], benches: &[String]) -> Result<Workspace, Error> {
    let (workspace, targets) = read(manifest_path, packages, benches)?;
    Ok(Workspace { targets: targets?, ..workspace })
}

/// Reads the workspace with `cargo metadata` (honouring `manifest_path` and `$CARGO`), its
/// `[workspace.metadata.loadbench]` defaults, and selects its loadbench bench targets.
///
/// `packages` holds `-p` specs (`name` or `name@version`), `benches` `--bench` names; empty means
/// all. A selection that finds no bench target is returned beside the workspace (whose `targets`
/// are then empty) rather than instead of it: `--allow-no-scenarios` still needs the target
/// directory, where the empty baseline goes.
pub fn read(
    manifest_path: Option<&Path>,
    packages: &[String],
    benches: &[String],
) -> Result<(Workspace, Result<Vec<BenchTarget>, Error>), Error> {
    read_with(&Toolchain::running(), manifest_path, packages, benches)
}

/// [`read`] with `toolchain`'s cargo.
pub fn read_with(
    toolchain: &Toolchain,
    manifest_path: Option<&Path>,
    packages: &[String],
    benches: &[String],
) -> Result<(Workspace, Result<Vec<BenchTarget>, Error>), Error> {
    let mut command = toolchain.metadata();
    // Dependencies are not needed (`Package::dependencies` lists declared ones anyway), and
    // resolving them could touch the network.
    command.no_deps();
    if let Some(path) = manifest_path {
        // Cargo's own message for this is a paragraph; one line naming the path says it all.
        if !path.exists() {
            return Err(Error::ManifestNotFound(path.to_owned()));
        }
        command.manifest_path(path);
    }
    let metadata = command.exec()?;
    let settings = Settings::from_metadata(&metadata)?;
    let targets = select(&metadata, packages, benches);
    let target_dir = metadata.target_directory.clone().into_std_path_buf();
    Ok((Workspace { targets: Vec::new(), target_dir, settings }, targets))
}

/// Selects the bench targets of `metadata` as [`discover`] describes.
fn select(metadata: &Metadata, packages: &[String], benches: &[String]) -> Result<Vec<BenchTarget>, Error> {
    let root = metadata.workspace_root.clone().into_std_path_buf();
    let members = metadata.workspace_packages();
    let eligible: Vec<&Package> =
        members.iter().copied().filter(|p| depends_on_runtime(p) && bench_targets(p).next().is_some()).collect();

    let mut chosen = eligible.clone();
    if !packages.is_empty() {
        for spec in packages {
            let name = spec_name(spec);
            if !members.iter().any(|p| p.name.as_str() == name) {
                let mut names: Vec<&str> = members.iter().map(|p| p.name.as_str()).collect();
                names.sort_unstable();
                return Err(Error::UnknownPackage { spec: spec.clone(), members: names.join(", ") });
            }
            if !eligible.iter().any(|p| p.name.as_str() == name) {
                return Err(Error::PackageWithoutBenches { package: name.to_owned() });
            }
        }
        chosen.retain(|p| packages.iter().any(|spec| spec_name(spec) == p.name.as_str()));
    }
    if chosen.is_empty() {
        return Err(Error::NoBenchTargets { root });
    }

    let mut targets: Vec<BenchTarget> = chosen
        .iter()
        .flat_map(|package| {
            let package_root =
                package.manifest_path.parent().map_or_else(|| root.clone(), |p| p.as_std_path().to_owned());
            bench_targets(package).map(move |target| BenchTarget {
                package: package.name.to_string(),
                package_id: package.id.clone(),
                bench: target.name.clone(),
                package_root: package_root.clone(),
                source: target.src_path.clone().into_std_path_buf(),
            })
        })
        .collect();
    for name in benches {
        if !targets.iter().any(|t| &t.bench == name) {
            let mut available: Vec<&str> = targets.iter().map(|t| t.bench.as_str()).collect();
            available.sort_unstable();
            available.dedup();
            return Err(Error::UnknownBench { name: name.clone(), available: available.join(", ") });
        }
    }
    if !benches.is_empty() {
        targets.retain(|t| benches.contains(&t.bench));
    }
    // No sort: `cargo metadata` lists a package's targets in the order its manifest declares
    // them, and results follow the source's order (see `loadbench::engine::registry::all`).
    Ok(targets)
}

/// The package name in a `-p` spec. `name@version` is cargo's syntax; a workspace has one member
/// per name, so the name alone identifies it.
fn spec_name(spec: &str) -> &str {
    spec.split_once('@').map_or(spec, |(name, _)| name)
}

/// Whether `package` uses the runtime, as a normal or a dev dependency (build dependencies cannot
/// define scenarios).
fn depends_on_runtime(package: &Package) -> bool {
    package
        .dependencies
        .iter()
        .any(|d| d.name == RUNTIME_PACKAGE && matches!(d.kind, DependencyKind::Normal | DependencyKind::Development))
}

/// The package's bench targets. Metadata cannot tell a `harness = false` loadbench bench from a
/// criterion or libtest one; the bench binaries are asked later.
fn bench_targets(package: &Package) -> impl Iterator<Item = &cargo_metadata::Target> {
    package.targets.iter().filter(|t| t.is_kind(TargetKind::Bench))
}

#[cfg(test)]
// A failed expectation is a failed test; `expect` says which.
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures").join(name).join("Cargo.toml")
    }

    fn names(targets: &[BenchTarget]) -> Vec<String> {
        targets.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn finds_the_loadbench_benches_of_a_workspace() {
        let targets = discover(Some(&fixture("basic")), &[], &[]).expect("fixture metadata").targets;
        assert_eq!(names(&targets), ["basic/api"]);
        assert!(targets[0].package_root.join("benches/api.rs").is_file(), "{targets:?}");
    }

    #[test]
    fn package_and_bench_selection() {
        let path = fixture("basic");
        let targets = discover(Some(&path), &["basic@0.1.0".into()], &["api".into()]).expect("selected").targets;
        assert_eq!(names(&targets), ["basic/api"]);

        let err = discover(Some(&path), &["shop".into()], &[]).expect_err("unknown package");
        assert_eq!(err.to_string(), "package `shop` is not a member of the workspace; members: basic");

        let err = discover(Some(&path), &[], &["admin".into()]).expect_err("unknown bench");
        assert_eq!(err.to_string(), "no bench target named `admin`; available: api");
    }

    #[test]
    fn a_workspace_without_loadbench_benches_is_an_error() {
        let path = fixture("no-loadbench");
        let err = discover(Some(&path), &[], &[]).expect_err("no benches");
        assert!(matches!(err, Error::NoBenchTargets { .. }), "{err:?}");
        assert!(err.to_string().starts_with("no bench targets that depend on loadbench-runtime in "), "{err}");

        let err = discover(Some(&path), &["plain".into()], &[]).expect_err("member without benches");
        assert_eq!(err.to_string(), "package `plain` has no bench targets that depend on loadbench-runtime");
    }

    #[test]
    fn a_missing_manifest_is_named() {
        let path = fixture("does-not-exist");
        let err = discover(Some(&path), &[], &[]).expect_err("missing manifest");
        assert_eq!(err.to_string(), format!("manifest not found: {}", path.display()));
    }
}
