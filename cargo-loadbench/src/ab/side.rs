//! One side of `cargo loadbench ab`: a commit, where it is checked out, and its bench crate,
//! built and asked for its scenarios.

use std::fmt;
use std::path::{Path, PathBuf};

use cargo_loadbench::Commit;
use loadbench::console::err;
use loadbench::report::ScenarioList;

use crate::build::{self, Executable};
use crate::error::Error;
use crate::toolchain::Toolchain;
use crate::{discover, run};

/// Which side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    /// `BASE_REV`.
    Base,
    /// The working tree, or `--head REV`.
    Head,
}

impl Which {
    /// `base` or `head`.
    pub fn name(self) -> &'static str {
        match self {
            Which::Base => "base",
            Which::Head => "head",
        }
    }

    /// Both, base first.
    pub const BOTH: [Which; 2] = [Which::Base, Which::Head];
}

/// A side: its commit, the root of its checkout, and its bench crate if it has one.
#[derive(Debug, Clone)]
pub struct Side {
    /// Which side it is.
    pub which: Which,
    /// The commit.
    pub commit: Commit,
    /// The root of its checkout: the repository's working tree, or a worktree of ours.
    pub root: PathBuf,
    /// Where its bench crate's manifest is, or would be: the head's place in this checkout.
    pub manifest: PathBuf,
    /// Where it is built. Never shared by the two sides: cargo names a workspace member's
    /// artifacts by its path relative to its workspace's root, the same in both checkouts, and
    /// takes a file older than the other side's build for built (see ARCHITECTURE.md).
    pub target_dir: PathBuf,
}

impl fmt::Display for Side {
    /// `base 1a2b3c4 (Add a cache)`, as errors and progress lines name a side.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.which.name(), self.commit)
    }
}

/// What a side's bench crate holds.
#[derive(Debug)]
pub enum Listed {
    /// Its bench binaries, each with the scenarios it lists (binaries with none left out).
    Scenarios(Vec<(Executable, ScenarioList)>),
    /// Nothing to run, and why: no crate at the place, no bench target that uses loadbench, no
    /// scenario in them.
    Nothing(String),
}

/// The package and bench selection, applied on both sides alike.
#[derive(Debug, Clone, Copy)]
pub struct Selection<'a> {
    /// `-p`.
    pub packages: &'a [String],
    /// `--bench`.
    pub benches: &'a [String],
}

impl Side {
    /// An error of this side that stops the run with exit code 3.
    pub fn failed(&self, reason: impl fmt::Display) -> Error {
        Error::Side { side: self.to_string(), reason: reason.to_string() }
    }

    /// Builds the side's bench targets that `selection` picks, with `toolchain` into its own
    /// target directory, and asks each
    /// binary for its scenarios (writing its answers under `scratch`). A crate that cannot be
    /// read or built stops the run ([`Side::failed`]); a crate with nothing to run is
    /// [`Listed::Nothing`], which the caller judges.
    pub fn list(&self, toolchain: &Toolchain, selection: Selection, scratch: &Path) -> Result<Listed, Error> {
        let toolchain = &toolchain.clone().with_target_dir(&self.target_dir);
        let manifest = &self.manifest;
        if !manifest.is_file() {
            return Ok(Listed::Nothing(format!("its checkout has no {}", self.crate_place())));
        }
        let (_, targets) = discover::read_with(toolchain, Some(manifest), selection.packages, selection.benches)
            .map_err(|err| self.failed(format!("cannot read its workspace ({}): {err}", manifest.display())))?;
        let targets = match targets {
            Ok(targets) => targets,
            Err(err) if err.is_no_scenarios() => return Ok(Listed::Nothing(err.to_string())),
            Err(err) => return Err(self.failed(err)),
        };
        if let Some(version) = toolchain.version() {
            err!("    Building {self} with {version}");
        }
        let executables = build::build_with(toolchain, Some(manifest), &targets).map_err(|err| match err {
            Error::BuildFailed => {
                for fix in crate::mistakes::missing_main(&targets) {
                    err!("hint: {fix}");
                }
                self.failed("the build failed (cargo's errors are above)")
            }
            other => self.failed(other),
        })?;
        let mut listed = Vec::new();
        for (i, exe) in executables.into_iter().enumerate() {
            let answer = scratch.join(format!("list-{}-{i}.json", self.which.name()));
            match run::list(&exe, &answer) {
                Ok(Some(list)) if !list.scenarios.is_empty() => listed.push((exe, list)),
                Ok(_) => {}
                Err(err) => return Err(self.failed(err)),
            }
        }
        if listed.is_empty() {
            return Ok(Listed::Nothing("no #[loadbench::scenario] functions in its bench targets".to_owned()));
        }
        Ok(Listed::Scenarios(listed))
    }

    /// `bench/Cargo.toml`: where the crate is looked for, relative to the checkout.
    pub fn crate_place(&self) -> String {
        self.manifest.strip_prefix(&self.root).unwrap_or(&self.manifest).display().to_string()
    }
}
