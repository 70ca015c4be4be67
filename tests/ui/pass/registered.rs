//! What the attribute registers: running this binary checks the entries end to end.

use std::time::Duration;

use loadbench::__private::{Load, Protocol, Rate, ScenarioEntry, ThinkTime, Threshold, Transport, inventory};

#[loadbench::scenario(count = 100_000)]
async fn defaults(_ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    Ok(())
}

mod shop {
    #[loadbench::scenario(
        concurrency = 1000,
        duration = "1m 30s",
        timeout = "500ms",
        name = "checkout",
        target = "http://127.0.0.1:8080/api",
        think_time = "250ms..1s"
    )]
    async fn everything(_ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
        Ok(())
    }
}

// Every metric, with each kind of limit; the runtime must read them as its own parser does.
#[loadbench::scenario(
    count = 10,
    thresholds(
        p50 < "1ms",
        p90 <= "1s 500ms",
        p99 < "50ms",
        p99_9 < "100ms",
        max < "1s",
        mean > "250us",
        error_rate < 0.01,
        rps >= 1000,
        failed <= 0,
    )
)]
async fn guarded(_ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    Ok(())
}

// The open model.
#[loadbench::scenario(rate = "120/m", max_concurrency = 7, count = 10, warmup = "1m")]
async fn arrivals(_ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    Ok(())
}

// Users not written: the open model's default, and a ramp's highest target.
#[loadbench::scenario(rate = 50, count = 10)]
async fn open_default(_ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    Ok(())
}

#[loadbench::scenario(stages = [("1s", 4), ("1s", 9), ("1s", 0)])]
async fn ramped(_ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    Ok(())
}

// Compiled out, and so must its registration be.
#[loadbench::scenario(count = 1)]
#[cfg(any())]
async fn disabled(_ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    Ok(())
}

// Shared connections: TechEmpower's plaintext setup, and h2load's `-c 10 -m 100`.
#[loadbench::scenario(concurrency = 256, connections = 16, pipeline = 16, count = 1_000)]
async fn plaintext(_ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    Ok(())
}

#[loadbench::scenario(concurrency = 1000, connections = 10, http2 = true, count = 1_000)]
async fn streams(_ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    Ok(())
}

// HTTP/3 on shared QUIC connections, and on one per user.
#[loadbench::scenario(concurrency = 100, connections = 4, http3 = true, count = 1_000)]
async fn quic(_ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    Ok(())
}

#[loadbench::scenario(concurrency = 10, http3 = true, http2 = false, count = 1_000)]
async fn quic_per_user(_ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    Ok(())
}

fn entry(name: &str) -> &'static ScenarioEntry {
    match inventory::iter::<ScenarioEntry>().find(|e| e.name == name) {
        Some(entry) => entry,
        None => panic!("`{name}` is not registered"),
    }
}

fn main() {
    assert_eq!(inventory::iter::<ScenarioEntry>().count(), 10);
    let plaintext = entry("plaintext").config.transport;
    assert_eq!(plaintext, Transport { connections: Some(16), pipeline: Some(16), protocol: Protocol::Http1 });
    let streams = entry("streams").config.transport;
    assert_eq!(streams, Transport { connections: Some(10), pipeline: None, protocol: Protocol::Http2 });
    let quic = entry("quic").config.transport;
    assert_eq!(quic, Transport { connections: Some(4), pipeline: None, protocol: Protocol::Http3 });
    let quic_per_user = entry("quic_per_user").config.transport;
    assert_eq!(quic_per_user, Transport { connections: None, pipeline: None, protocol: Protocol::Http3 });
    assert_eq!(entry("defaults").config.transport, Transport::DEFAULT);

    let defaults = entry("defaults");
    // trybuild picks the crate name, so only the module part is known.
    assert!(!defaults.module_path.contains("::"), "{}", defaults.module_path);
    assert!(defaults.file.ends_with("registered.rs"), "{}", defaults.file);
    assert_eq!(defaults.line, 7, "the line of the attribute");
    // Not written: the runtime's default, one user in the closed model.
    assert_eq!((defaults.config.concurrency, defaults.config.users()), (None, 1));
    assert_eq!(defaults.config.load, Load::Count(100_000));
    assert_eq!(defaults.config.timeout, None);
    assert_eq!(defaults.config.target, None);
    assert!(defaults.config.thresholds.is_empty());
    assert_eq!(defaults.config.rate, None);

    let open_default = entry("open_default").config;
    assert_eq!((open_default.concurrency, open_default.users()), (None, 100));
    let ramped = entry("ramped").config;
    assert_eq!((ramped.concurrency, ramped.users()), (None, 9));

    let arrivals = entry("arrivals");
    assert_eq!(arrivals.config.rate, Some(Rate { iterations: 120, per: Duration::from_secs(60) }));
    assert_eq!((arrivals.config.concurrency, arrivals.config.users()), (Some(7), 7));
    assert_eq!(arrivals.config.load, Load::Count(10));
    assert_eq!(arrivals.config.warmup, Some(Load::Duration(Duration::from_secs(60))));
    assert_eq!(defaults.config.warmup, None);
    assert_eq!(defaults.config.think_time, None);
    let thinking = entry("checkout");
    assert_eq!(
        thinking.config.think_time,
        Some(ThinkTime { min: Duration::from_millis(250), max: Duration::from_secs(1) })
    );

    let parsed: Vec<Threshold> = [
        "p50<1ms",
        "p90<=1s 500ms",
        "p99<50ms",
        "p99_9<100ms",
        "max<1s",
        "mean>250us",
        "error_rate<0.01",
        "rps>=1000",
        "failed<=0",
    ]
    .iter()
    .map(|text| text.parse().unwrap_or_else(|e| panic!("{text}: {e}")))
    .collect();
    assert_eq!(entry("guarded").config.thresholds, parsed);

    let everything = entry("checkout");
    assert!(everything.module_path.ends_with("::shop"), "{}", everything.module_path);
    assert_eq!(everything.config.concurrency, Some(1000));
    assert_eq!(everything.config.load, Load::Duration(Duration::from_secs(90)));
    assert_eq!(everything.config.timeout, Some(Duration::from_millis(500)));
    assert_eq!(everything.config.target, Some("http://127.0.0.1:8080/api"));
}
