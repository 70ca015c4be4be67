// A feed's file must be one the runtime reads; its mode and end are words from a list, and each
// goes with what it applies to.
#[loadbench::scenario(count = 1, feed = "users.txt")]
async fn not_csv(_ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    Ok(())
}

#[loadbench::scenario(count = 1, feed = "users.csv", feed_mode = "per-user", feed_end = "never")]
async fn misspelt(_ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    Ok(())
}

#[loadbench::scenario(count = 1, feed = "users.csv", feed_mode = "random", feed_end = "stop")]
async fn random_stop(_ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    Ok(())
}

#[loadbench::scenario(count = 1, feed_mode = "random")]
async fn no_file(_ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    Ok(())
}

fn main() {}
