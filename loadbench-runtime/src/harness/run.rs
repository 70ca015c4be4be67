//! [`Harness::run_report`]: the selected scenarios, each with its target and load plan, run one
//! batch at a time into the run's report.

use std::io::Write as _;
use std::sync::Arc;
use std::time::SystemTime;

use super::batches::{Numbering, Selected, batches};
use super::feeds::load_feeds;
use super::runner::{Connections, RunSettings, http3_refusal};
use super::watch::Sampler;
use super::{Harness, HarnessError, limits, targets};
use crate::cli::{self, PERCENTILES_ENV, PROGRESS_ENV, SCALE_ENV};
use crate::console::err;
use crate::engine::registry::{self, ScenarioEntry, Workload};
use crate::engine::{Board, LoadPlan, Sizing, parse_scale};
use crate::feed::Feed;
use crate::report::{RunReport, ScenarioReport, ShardReport, StartReport, WatchReport, check};

impl Harness {
    #[doc(hidden)]
    /// Runs the selected scenarios and returns the report, without printing a table.
    ///
    /// Scenarios that cannot run (their target does not resolve, too few file descriptors) are in
    /// the report with [`ScenarioReport::setup_error`] set; the others still run.
    pub fn run_report(mut self) -> Result<RunReport, HarnessError> {
        let entries = registered()?;
        let filter = self.filter();
        let selected = registry::select(&entries, &filter);
        if selected.is_empty() {
            return Err(filter.no_match(entries.iter().map(|e| e.name)).into());
        }
        let scale = match self.scale {
            Some(factor) => Some(factor),
            None => match std::env::var(SCALE_ENV).ok().filter(|s| !s.trim().is_empty()) {
                Some(text) => Some(parse_scale(&text).map_err(HarnessError::Scale)?),
                None => None,
            },
        };
        let resolved = targets::resolve(&selected, self.target.as_deref(), self.default_target.take())?;
        // The default target's process, when it is one, lives until the run's end and is watched.
        let server = resolved.server.map(|(process, watch)| {
            self.watches.push(watch);
            process
        });

        // Measured beyond the fixed percentiles: the table's columns, and what `cargo loadbench`
        // asks for to evaluate its `--threshold`s and show its `--percentiles`.
        let mut percentiles = self.columns.percentiles().to_vec();
        if let Some(text) = std::env::var(PERCENTILES_ENV).ok().filter(|s| !s.trim().is_empty()) {
            let asked = cli::parse_percentiles(&text).map_err(|e| HarnessError::Percentiles(e.to_string()))?;
            percentiles.extend(asked);
        }
        let sizing = match scale {
            Some(factor) => Sizing::Scaled(factor),
            None if self.smoke => Sizing::Smoke,
            None => Sizing::Declared,
        };
        // Each scenario's plan, built here once: the shard check, its feed and its run read it.
        let selected: Vec<Selected> = selected
            .into_iter()
            .zip(resolved.urls)
            .map(|(entry, url)| Selected { entry, url, plan: LoadPlan::new(&entry.config, sizing) })
            .collect();
        // Every shard needs a user of each scenario: refused before any load, in any batch.
        if let Some(shard) = self.shard {
            for scenario in &selected {
                if let Some(refusal) = shard.too_few_users(scenario.entry.name, scenario.plan.concurrency) {
                    return Err(HarnessError::Shard(refusal));
                }
            }
        }
        // HTTP/3 asked where it cannot run: refused before any load, naming the scenario.
        for scenario in &selected {
            let protocol = self.client.transport(scenario.plan.transport).protocol;
            if let Some(refusal) = http3_refusal(protocol, scenario.entry.name, &scenario.url) {
                return Err(HarnessError::Http3(refusal));
            }
        }
        // Every selected scenario's feed, read before any load, so that a bad file costs nothing.
        let feeds = match load_feeds(&selected, &self.feeds, &self.stop.graceful)? {
            Ok(feeds) => feeds,
            Err(file) => {
                // Stopped before any load: the results say so, with no scenario. Said without a
                // check: the terminal may be gone (SIGHUP), and the results must still be written.
                let _ = writeln!(std::io::stderr(), "interrupted while reading feed {file}: no scenario ran");
                let mut report = RunReport::new(SystemTime::now());
                report.interrupted = true;
                report.shard = self.shard.map(|shard| ShardReport { index: shard.index(), count: shard.count() });
                return Ok(report);
            }
        };
        let connections =
            Connections::new(std::mem::take(&mut self.client), selected.iter().map(|scenario| scenario.url.as_str()))?;
        // Every check is done: wait for the common start, then run.
        let start = self.start_at.map(|at| {
            if self.progress {
                let left = at.time().duration_since(SystemTime::now()).unwrap_or_default();
                if !left.is_zero() {
                    err!("     Waiting {:.1}s for --start-at {}", left.as_secs_f64(), at.millis());
                }
            }
            let late = at.wait(&self.stop.graceful);
            StartReport { at: at.millis(), late_ms: u64::try_from(late.as_millis()).unwrap_or(u64::MAX) }
        });
        let started_at = SystemTime::now();
        let settings = RunSettings {
            // A smoke run is one iteration of the closed model, whatever the attribute asks,
            // unless a scale asks for more.
            sizing,
            board: self.progress.then(Board::for_stderr),
            worker_threads: self.worker_threads,
            file_limit: limits::raise_open_files(),
            server_here: resolved.started_here,
            stop: self.stop.clone(),
            grace: self.grace,
            connections,
            percentiles,
            shard: self.shard,
            histograms: self.histograms || self.shard.is_some(),
            #[cfg(feature = "remote-write")]
            remote_write: self.remote_write.clone().map(|config| {
                crate::engine::LivePush::new(config, self.run_id.as_deref(), self.shard.map_or(0, |s| s.index()))
            }),
        };
        let mut scenarios = Vec::with_capacity(selected.len());
        let batches = batches(selected);
        // Numbered in the order they run, a group's members one after the other.
        let run = std::env::var(PROGRESS_ENV).ok().and_then(|text| cli::parse_progress(&text));
        let numbering = Numbering::new(batches.iter().flatten(), run);
        for batch in batches {
            if self.stop.any() {
                break;
            }
            // Sampled per batch: the scenarios of a group share one server, busy with all of them.
            let samplers: Vec<Sampler> = self.watches.iter().map(Sampler::start).collect();
            let reports = run_batch(&settings, &batch, &feeds, &numbering);
            let watched: Vec<WatchReport> = samplers.into_iter().map(Sampler::finish).collect();
            for (mut report, Selected { entry, .. }) in reports.into_iter().zip(&batch) {
                if report.setup_error.is_none() {
                    report.watched.clone_from(&watched);
                }
                // A smoke run (one iteration, one user) says nothing about latency or throughput.
                if !self.smoke {
                    check::judge(&mut report);
                }
                if let Some(err) = &report.setup_error {
                    err!("error: scenario `{}` could not run: {err}", entry.name);
                }
                scenarios.push(report);
            }
        }
        // Stopped only now that every scenario has run.
        drop(server);
        let mut report = RunReport::new(started_at);
        report.interrupted = self.stop.any();
        report.shard = self.shard.map(|shard| ShardReport { index: shard.index(), count: shard.count() });
        report.start = start;
        report.run_id = self.run_id.clone();
        report.scenarios = scenarios;
        Ok(report)
    }
}

