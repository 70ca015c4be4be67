//! The variables cargo sets for the package it builds or runs, kept out of the cargo commands
//! loadbench starts.

use std::ffi::OsString;
use std::process::Command;

/// What cargo sets, besides `CARGO_PKG_*`, for one package (`cargo run`, `cargo test`, a build
/// script), and what a nested cargo must not inherit.
const SET_FOR_A_PACKAGE: [&str; 6] = [
    "CARGO_MANIFEST_DIR",
    "CARGO_MANIFEST_PATH",
    "CARGO_CRATE_NAME",
    "CARGO_BIN_NAME",
    "CARGO_PRIMARY_PACKAGE",
    "CARGO_RUSTC_CURRENT_DIR",
];

/// Removes from `command`'s environment what cargo set for the package this process runs as
/// (`CARGO_MANIFEST_DIR`, `CARGO_PKG_*`, …), before `command` runs cargo itself.
///
/// Left in place, they reach the build scripts of that nested build, and one that watches such a
/// variable (ring's watches `CARGO_MANIFEST_DIR`) then differs from the same build started from
/// a shell: when both share a target directory (`cargo run --release -p cargo-loadbench --
/// loadbench` and the bench build it starts share `target/release`; the tests build the fixtures
/// both ways), each rebuilds ring and everything above it, a minute and more every time.
///
/// ```
/// let mut cargo = std::process::Command::new("cargo");
/// loadbench::cli::forget_the_running_package(&mut cargo);
/// ```
pub fn forget_the_running_package(command: &mut Command) {
    for key in the_running_package() {
        command.env_remove(key);
    }
}

/// The names of the variables [`forget_the_running_package`] removes, for a command built some
/// other way (the tests' escargot build of `cargo-loadbench`).
pub fn the_running_package() -> Vec<OsString> {
    std::env::vars_os()
        .map(|(key, _)| key)
        .filter(|key| {
            let name = key.to_string_lossy();
            name.starts_with("CARGO_PKG_") || SET_FOR_A_PACKAGE.contains(&name.as_ref())
        })
        .collect()
}
