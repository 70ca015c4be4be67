//! `cargo loadbench url URL …`: one request under load, as ab, wrk or oha send it, measured by
//! the same engine as scenarios and run through the same tail ([`crate::finish`]: thresholds,
//! baselines, outputs, exit code) as the workspace's scenarios ([`super::workspace`]).
//!
//! With two or more `--target NAME=URL` the request runs against each server side by side, as
//! the workspace's scenarios do ([`crate::targets`]): interleaved per round, merged per target,
//! compared with the first target by the shared tail.
//!
//! The request is sent from this process (no build, no bench binary, no Cargo workspace needed).
//! A workspace around the current directory, when there is one, still decides where baselines
//! live and the gating defaults, as it does for scenarios.

use std::ops::ControlFlow;
use std::path::PathBuf;
use std::time::SystemTime;

use cargo_loadbench::{Results, ScenarioResult};
use cargo_metadata::MetadataCommand;
use loadbench::Protocol;
use loadbench::cli::interrupt;
use loadbench::console::err;
use loadbench::exit_code;
use loadbench::http::ClientOptions;
use loadbench::load::{DEFAULT_GRACE, DEFAULT_TIMEOUT, Load};
use loadbench::oneshot::{OneShot, Request, http3_refusal};
use loadbench::report::{ShardReport, StartReport};
use loadbench::watch::Sampler;

use crate::cli::{Args, Location, UrlArgs};
use crate::error::Error;
use crate::finish::{self, Gating};
use crate::settings::Settings;
use crate::targets::{self, TargetArg, Targets};
use crate::{gate, rounds};

/// Requests sent when neither `-n` nor `-d` is given: oha's default, small enough that a
/// mistyped URL costs nothing.
pub const DEFAULT_REQUESTS: u64 = 200;

/// The request's load against one server: the URL's own, or one `--target`'s side by side.
struct Against {
    /// The `--target`'s name; `None` for the URL's own server.
    target: Option<String>,
    /// What the line before the run names: the URL, or the target and its URL.
    label: String,
    run: OneShot,
}

