// `()` is plainly not a scenario's result: the expected signature, on the return type.
#[loadbench::scenario(count = 1)]
async fn hello(ctx: &mut loadbench::Ctx) -> () {
    let _ = ctx;
}

fn main() {}
