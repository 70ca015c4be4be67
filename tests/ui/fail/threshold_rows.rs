// A threshold on a row: its name is a string that is not empty, its metric one a row has, and
// its condition the grammar's; every mistake is reported, pointing at what to change.
#[loadbench::scenario(
    count = 1,
    thresholds(
        "": p99 < "50ms",
        "login": checks > 0.99,
        "login": saturated < 1,
        login: p99 < "1s",
        "login": p100 < "1s",
        "login": p99 < 50,
        "login":,
    )
)]
async fn hello(_ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    Ok(())
}

fn main() {}
