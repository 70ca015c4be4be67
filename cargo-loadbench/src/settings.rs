//! Defaults for the gating flags, from `[workspace.metadata.loadbench]` in the workspace's
//! `Cargo.toml` (or `[package.metadata.loadbench]` of a single-package project):
//!
//! ```toml
//! [workspace.metadata.loadbench]
//! runs = 5
//! noise-threshold = 5      # percent
//! fail-on-regression = true
//! ```
//!
//! The command line overrides each of them. They are read from the `cargo metadata` call that
//! discovery makes anyway, so there is no separate configuration file to find.

use cargo_metadata::Metadata;
use serde::Deserialize;

use crate::error::Error;

/// `noise-threshold` when neither the command line nor the manifest sets one, in percent.
pub const DEFAULT_NOISE_PERCENT: f64 = 5.0;

/// The most runs `--runs` accepts; past this a run is a soak test, not a gate.
pub const MAX_RUNS: u32 = 1000;

/// Defaults from the manifest; `None` where it sets nothing.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Settings {
    /// `runs = N`: like `--runs N`.
    pub runs: Option<u32>,
    /// `noise-threshold = 5`: like `--noise-threshold 5`, in percent.
    pub noise_threshold: Option<f64>,
    /// `fail-on-regression = true`: like `--fail-on-regression`.
    pub fail_on_regression: Option<bool>,
}

impl Settings {
    /// The `loadbench` table of the workspace's metadata, else of the root package's, else
    /// nothing. A table that does not parse, or holds a value out of range, is an error naming
    /// the manifest: silently ignoring a misspelt `fail-on-regresion` would disarm the gate.
    pub fn from_metadata(metadata: &Metadata) -> Result<Settings, Error> {
        let workspace = metadata.workspace_metadata.get("loadbench").map(|v| ("workspace", v));
        let package = metadata.root_package().and_then(|p| p.metadata.get("loadbench")).map(|v| ("package", v));
        let Some((table, value)) = workspace.or(package) else {
            return Ok(Settings::default());
        };
        let manifest = metadata.workspace_root.join("Cargo.toml");
        let invalid =
            |reason: String| Error::Settings { table, manifest: manifest.clone().into_std_path_buf(), reason };
        let settings = Settings::deserialize(value).map_err(|e| invalid(e.to_string()))?;
        settings.check().map_err(invalid)?;
        Ok(settings)
    }

    fn check(&self) -> Result<(), String> {
        if let Some(runs) = self.runs {
            check_runs(runs)?;
        }
        if let Some(percent) = self.noise_threshold {
            check_noise(percent)?;
        }
        Ok(())
    }
}

/// `runs` must be from 1 to [`MAX_RUNS`].
pub fn check_runs(runs: u32) -> Result<u32, String> {
    if (1..=MAX_RUNS).contains(&runs) {
        Ok(runs)
    } else {
        Err(format!("runs must be from 1 to {MAX_RUNS}, not {runs}"))
    }
}

/// A noise threshold in percent must be at least 0 and below 100.
pub fn check_noise(percent: f64) -> Result<f64, String> {
    if percent.is_finite() && (0.0..100.0).contains(&percent) {
        Ok(percent)
    } else {
        Err(format!("noise-threshold is a percentage from 0 to below 100, not {percent}"))
    }
}

#[cfg(test)]
// A failed expectation is a failed test; `expect` says which.
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    fn parse(json: &str) -> Result<Settings, String> {
        let value: serde_json::Value = serde_json::from_str(json).expect("test JSON");
        let settings = Settings::deserialize(&value).map_err(|e| e.to_string())?;
        settings.check()?;
        Ok(settings)
    }

    #[test]
    fn reads_each_key() {
        let settings = parse(r#"{"runs": 5, "noise-threshold": 2.5, "fail-on-regression": true}"#).expect("valid");
        assert_eq!(settings, Settings { runs: Some(5), noise_threshold: Some(2.5), fail_on_regression: Some(true) });
        assert_eq!(parse("{}").expect("empty"), Settings::default());
    }

    /// `cargo metadata` of a throwaway crate whose manifest ends with `extra`.
    fn metadata(extra: &str) -> (tempfile::TempDir, Result<Settings, Error>) {
        let dir = tempfile::tempdir().expect("tempdir");
        let manifest = format!("[package]\nname = \"shop\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n{extra}");
        std::fs::write(dir.path().join("Cargo.toml"), manifest).expect("write manifest");
        std::fs::create_dir(dir.path().join("src")).expect("mkdir src");
        std::fs::write(dir.path().join("src/lib.rs"), "").expect("write lib.rs");
        let metadata = cargo_metadata::MetadataCommand::new()
            .manifest_path(dir.path().join("Cargo.toml"))
            .no_deps()
            .exec()
            .expect("cargo metadata");
        let settings = Settings::from_metadata(&metadata);
        (dir, settings)
    }

    #[test]
    fn read_from_the_workspace_or_the_package_table() {
        let (_dir, settings) = metadata("[package.metadata.loadbench]\nruns = 3\n");
        assert_eq!(settings.expect("package table").runs, Some(3));
        let (_dir, settings) = metadata(
            "[workspace]\n[workspace.metadata.loadbench]\nfail-on-regression = true\n\n\
             [package.metadata.loadbench]\nruns = 3\n",
        );
        let settings = settings.expect("workspace table");
        assert_eq!((settings.fail_on_regression, settings.runs), (Some(true), None), "the workspace's wins");
        let (_dir, settings) = metadata("");
        assert_eq!(settings.expect("no table"), Settings::default());
    }

    #[test]
    fn a_bad_table_is_an_error_naming_the_manifest() {
        let (dir, settings) = metadata("[package.metadata.loadbench]\nnoise-threshold = -1\n");
        let err = settings.expect_err("negative noise");
        let manifest = dir.path().canonicalize().expect("canonical").join("Cargo.toml");
        assert_eq!(
            err.to_string(),
            format!(
                "invalid [package.metadata.loadbench] in {}: noise-threshold is a percentage from 0 to below 100, not -1",
                manifest.display()
            )
        );
    }

    #[test]
    fn misspelt_keys_and_bad_values_are_refused() {
        let err = parse(r#"{"fail-on-regresion": true}"#).expect_err("typo");
        assert!(err.starts_with("unknown field `fail-on-regresion`, expected one of"), "{err}");
        assert_eq!(parse(r#"{"runs": 0}"#).expect_err("zero runs"), "runs must be from 1 to 1000, not 0");
        assert_eq!(
            parse(r#"{"noise-threshold": 100}"#).expect_err("100 %"),
            "noise-threshold is a percentage from 0 to below 100, not 100"
        );
        assert!(parse(r#"{"runs": "3"}"#).expect_err("string").contains("invalid type"));
    }
}
