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
use crate::config::{Load, Rate, RateStage, ScenarioConfig, Stage, ThinkTime, Transport};
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
            concurrency: config.concurrency,
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
                .filter(|_| !self.transport.protocol.is_http2() && self.transport.connections.is_some()),
            http2: self.transport.protocol.is_http2(),
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
mod tests {
    use super::*;
    use crate::config::Protocol;

    fn config() -> ScenarioConfig {
        ScenarioConfig {
            warmup: Some(Load::Count(50)),
            concurrency: 150,
            load: Load::Count(7_500),
            ..ScenarioConfig::DEFAULT
        }
    }

    fn scaled(config: &ScenarioConfig, factor: f64) -> LoadPlan {
        LoadPlan::new(config, Sizing::Scaled(factor))
    }

    #[test]
    fn users_and_counts_scale_rounded_with_a_floor_of_one() {
        let plan = scaled(&config(), 0.01);
        assert_eq!((plan.concurrency, plan.load, plan.warmup), (2, Load::Count(75), Some(Load::Count(1))));
        let tiny = scaled(&config(), 0.000_1);
        assert_eq!((tiny.concurrency, tiny.load), (1, Load::Count(1)));
        assert_eq!(LoadPlan { scale: None, ..scaled(&config(), 1.0) }, LoadPlan::new(&config(), Sizing::Declared));
    }

    #[test]
    fn shared_connections_scale_with_the_users_and_never_outnumber_them() {
        let shared = ScenarioConfig {
            transport: Transport { connections: Some(16), pipeline: Some(16), protocol: Protocol::Http1 },
            ..config()
        };
        let declared = LoadPlan::new(&shared, Sizing::Declared);
        assert_eq!((declared.concurrency, declared.transport.connections), (150, Some(16)));
        // 150 users → 15 at a tenth, 16 connections → 2: the users per connection stay about the same.
        let plan = scaled(&shared, 0.1);
        assert_eq!((plan.concurrency, plan.transport.connections, plan.transport.pipeline), (15, Some(2), Some(16)));
        assert_eq!(scaled(&shared, 0.000_1).transport.connections, Some(1));
        assert_eq!(LoadPlan::new(&shared, Sizing::Smoke).transport.connections, Some(1));
        // The command line's figure is clamped to the users, never below one.
        let over = declared.clone().with_transport(Transport { connections: Some(1_000), ..declared.transport });
        assert_eq!(over.transport.connections, Some(150));
        let report = over.config_report(&shared, None);
        assert_eq!((report.connections, report.pipeline, report.http2), (Some(150), Some(16), false));
        let h2 = declared.with_transport(Transport { connections: None, pipeline: Some(4), protocol: Protocol::Http2 });
        let report = h2.config_report(&shared, None);
        assert_eq!((report.connections, report.pipeline, report.http2), (None, None, true));
    }

    #[test]
    fn durations_rates_and_ramps_scale_too() {
        static STAGES: [Stage; 2] = [
            Stage { duration: Duration::from_secs(10), target: 100 },
            Stage { duration: Duration::from_secs(5), target: 0 },
        ];
        let ramp = ScenarioConfig { stages: &STAGES, load: Load::Duration(Duration::from_secs(15)), ..config() };
        let plan = scaled(&ramp, 0.1);
        assert_eq!(plan.load, Load::Duration(Duration::from_millis(1_500)));
        assert_eq!(
            plan.stages,
            [
                Stage { duration: Duration::from_secs(1), target: 10 },
                Stage { duration: Duration::from_millis(500), target: 0 }
            ]
        );
        // Never below 100 ms, and a declared duration shorter than that is left alone.
        assert_eq!(scaled(&ramp, 0.001).load, Load::Duration(MIN_DURATION));
        let short = ScenarioConfig { load: Load::Duration(Duration::from_millis(50)), ..config() };
        assert_eq!(scaled(&short, 0.5).load, Load::Duration(Duration::from_millis(50)));

        let open = ScenarioConfig { rate: Some(Rate { iterations: 2_000, per: Duration::from_secs(1) }), ..config() };
        assert_eq!(scaled(&open, 0.01).rate, Some(Rate { iterations: 20, per: Duration::from_secs(1) }));
    }

