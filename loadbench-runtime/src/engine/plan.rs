//! A scenario's load plan: the load one run applies, built in one place ([`LoadPlan::new`]) from
//! what the scenario declares and how the run is sized: as declared, as one smoke-test iteration,
//! or reduced by a factor (`--scale FACTOR`, `LOADBENCH_SCALE`) so that the same scenarios run in
//! CI in seconds with counts that can still be checked exactly. The executor runs a plan, and the
//! report's `config` is derived from it ([`LoadPlan::config_report`]).
//!
//! A distributed run (`--shard I/N`) runs one part of the sized plan on each machine
//! ([`LoadPlan::shard`]): every figure split by [`Shard::share`], so that the parts add up to the
//! whole exactly, and the users numbered across the parts.

use std::time::Duration;

use crate::cli::Shard;
use crate::config::{Load, Protocol, Rate, RateStage, ScenarioConfig, Stage, ThinkTime, Transport};
use crate::engine::ramp;
use crate::http::SessionOptions;
use crate::report::{ConfigReport, ShareReport};

/// A scaled duration is never shorter than this (unless the declared one already is): below it,
/// a duration-bound scenario would end before its users had connected, and run nothing.
pub const MIN_DURATION: Duration = Duration::from_millis(100);

/// How a run is sized against what its scenario declares.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Sizing {
    /// The load the attribute declares.
    Declared,
    /// One iteration of one user in the closed model: a smoke test, whatever the attribute asks.
    Smoke,
    /// Every quantity multiplied by the factor, in `(0, 1]`.
    Scaled(f64),
}

/// The load one run of a scenario applies.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LoadPlan {
    /// Virtual users (closed model), or the most that serve the rate (open model); with a ramp
    /// of users, its highest target.
    pub(crate) concurrency: u32,
    /// When the measured part stops.
    pub(crate) load: Load,
    /// Open model: the arrival rate.
    pub(crate) rate: Option<Rate>,
    /// Open model: a ramp of the arrival rate instead (empty when none).
    pub(crate) rate_stages: Vec<RateStage>,
    /// Closed model: a ramp of active users (empty when none).
    pub(crate) stages: Vec<Stage>,
    /// Iterations, or time, run before the measured part and left out of the figures.
    pub(crate) warmup: Option<Load>,
    /// Closed model: each user's pause between iterations.
    pub(crate) think_time: Option<ThinkTime>,
    /// Per-request timeout.
    pub(crate) timeout: Duration,
    /// Most bytes of a response body a request keeps.
    pub(crate) max_body: u64,
    /// How long in-flight iterations may finish after the end or a stop before being cancelled.
    pub(crate) grace: Duration,
    /// The factor the declared load was reduced by, if it was.
    pub(crate) scale: Option<f64>,
    /// Each user's cookie jar and the redirects a request follows.
    pub(crate) session: SessionOptions,
    /// How requests travel: shared connections, pipelining, HTTP/2. Shared connections are
    /// never more than the users (each needs one to send on), and scale with them.
    pub(crate) transport: Transport,
    /// The number (`ctx.user()`) of the first user: 0, except for a shard of a distributed run,
    /// whose users are numbered after those of the shards before it, so that user numbers (and
    /// with them `feed_mode = "per_user"` records and think-time seeds) are unique across shards.
    pub(crate) first_user: u32,
}

