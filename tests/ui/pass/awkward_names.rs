//! Names that could clash with the expansion: a raw identifier, and a scenario called `user`
//! (the generated function's parameter is hygienic).

use loadbench::Ctx;

#[loadbench::scenario(count = 1)]
async fn r#match(ctx: &mut Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?;
    Ok(())
}

#[loadbench::scenario(count = 1)]
async fn user(_: &mut Ctx) -> loadbench::Result<()> {
    Ok(())
}

macro_rules! scenario_with {
    ($name:ident, $concurrency:expr) => {
        #[loadbench::scenario(concurrency = $concurrency, count = 1)]
        async fn $name(_ctx: &mut Ctx) -> loadbench::Result<()> {
            Ok(())
        }
    };
}

scenario_with!(from_a_macro, 4);

fn main() {}
