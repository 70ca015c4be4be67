//! Thresholds on a scenario's named rows, beside its own: registered as the runtime's parser
//! reads the command line's `{ROW}:CONDITION`.

use loadbench::__private::{RowThreshold, ScenarioEntry, Threshold, inventory};

#[loadbench::scenario(
    count = 10,
    thresholds(
        "GET /items/{id}": p99 < "50ms",
        error_rate < 0.01,
        "login": max < "1s",
        "login": error_rate <= 1%,
        "ws echo": rps >= 10,
        "a \"quoted\" name": failed <= 0,
    )
)]
async fn rows(_ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    Ok(())
}

fn main() {
    let Some(entry) = inventory::iter::<ScenarioEntry>().find(|e| e.name == "rows") else {
        panic!("`rows` is not registered");
    };
    let parsed: Threshold = "error_rate < 0.01".parse().unwrap();
    assert_eq!(entry.config.thresholds, [parsed]);
    let row = |name: &'static str, condition: &str| RowThreshold::new(name, condition.parse().unwrap()).unwrap();
    assert_eq!(
        entry.config.row_thresholds,
        [
            row("GET /items/{id}", "p99 < 50ms"),
            row("login", "max < 1s"),
            row("login", "error_rate <= 1%"),
            row("ws echo", "rps >= 10"),
            row("a \"quoted\" name", "failed <= 0"),
        ]
    );
}