    #[test]
    fn a_smoke_run_is_one_iteration_of_one_user_and_the_report_says_what_ran() {
        let open = ScenarioConfig {
            rate: Some(Rate { iterations: 2_000, per: Duration::from_secs(1) }),
            think_time: Some(ThinkTime { min: Duration::from_secs(1), max: Duration::from_secs(2) }),
            ..config()
        };
        let smoke = LoadPlan::new(&open, Sizing::Smoke);
        assert_eq!((smoke.concurrency, smoke.load, smoke.rate, smoke.warmup), (1, Load::Count(1), None, None));
        assert!(!smoke.is_open() && smoke.think_time.is_none());
        let report = smoke.config_report(&open, Some("http://127.0.0.1:1"));
        assert_eq!((report.concurrency, report.count, report.rate), (1, Some(1), None));
        assert_eq!(report.target.as_deref(), Some("http://127.0.0.1:1"));
        let report = scaled(&open, 0.5).config_report(&open, None);
        assert_eq!(
            (report.concurrency, report.count, report.rate, report.scale),
            (75, Some(3_750), Some(1_000.0), Some(0.5))
        );
        assert_eq!((report.warmup_count, report.think_time_ms), (Some(25), Some((1_000, 2_000))));
    }

    /// Every shard of `n`'s part of `plan`.
    fn shards(plan: &LoadPlan, n: u32) -> Vec<LoadPlan> {
        (0..n).filter_map(|i| Shard::new(i, n)).map(|shard| plan.clone().shard(shard)).collect()
    }

    #[test]
    fn shards_add_up_exactly_with_the_remainders_on_the_first_ones() {
        static STAGES: [Stage; 3] = [
            Stage { duration: Duration::from_secs(10), target: 100 },
            Stage { duration: Duration::from_secs(10), target: 7 },
            Stage { duration: Duration::from_secs(5), target: 0 },
        ];
        let closed = ScenarioConfig {
            concurrency: 7,
            load: Load::Count(1_000),
            warmup: Some(Load::Count(50)),
            transport: Transport { connections: Some(5), pipeline: Some(4), protocol: Protocol::Http1 },
            ..config()
        };
        let parts = shards(&LoadPlan::new(&closed, Sizing::Declared), 3);
        let figures: Vec<_> =
            parts.iter().map(|p| (p.concurrency, p.first_user, p.load, p.warmup, p.transport.connections)).collect();
        assert_eq!(
            figures,
            [
                (3, 0, Load::Count(334), Some(Load::Count(17)), Some(2)),
                (2, 3, Load::Count(333), Some(Load::Count(17)), Some(2)),
                (2, 5, Load::Count(333), Some(Load::Count(16)), Some(1)),
            ]
        );
        // The report's `config` is the whole scenario's, `share` the shard's.
        assert_eq!(parts[1].config_report(&closed, None).connections, Some(2));
        let share = parts[1].share_report();
        assert_eq!((share.concurrency, share.count, share.rate, share.first_user), (2, Some(333), None, 3));

        let ramp = ScenarioConfig {
            stages: &STAGES,
            load: Load::Duration(Duration::from_secs(25)),
            concurrency: 100,
            ..config()
        };
        let parts = shards(&LoadPlan::new(&ramp, Sizing::Declared), 3);
        let targets: Vec<Vec<u32>> = parts.iter().map(|p| p.stages.iter().map(|s| s.target).collect()).collect();
        assert_eq!(targets, [[34, 3, 0], [33, 2, 0], [33, 2, 0]]);
        assert!(parts.iter().all(|p| p.load == Load::Duration(Duration::from_secs(25))), "times are not split");
        assert_eq!(parts.iter().map(|p| p.first_user).collect::<Vec<_>>(), [0, 34, 67]);

        // 2,000/s over 3: 667, 667 and 666 a second; a scenario's rate stages likewise.
        static RATES: [RateStage; 2] = [
            RateStage { duration: Duration::from_secs(10), rate: 1_000 },
            RateStage { duration: Duration::from_secs(10), rate: 0 },
        ];
        let open = ScenarioConfig {
            concurrency: 50,
            rate: Some(Rate { iterations: 2_000, per: Duration::from_secs(1) }),
            ..config()
        };
        let parts = shards(&LoadPlan::new(&open, Sizing::Declared), 3);
        let rates: Vec<Option<f64>> = parts.iter().map(|p| p.share_report().rate).collect();
        assert_eq!(rates, [Some(667.0), Some(667.0), Some(666.0)]);
        let ramp = ScenarioConfig { rate: None, rate_stages: &RATES, ..open };
        let parts = shards(&LoadPlan::new(&ramp, Sizing::Declared), 3);
        let rates: Vec<Vec<u64>> = parts.iter().map(|p| p.rate_stages.iter().map(|s| s.rate).collect()).collect();
        assert_eq!(rates, [[334, 0], [333, 0], [333, 0]]);
        let arrivals: f64 = parts.iter().map(|p| ramp::rate_stages_arrivals(&p.rate_stages)).sum();
        assert_eq!(arrivals, ramp::rate_stages_arrivals(&RATES));

        // Fewer arrivals per period than shards: a longer period, every shard some, the sum exact.
        let slow = ScenarioConfig { rate: Some(Rate { iterations: 2, per: Duration::from_secs(1) }), ..open };
        let parts = shards(&LoadPlan::new(&slow, Sizing::Declared), 3);
        let rates: Vec<Rate> = parts.iter().filter_map(|p| p.rate).collect();
        assert_eq!(rates.iter().map(|r| (r.iterations, r.per.as_secs())).collect::<Vec<_>>(), [(2, 2), (1, 2), (1, 2)]);
        assert!((rates.iter().map(Rate::per_second).sum::<f64>() - 2.0).abs() < 1e-9);
    }

