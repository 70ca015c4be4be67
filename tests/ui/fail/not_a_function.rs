#[loadbench::scenario(count = 1)]
struct Hello;

fn main() {}