impl LoadPlan {
    /// The plan for `config` sized by `sizing`. Scaling multiplies users, counts, durations, rates
    /// and ramps alike, so the load keeps its shape: users and counts are rounded and kept at
    /// least 1 (a ramp's 0 stays 0), durations at least [`MIN_DURATION`].
    pub(crate) fn new(config: &ScenarioConfig, sizing: Sizing) -> LoadPlan {
        let declared = LoadPlan {
            concurrency: config.users(),
            load: config.load,
            rate: config.rate,
            rate_stages: config.rate_stages.to_vec(),
            stages: config.stages.to_vec(),
            warmup: config.warmup,
            think_time: config.think_time,
            timeout: config.timeout(),
            max_body: config.max_body(),
            grace: config.grace(),
            scale: None,
            session: SessionOptions { cookies: config.cookies, follow_redirects: config.follow_redirects },
            transport: config.transport,
            first_user: 0,
        };
        let plan = match sizing {
            Sizing::Declared => declared,
            Sizing::Smoke => LoadPlan {
                concurrency: 1,
                transport: Transport { connections: declared.transport.connections.map(|_| 1), ..declared.transport },
                load: Load::Count(1),
                rate: None,
                rate_stages: Vec::new(),
                stages: Vec::new(),
                warmup: None,
                think_time: None,
                ..declared
            },
            Sizing::Scaled(factor) => LoadPlan {
                concurrency: users(declared.concurrency, factor).max(1),
                load: load(declared.load, factor),
                rate: declared.rate.map(|r| Rate { iterations: count(r.iterations, factor), per: r.per }),
                rate_stages: declared
                    .rate_stages
                    .iter()
                    .map(|s| RateStage {
                        duration: time(s.duration, factor),
                        rate: if s.rate == 0 { 0 } else { count(s.rate, factor) },
                    })
                    .collect(),
                stages: declared
                    .stages
                    .iter()
                    .map(|s| Stage { duration: time(s.duration, factor), target: users(s.target, factor) })
                    .collect(),
                warmup: declared.warmup.map(|w| load(w, factor)),
                scale: Some(factor),
                transport: Transport {
                    connections: declared.transport.connections.map(|n| users(n, factor).max(1)),
                    ..declared.transport
                },
                ..declared
            },
        };
        let transport = plan.transport;
        plan.with_transport(transport)
    }

    /// The plan with `transport` in force (the command line's `--connections`, `--pipeline` and
    /// `--http2` over the scenario's), its shared connections kept to at least 1 and at most
    /// the users: a connection no user sends on would be opened for nothing.
    pub(crate) fn with_transport(mut self, transport: Transport) -> LoadPlan {
        let users = self.concurrency.max(1);
        self.transport = Transport { connections: transport.connections.map(|n| n.clamp(1, users)), ..transport };
        self
    }

    /// Shard `shard`'s part of this plan (sized, with its transport in force): users, the count,
    /// the arrival rate, each stage of a ramp, the shared connections and a warmup count each
    /// split by [`Shard::share`], so that the shards add up to this plan exactly, the remainders
    /// on the first shards. Durations, timeouts and think times are every shard's alike. Its
    /// users are numbered from the users of the shards before it.
    ///
    /// A plan with fewer users than shards leaves some shards without a user (`concurrency` 0):
    /// the harness refuses that before any load ([`Shard::too_few_users`]).
    pub(crate) fn shard(self, shard: Shard) -> LoadPlan {
        let transport = Transport {
            // Never none (a lane needs a connection) and never more than the shard's users: see
            // `with_transport`.
            connections: self.transport.connections.map(|n| shard.share_u32(n).max(1)),
            ..self.transport
        };
        LoadPlan {
            concurrency: shard.share_u32(self.concurrency),
            first_user: self.first_user.saturating_add(shard.before_u32(self.concurrency)),
            load: match self.load {
                Load::Count(n) => Load::Count(shard.share(n)),
                time => time,
            },
            rate: self.rate.map(|rate| shard_rate(rate, shard)),
            rate_stages: self
                .rate_stages
                .iter()
                .map(|s| RateStage { duration: s.duration, rate: shard.share(s.rate) })
                .collect(),
            stages: self
                .stages
                .iter()
                .map(|s| Stage { duration: s.duration, target: shard.share_u32(s.target) })
                .collect(),
            warmup: match self.warmup {
                Some(Load::Count(n)) => Some(Load::Count(shard.share(n))),
                other => other,
            },
            ..self
        }
        .with_transport(transport)
    }

    /// What this plan runs of its scenario, as a shard's `share` in the report.
    pub(crate) fn share_report(&self) -> ShareReport {
        ShareReport {
            concurrency: self.concurrency,
            count: match self.load {
                Load::Count(n) => Some(n),
                Load::Duration(_) => None,
            },
            rate: self.rate.map(|r| r.per_second()),
            first_user: self.first_user,
        }
    }

    /// Whether arrivals follow a schedule (`rate` or `rate_stages`): the open model.
    pub(crate) fn is_open(&self) -> bool {
        self.rate.is_some() || !self.rate_stages.is_empty()
    }

