//! Scenario names select, label and (later) compare results, so two scenarios with one name are
//! refused before anything runs. This needs a test binary of its own: the duplicate would make
//! every other run in the same binary fail too.

#[loadbench::scenario(count = 1)]
async fn checkout(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?;
    Ok(())
}

#[loadbench::scenario(name = "checkout", count = 1)]
async fn checkout_again(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?;
    Ok(())
}

#[test]
fn two_scenarios_with_one_name_are_a_configuration_error() {
    // Port 9 on loopback: nothing is sent, the run is refused first.
    let err = loadbench::Harness::new().target("http://127.0.0.1:9").progress(false).run_report();
    let message = err.expect_err("duplicate names are refused").to_string();
    assert!(message.starts_with("two scenarios are named `checkout` ("), "{message}");
    assert!(message.contains("duplicate_names.rs:5"), "{message}");
    assert!(message.contains("duplicate_names.rs:11"), "{message}");
}