/// Runs one batch: a scenario alone, or a group as one workload, every scenario at once, each on
/// worker threads of its own (their progress lines on one board, one line each).
fn run_batch(
    settings: &RunSettings,
    batch: &[Selected],
    feeds: &[(&str, Arc<Feed>)],
    numbering: &Numbering,
) -> Vec<ScenarioReport> {
    let run = |settings: &RunSettings, Selected { entry, url, plan }: &Selected| {
        let mut workload = Workload::from(*entry);
        workload.feed = feeds.iter().find(|(name, _)| *name == entry.name).map(|(_, feed)| Arc::clone(feed));
        settings.run(&workload, plan, &entry.config, url, numbering.position(entry.name))
    };
    if let [one] = batch {
        return vec![run(settings, one)];
    }
    std::thread::scope(|scope| {
        let runs: Vec<_> = batch.iter().map(|selected| (selected, scope.spawn(|| run(settings, selected)))).collect();
        runs.into_iter()
            .map(|(Selected { entry, url, plan }, handle)| {
                handle.join().unwrap_or_else(|_| {
                    let mut report =
                        ScenarioReport::not_started(entry.name, plan.config_report(&entry.config, Some(url)));
                    report.setup_error = Some("its runner thread panicked".to_owned());
                    report
                })
            })
            .collect()
    })
}

/// Every registered scenario, or why the set cannot be used.
pub(super) fn registered() -> Result<Vec<&'static ScenarioEntry>, HarnessError> {
    let entries = registry::all();
    if entries.is_empty() {
        return Err(HarnessError::NoScenarios);
    }
    if let Some((first, second)) = registry::duplicate_name(&entries) {
        return Err(HarnessError::DuplicateName {
            name: first.name.to_owned(),
            first: format!("{}:{}", first.file, first.line),
            second: format!("{}:{}", second.file, second.line),
        });
    }
    Ok(entries)
}