    /// Open model: the iterations per second asked for; a ramp asks for its mean rate, all its
    /// arrivals over its length.
    pub(crate) fn requested_rate(&self) -> Option<f64> {
        match (self.rate, self.rate_stages.as_slice()) {
            (Some(rate), _) => Some(rate.per_second()),
            (None, []) => None,
            (None, stages) => {
                let length: f64 = stages.iter().map(|s| s.duration.as_secs_f64()).sum();
                Some(ramp::rate_stages_arrivals(stages) / length.max(f64::MIN_POSITIVE))
            }
        }
    }

    /// The `config` of the report of a run of this plan: its load, with the thresholds and group
    /// `config` declares and the `target` in force.
    pub(crate) fn config_report(&self, config: &ScenarioConfig, target: Option<&str>) -> ConfigReport {
        let millis = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        ConfigReport {
            concurrency: self.concurrency,
            rate: self.rate.map(|r| r.per_second()),
            count: match self.load {
                Load::Count(n) => Some(n),
                Load::Duration(_) => None,
            },
            duration_ms: match self.load {
                Load::Count(_) => None,
                Load::Duration(d) => Some(millis(d)),
            },
            timeout_ms: millis(self.timeout),
            grace_ms: millis(self.grace),
            think_time_ms: self.think_time.map(|t| (millis(t.min), millis(t.max))),
            stages: self.stages.iter().map(|s| (millis(s.duration), s.target)).collect(),
            rate_stages: self.rate_stages.iter().map(|s| (millis(s.duration), s.rate)).collect(),
            warmup_count: match self.warmup {
                Some(Load::Count(n)) => Some(n),
                _ => None,
            },
            warmup_ms: match self.warmup {
                Some(Load::Duration(d)) => Some(millis(d)),
                _ => None,
            },
            target: target.map(str::to_owned),
            thresholds: config.thresholds.to_vec(),
            row_thresholds: config.row_thresholds.to_vec(),
            group: config.group.map(str::to_owned),
            scale: self.scale,
            // Filled once the target is resolved.
            connect_to: None,
            tls: None,
            // Filled by the runner from the feed as loaded.
            feed: None,
            connections: self.transport.connections,
            // Pipelining is HTTP/1.1's, on shared connections only.
            pipeline: self
                .transport
                .pipeline
                .filter(|_| self.transport.protocol == Protocol::Http1 && self.transport.connections.is_some()),
            http2: self.transport.protocol.is_http2(),
            http3: self.transport.protocol.is_http3(),
        }
    }
}

/// Reads a scale factor: a number above 0 and at most 1.
pub(crate) fn parse_scale(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(factor) if factor > 0.0 && factor <= 1.0 => Ok(factor),
        _ => Err(format!("`{text}` is not a scale: give a number above 0 and at most 1, such as 0.01")),
    }
}

/// Shard `shard`'s part of `rate`: its iterations per period split. A rate of fewer iterations per
/// period than shards is first written over a longer period (2/s over 3 shards is 4 per 2 s: 2, 1
/// and 1 per 2 s), so that every shard has arrivals and the shards still add up to the rate.
fn shard_rate(rate: Rate, shard: Shard) -> Rate {
    let count = u64::from(shard.count());
    let stretch = if rate.iterations == 0 || rate.iterations >= count { 1 } else { count.div_ceil(rate.iterations) };
    // `stretch` is at most the shard count, a `u32`.
    let by = u32::try_from(stretch).unwrap_or(1);
    let (iterations, per) = match rate.per.checked_mul(by) {
        Some(per) => (rate.iterations * stretch, per),
        None => (rate.iterations, rate.per),
    };
    Rate { iterations: shard.share(iterations), per }
}

fn load(load: Load, factor: f64) -> Load {
    match load {
        Load::Count(n) => Load::Count(count(n, factor)),
        Load::Duration(d) => Load::Duration(time(d, factor)),
    }
}

fn count(n: u64, factor: f64) -> u64 {
    ((n as f64 * factor).round() as u64).max(1)
}

/// Users of a ramp stage or a scenario: 0 (the end of a ramp down) stays 0.
fn users(n: u32, factor: f64) -> u32 {
    if n == 0 { 0 } else { ((f64::from(n) * factor).round() as u32).max(1) }
}

fn time(d: Duration, factor: f64) -> Duration {
    if d <= MIN_DURATION { d } else { d.mul_f64(factor).max(MIN_DURATION) }
}

#[cfg(test)]
mod tests;