/// Runs `cargo loadbench url` and returns the exit code; errors that stop it before any request
/// are returned as [`Error`]s.
pub fn run(args: &Args, url: &UrlArgs) -> Result<u8, Error> {
    if let Some(flag) = args.scenario_flag() {
        return Err(Error::NotForUrl { flag });
    }
    if args.client.pipeline.is_some() && args.client.connections.is_none() {
        return Err(Error::PipelineWithoutConnections);
    }
    // `--target` before `url` is the scenarios' flag, after it `url`'s own: both count, in order.
    let given: Vec<TargetArg> = args.targets.iter().chain(&url.targets).cloned().collect();
    let targets = Targets::new(&given)?;
    let servers = servers(&url.location, &targets)?;
    targets.check_baselines(args.baseline.as_deref(), args.save_baseline.as_deref())?;
    // From the path alone, as `Request::default_name` names it: side by side, every target's
    // run has the same name, which is how its figures are matched with the first target's.
    let name = url.name.clone().unwrap_or_else(|| format!("{} {}", url.method, url.location.path));
    gate::check_scenarios(&args.thresholds, &[name.as_str()])?;
    if args.client.http3 {
        for (_, to) in &servers {
            if let Some(refusal) = http3_refusal(Protocol::Http3, &name, to) {
                err!("error: {refusal}");
                return Ok(exit_code::USAGE);
            }
        }
    }
    let shard = args.distributed.shard;
    if let Some(refusal) = shard.and_then(|shard| shard.too_few_users(&name, url.concurrency)) {
        err!("error: {refusal}");
        return Ok(exit_code::USAGE);
    }

    let (target_dir, settings) = workspace_defaults()?;
    let gating = Gating::resolve(args, &target_dir, &settings);
    finish::check_outputs(args, &gating)?;
    // Before the run: a missing baseline should cost nothing.
    let baseline = args.baseline.as_deref().map(|name| gating.baselines.load(name)).transpose()?;

    let load = match (url.requests, url.duration) {
        (_, Some(duration)) => Load::Duration(duration),
        (Some(n), None) => Load::Count(n),
        (None, None) => Load::Count(DEFAULT_REQUESTS),
    };
    let against = servers
        .into_iter()
        .map(|(target, to)| {
            let run = OneShot::new(request(url, &to)?, load)
                .client(args.client.apply(ClientOptions::default()))?
                .name(name.as_str())
                .concurrency(url.concurrency)
                .rate(url.rate)
                .timeout(url.timeout.unwrap_or(DEFAULT_TIMEOUT))
                .progress(!args.quiet)
                .percentiles(args.measured_percentiles())
                .grace(args.grace.unwrap_or(DEFAULT_GRACE))
                // `-c`, `-n` and `--rate` split as a scenario's load is, by the same rule.
                .shard(shard)
                .histograms(args.distributed.histograms())
                .stop_flag(interrupt::stop_flag())
                .cancel_flag(interrupt::cancel_flag());
            let label = match &target {
                Some(target) => format!("{} {} against {target} ({to})", url.method, url.location.path),
                None => format!("{} {to}", url.method),
            };
            Ok(Against { target, label, run })
        })
        .collect::<Result<Vec<_>, Error>>()?;
    // The request runs in this process: it stops on the flag, and says so, as a bench binary does.
    if let Err(err) = interrupt::install(true) {
        err!("warning: {err}; an interrupted run will show no results");
    }

    // Every check is done: wait for the common start of a distributed run, then run.
    let start = args.distributed.start_at.map(|at| {
        let left = at.time().duration_since(SystemTime::now()).unwrap_or_default();
        if !args.quiet && !left.is_zero() {
            err!("     Waiting {:.1}s for --start-at {}", left.as_secs_f64(), at.millis());
        }
        let late = at.wait(&interrupt::stop_flag());
        StartReport { at: at.millis(), late_ms: u64::try_from(late.as_millis()).unwrap_or(u64::MAX) }
    });

    let watches = args.watched();
    let report = rounds::in_rounds(gating.runs, |round| {
        let of = if gating.runs > 1 { format!(" [run {round} of {}]", gating.runs) } else { String::new() };
        let mut report = Results::new(SystemTime::now());
        report.shard = shard.map(|s| ShardReport { index: s.index(), count: s.count() });
        report.run_id.clone_from(&args.distributed.run_id);
        // The first round's header stands for the run (`rounds::merge`): it started at the start.
        if round == 1 {
            report.start.clone_from(&start);
        }
        // One item, the request's load, against each server in turn: a b a b … over the rounds.
        let flow = targets::for_each_pair(std::slice::from_ref(&name), &against, |name, against| {
            if interrupt::interrupted() {
                return ControlFlow::Break(());
            }
            if !args.quiet {
                err!("     Running {}{of}", against.label);
            }
            let samplers: Vec<Sampler> = watches.iter().map(Sampler::start).collect();
            let mut scenario = ScenarioResult::new(against.run.run());
            scenario.watched = samplers.into_iter().map(Sampler::finish).collect();
            scenario.target_name.clone_from(&against.target);
            let could_not_run = scenario.setup_error.clone();
            report.scenarios.push(scenario);
            match could_not_run {
                Some(reason) => {
                    // The next run would fail the same way.
                    let at = against.target.as_ref().map_or_else(String::new, |t| format!(" against `{t}`"));
                    err!("error: `{name}`{at} could not run: {reason}");
                    ControlFlow::Break(())
                }
                None => ControlFlow::Continue(()),
            }
        });
        (report, flow)
    });
    Ok(finish::finish(args, &gating, baseline.as_ref(), report, exit_code::OK))
}

/// Where the request goes: the URL's server alone, or, side by side, each target's name and the
/// URL of the request there (the target's base URL followed by the path and query, as a
/// scenario's paths follow its target's). A single `--target` is refused, since the URL already
/// names the server, and a bare path needs the targets.
fn servers(location: &Location, targets: &Targets) -> Result<Vec<(Option<String>, String)>, Error> {
    match (targets.list(), &location.url) {
        ([], Some(url)) => Ok(vec![(None, url.clone())]),
        ([], None) => Err(Error::PathWithoutTargets { path: location.path.clone() }),
        ([_], _) => Err(Error::Targets(
            "`cargo loadbench url` takes its server from the URL; --target is for two or more servers side by side, each as NAME=URL".to_owned(),
        )),
        (several, _) => Ok(several
            .iter()
            .map(|t| (Some(t.label().to_owned()), format!("{}{}", t.url.trim_end_matches('/'), location.path)))
            .collect()),
    }
}

/// The request of `url` sent to `to`: the URL's method, headers and body.
fn request(url: &UrlArgs, to: &str) -> Result<Request, Error> {
    let mut request = Request::new(url.method.clone(), to)?;
    for header in &url.headers {
        request = request.header(header.clone());
    }
    if let Some(body) = &url.body {
        request = request.body(body.0.clone());
    }
    Ok(request)
}

/// The target directory (baselines live under it) and the gating defaults of the Cargo workspace
/// around the current directory; outside any, `./target` and the built-in defaults.
pub fn workspace_defaults() -> Result<(PathBuf, Settings), Error> {
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
