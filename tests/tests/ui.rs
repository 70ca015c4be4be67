//! Compile tests for `#[loadbench::scenario]`: what it accepts (`ui/pass`) and the errors it
//! reports (`ui/fail`, with the expected compiler output in `.stderr` files next to each case).
//!
//! The expected output depends on the compiler, which `rust-toolchain.toml` pins. After an
//! intended change to a message, bless the new output with
//! `TRYBUILD=overwrite cargo test -p loadbench-tests --test ui` and review the diff.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("ui/pass/*.rs");
    t.compile_fail("ui/fail/*.rs");
}
