//! Which cargo reads and builds a workspace, with which rustc, into which target directory.
//!
//! `cargo loadbench` runs the cargo that ran it ([`Toolchain::running`]). `cargo loadbench ab`
//! builds two checkouts, and both must be built by the same compiler, or a change of toolchain
//! would pass for a change of the code: a base whose `rust-toolchain.toml` names another
//! toolchain would otherwise get it from rustup. So its sides run the toolchain's own binaries,
//! found from the head's `rustc --print sysroot`, not rustup's proxies, and both build into the
//! head's target directory ([`Toolchain::pinned`]).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use cargo_metadata::MetadataCommand;

/// How cargo is run.
#[derive(Debug, Clone)]
pub struct Toolchain {
    cargo: OsString,
    /// `RUSTC` for every command, when pinned.
    rustc: Option<PathBuf>,
    /// `CARGO_TARGET_DIR` for every command, when set.
    target_dir: Option<PathBuf>,
    /// `rustc -V`, when pinned.
    version: Option<String>,
}

impl Toolchain {
    /// The cargo that runs `cargo loadbench`: `$CARGO` when set (cargo sets it for subcommands, so
    /// the toolchain that ran `cargo loadbench` also builds), else `cargo` from `PATH`.
    pub fn running() -> Toolchain {
        Toolchain {
            cargo: std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()),
            rustc: None,
            target_dir: None,
            version: None,
        }
    }

    /// The toolchain that builds in `dir` (with its `rust-toolchain.toml`, if rustup reads one
    /// there), pinned: its own cargo and rustc binaries, which no other directory's toolchain
    /// file can change.
    pub fn pinned(dir: &Path) -> Result<Toolchain, String> {
        let running = std::env::var_os("CARGO").map(PathBuf::from);
        let beside_cargo =
            running.as_ref().and_then(|c| c.parent()).map(|bin| bin.join("rustc")).filter(|r| r.is_file());
        let asked = std::env::var_os("RUSTC").map(PathBuf::from).or(beside_cargo).unwrap_or_else(|| "rustc".into());
        let sysroot = PathBuf::from(output(Command::new(&asked).args(["--print", "sysroot"]).current_dir(dir))?);
        let bin = sysroot.join("bin");
        let cargo = running
            .or_else(|| Some(bin.join("cargo")).filter(|c| c.is_file()))
            .map_or_else(|| "cargo".into(), PathBuf::into_os_string);
        let rustc =
            std::env::var_os("RUSTC").map(PathBuf::from).or_else(|| Some(bin.join("rustc")).filter(|r| r.is_file()));
        let rustc = rustc.unwrap_or(asked);
        let version = output(Command::new(&rustc).arg("-V").current_dir(dir))?;
        Ok(Toolchain { cargo, rustc: Some(rustc), target_dir: None, version: Some(version) })
    }

    /// The same toolchain building into `dir`.
    pub fn with_target_dir(mut self, dir: &Path) -> Toolchain {
        self.target_dir = Some(dir.to_owned());
        self
    }

    /// `rustc 1.95.0 (…)` for a pinned toolchain.
    pub fn version(&self) -> Option<&str> {
        self.version.as_deref()
    }

    /// A cargo command with the pins in its environment.
    pub fn command(&self) -> Command {
        let mut command = Command::new(&self.cargo);
        if let Some(rustc) = &self.rustc {
            command.env("RUSTC", rustc);
        }
        if let Some(dir) = &self.target_dir {
            command.env("CARGO_TARGET_DIR", dir);
        }
        command
    }

    /// `cargo metadata`, run as [`Toolchain::command`] runs cargo.
    pub fn metadata(&self) -> MetadataCommand {
        let mut command = MetadataCommand::new();
        command.cargo_path(&self.cargo);
        if let Some(rustc) = &self.rustc {
            command.env("RUSTC", rustc);
        }
        if let Some(dir) = &self.target_dir {
            command.env("CARGO_TARGET_DIR", dir);
        }
        command
    }
}

/// The first line `command` prints, when it succeeds.
fn output(command: &mut Command) -> Result<String, String> {
    let program = command.get_program().to_string_lossy().into_owned();
    let out = command.stdin(Stdio::null()).output().map_err(|e| format!("cannot run {program}: {e}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    match stdout.lines().next().map(str::trim).filter(|l| !l.is_empty()) {
        Some(line) if out.status.success() => Ok(line.to_owned()),
        _ => {
            let stderr = String::from_utf8_lossy(&out.stderr);
            Err(format!("{program} failed: {}", stderr.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("no output")))
        }
    }
}

#[cfg(test)]
// A broken test environment (no rustc) should fail loudly.
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_pinned_toolchain_names_its_own_rustc_and_version() {
        let dir = tempfile::tempdir().expect("tempdir");
        let pinned = Toolchain::pinned(dir.path()).expect("pinned");
        let rustc = pinned.rustc.clone().expect("a rustc");
        assert!(rustc.is_absolute() || std::env::var_os("RUSTC").is_some(), "{rustc:?}");
        assert!(pinned.version().is_some_and(|v| v.starts_with("rustc 1.")), "{pinned:?}");
        let command = pinned.with_target_dir(dir.path()).command();
        let mut envs: Vec<_> = command.get_envs().map(|(k, _)| k.to_string_lossy().into_owned()).collect();
        envs.sort();
        assert_eq!(envs, ["CARGO_TARGET_DIR", "RUSTC"]);
    }
}
