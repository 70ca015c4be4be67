// Every problem is reported in one build, arguments first, then the signature.
#[loadbench::scenario(concurrency = 0, foo = 1, count = 10, duration = "1s", name = "")]
fn hello(ctx: &mut loadbench::Ctx, extra: u8) {
    let _ = (ctx, extra);
}

fn main() {}
