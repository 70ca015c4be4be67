#[loadbench::scenario(count = 1)]
async fn hello(ctx: &mut loadbench::Ctx) {
    let _ = ctx.get("/").send().await;
}

fn main() {}
