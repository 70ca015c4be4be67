//! The runtime's own cost per iteration, with no I/O: a scenario whose body does nothing, run by
//! the real executor (worker thread, event loop, virtual-user loop, work claiming, HDR recording,
//! progress counters). Whatever a request costs comes on top of this.
//!
//! `cargo bench -p loadbench-runtime --bench overhead`; divan reports the time per iteration.

use divan::counter::ItemsCount;

const ITERATIONS: u64 = 1_000_000;

#[loadbench::scenario(concurrency = 1, count = 1_000_000)]
async fn noop_one_user(_ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    Ok(())
}

#[loadbench::scenario(concurrency = 100, count = 1_000_000)]
async fn noop_100_users(_ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    Ok(())
}

fn run(scenario: &str) {
    // Nothing listens there and nothing is sent: the bodies make no request.
    let report = loadbench::Harness::new()
        .target("http://127.0.0.1:9")
        .only(scenario)
        .worker_threads(1)
        .progress(false)
        .run_report();
    let iterations = report.map(|r| r.scenarios.iter().map(|s| s.ok).sum::<u64>());
    assert!(matches!(iterations, Ok(ITERATIONS)), "{scenario}: {iterations:?}");
}

/// One user on one worker thread.
#[divan::bench(sample_count = 10, sample_size = 1)]
fn one_user(bencher: divan::Bencher) {
    bencher.counter(ItemsCount::new(ITERATIONS)).bench(|| run("noop_one_user"));
}

/// 100 users sharing one worker thread: adds the event loop's switching between them.
#[divan::bench(sample_count = 10, sample_size = 1)]
fn hundred_users(bencher: divan::Bencher) {
    bencher.counter(ItemsCount::new(ITERATIONS)).bench(|| run("noop_100_users"));
}

fn main() {
    divan::main();
}
