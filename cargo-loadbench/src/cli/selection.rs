//! Which bench targets run: `-p`, `--bench` and `--manifest-path`, as cargo takes them, the same
//! for `cargo loadbench` and, on both sides, for `cargo loadbench ab`.

use std::path::PathBuf;

/// `-p`, `--bench` and `--manifest-path`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct TargetSelection {
    /// Only bench targets of this package (repeatable; with `ab`, on both sides)
    #[arg(short, long = "package", value_name = "SPEC", help_heading = "Target Selection")]
    pub packages: Vec<String>,

    /// Only the bench target with this name (repeatable; with `ab`, on both sides)
    #[arg(long = "bench", value_name = "NAME", help_heading = "Target Selection")]
    pub benches: Vec<String>,

    /// Path to Cargo.toml (with `ab`, the head's; the base's is at the same place in its checkout)
    #[arg(long, value_name = "PATH", help_heading = "Manifest Options")]
    pub manifest_path: Option<PathBuf>,
}
