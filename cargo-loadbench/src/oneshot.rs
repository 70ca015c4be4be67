//! `cargo loadbench url URL …`: one request under load, as ab, wrk or oha send it, measured by
//! the same engine as scenarios and run through the same tail (thresholds, baselines, outputs,
//! exit code) as the workspace pipeline in [`crate::app`].
//!
//! The request is sent from this process (no build, no bench binary, no Cargo workspace needed).
//! A workspace around the current directory, when there is one, still decides where baselines
//! live and the gating defaults, as it does for scenarios.

use std::path::PathBuf;
use std::time::SystemTime;

use cargo_metadata::MetadataCommand;
use loadbench::exit_code;
use loadbench::oneshot::{OneShot, Request};
use loadbench::report::RunReport;
use loadbench::{DEFAULT_TIMEOUT, Load};

use crate::app::{self, Gating};
use crate::cli::{Args, UrlArgs};
use crate::error::Error;
use crate::gate;
use crate::merge;
use crate::settings::Settings;
use loadbench::watch::Sampler;

/// Requests sent when neither `-n` nor `-d` is given: oha's default, small enough that a
/// mistyped URL costs nothing.
pub const DEFAULT_REQUESTS: u64 = 200;

/// Runs `cargo loadbench url` and returns the exit code; errors that stop it before any request
/// are returned as [`Error`]s.
pub fn run(args: &Args, url: &UrlArgs) -> Result<u8, Error> {
    if let Some(flag) = args.scenario_flag() {
        return Err(Error::NotForUrl { flag });
    }
    let mut request = Request::new(url.method.clone(), &url.url)?;
    for header in &url.headers {
        request = request.header(header.clone());
    }
    if let Some(body) = &url.body {
        request = request.body(body.0.clone());
    }
    let name = url.name.clone().unwrap_or_else(|| request.default_name());
    gate::check_scenarios(&args.thresholds, &[name.as_str()])?;

    let (target_dir, settings) = workspace_defaults()?;
    let gating = Gating::resolve(args, &target_dir, &settings);
    // Before the run: a missing baseline should cost nothing.
    let baseline = args.baseline.as_deref().map(|name| gating.baselines.load(name)).transpose()?;

    let load = match (url.requests, url.duration) {
        (_, Some(duration)) => Load::Duration(duration),
        (Some(n), None) => Load::Count(n),
        (None, None) => Load::Count(DEFAULT_REQUESTS),
    };
    let oneshot = OneShot::new(request, load)
        .name(name.as_str())
        .concurrency(url.concurrency)
        .rate(url.rate)
        .timeout(url.timeout.unwrap_or(DEFAULT_TIMEOUT))
        .progress(!args.quiet)
        .stop_flag(app::stop_flag());
    app::install_interrupt_handler(true);

    let started_at = SystemTime::now();
    let watches = args.watched();
    let mut rounds = Vec::with_capacity(gating.runs as usize);
    for round in 1..=gating.runs {
        if app::interrupted() {
            break;
        }
        if !args.quiet {
            let of = if gating.runs > 1 { format!(" [run {round} of {}]", gating.runs) } else { String::new() };
            eprintln!("     Running {} {}{of}", url.method, url.url);
        }
        let samplers: Vec<Sampler> = watches.iter().map(Sampler::start).collect();
        let round_started = SystemTime::now();
        let mut scenario = oneshot.run();
        scenario.watched = samplers.into_iter().map(Sampler::finish).collect();
        let could_not_run = scenario.setup_error.clone();
        let mut report = RunReport::new(round_started);
        report.scenarios.push(scenario);
        rounds.push(report);
        if let Some(reason) = could_not_run {
            // The next round would fail the same way.
            eprintln!("error: `{name}` could not run: {reason}");
            break;
        }
    }
    let report = merge::merge(rounds, RunReport::new(started_at));
    Ok(app::finish(args, &gating, baseline.as_ref(), report, exit_code::OK))
}

/// The target directory (baselines live under it) and the gating defaults of the Cargo workspace
/// around the current directory; outside any, `./target` and the built-in defaults.
fn workspace_defaults() -> Result<(PathBuf, Settings), Error> {
    let outside = || (PathBuf::from("target"), Settings::default());
    let Ok(cwd) = std::env::current_dir() else { return Ok(outside()) };
    if !cwd.ancestors().any(|dir| dir.join("Cargo.toml").is_file()) {
        return Ok(outside());
    }
    // Dependencies are not needed, and resolving them could touch the network.
    let metadata = MetadataCommand::new().no_deps().exec()?;
    let settings = Settings::from_metadata(&metadata)?;
    Ok((metadata.target_directory.into_std_path_buf(), settings))
}
