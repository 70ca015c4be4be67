use super::*;
use crate::config::Protocol;

fn config() -> ScenarioConfig {
    ScenarioConfig {
        warmup: Some(Load::Count(50)),
        concurrency: Some(150),
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
        concurrency: Some(7),
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
        concurrency: Some(100),
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
        concurrency: Some(50),
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
    let plan = LoadPlan::new(&ScenarioConfig { concurrency: Some(2), ..config() }, Sizing::Declared);
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