    #[test]
    fn shards_split_after_scaling_and_one_shard_is_the_whole() {
        let whole = LoadPlan::new(&config(), Sizing::Scaled(0.1));
        assert_eq!((whole.concurrency, whole.load), (15, Load::Count(750)));
        let parts = shards(&whole, 4);
        assert_eq!(parts.iter().map(|p| p.concurrency).collect::<Vec<_>>(), [4, 4, 4, 3]);
        assert_eq!(parts.iter().map(|p| p.first_user).collect::<Vec<_>>(), [0, 4, 8, 12]);
        let counts: u64 = parts.iter().map(|p| if let Load::Count(n) = p.load { n } else { 0 }).sum();
        assert_eq!(counts, 750);
        let alone = Shard::new(0, 1).map(|shard| whole.clone().shard(shard));
        assert_eq!(alone, Some(whole));
    }

    #[test]
    fn a_scenario_with_fewer_users_than_shards_is_refused() {
        let plan = LoadPlan::new(&ScenarioConfig { concurrency: 2, ..config() }, Sizing::Declared);
        let refusal = |n: u32| Shard::new(0, n).and_then(|s| s.too_few_users("two", plan.concurrency));
        assert_eq!(refusal(2), None);
        assert_eq!(
            refusal(3).as_deref(),
            Some(
                "scenario `two` has 2 virtual users, fewer than the 3 shards of --shard 0/3: each shard needs at least one"
            )
        );
        // Left to run anyway, the last shard would have no user.
        assert_eq!(shards(&plan, 3).iter().map(|p| p.concurrency).collect::<Vec<_>>(), [1, 1, 0]);
    }

    #[test]
    fn factors_outside_zero_to_one_are_refused() {
        assert_eq!(parse_scale("0.01"), Ok(0.01));
        assert_eq!(parse_scale("1"), Ok(1.0));
        for bad in ["0", "-0.5", "1.5", "NaN", "inf", "ten", ""] {
            assert!(parse_scale(bad).unwrap_err().contains("is not a scale"), "{bad}");
        }
    }
}
