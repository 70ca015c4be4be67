// The shape is right, so the macro accepts it; rustc's type error points at the function name.
#[loadbench::scenario(count = 1)]
async fn hello(name: &mut String) -> loadbench::Result<()> {
    name.push('!');
    Ok(())
}

fn main() {}
