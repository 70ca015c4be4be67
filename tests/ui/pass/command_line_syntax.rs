//! Values written as on the command line, which the attribute accepts too since both follow
//! loadbench-grammar: a rate string without a unit (`--rate 2000`), a latency limit unquoted and a
//! fraction as a percentage (`--threshold "p99<50ms"`, `--threshold "error_rate<=1%"`). Running
//! this binary checks they register what the quoted forms do.

use std::time::Duration;

use loadbench::__private::{Rate, ScenarioEntry, Threshold, inventory};

#[loadbench::scenario(rate = "2000", max_concurrency = 10, count = 1)]
async fn per_second(_ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    Ok(())
}

#[loadbench::scenario(count = 1, thresholds(p99 < 50ms, p50 >= 1s 500ms, error_rate <= 1%, rps > 1_000))]
async fn unquoted(_ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    Ok(())
}

fn entry(name: &str) -> &'static ScenarioEntry {
    match inventory::iter::<ScenarioEntry>().find(|e| e.name == name) {
        Some(entry) => entry,
        None => panic!("`{name}` is not registered"),
    }
}

fn main() {
    assert_eq!(entry("per_second").config.rate, Some(Rate { iterations: 2000, per: Duration::from_secs(1) }));

    let parsed: Vec<Threshold> = ["p99<50ms", "p50>=1s 500ms", "error_rate<=0.01", "rps>1000"]
        .iter()
        .map(|text| text.parse().unwrap_or_else(|e| panic!("{text}: {e}")))
        .collect();
    assert_eq!(entry("unquoted").config.thresholds, parsed);
}
