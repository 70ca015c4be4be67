//! The business journey, LoadRunner's classic: 100 users log in, insert three records and log
//! out, while 150 other users log in, query a random record of 10,000 three times and log out,
//! against a small application backed by SQLite (`loadbench_examples::journey`).
//!
//! The application runs as a process of its own (the `demo-app` binary), started and stopped by
//! this bench, so that the table can show its CPU and memory apart from the load generator's;
//! each step of a journey has its own row, with its errors and timeouts.

use loadbench::Ctx;
use loadbench_examples::journey::RECORDS;

/// Logs in as `user{n}` and returns the `Authorization` header of the session.
async fn log_in(ctx: &mut Ctx, n: u32) -> loadbench::Result<String> {
    let credentials = format!(r#"{{"user":"user{n}","password":"password{n}"}}"#);
    let response = ctx
        .post("/login")
        .header("content-type", "application/json")
        .body(credentials)
        .send()
        .await?
        .expect_status(200)?;
    let answer: serde_json::Value = serde_json::from_str(response.text()?)?;
    match answer.get("token").and_then(serde_json::Value::as_str) {
        Some(token) => Ok(format!("Bearer {token}")),
        None => Err(loadbench::Error::msg("login answered no token")),
    }
}

async fn log_out(ctx: &mut Ctx, auth: &str) -> loadbench::Result<()> {
    ctx.post("/logout").header("authorization", auth).send().await?.expect_status(204)?;
    Ok(())
}

// 100 users × 50 journeys; 5 requests each.
#[loadbench::scenario(group = "journey", concurrency = 100, count = 5_000, timeout = "5s")]
async fn writer(ctx: &mut Ctx) -> loadbench::Result<()> {
    // Accounts user1 to user100; the readers have the next 150.
    let account = 1 + ctx.user();
    let auth = ctx.step("login", async |ctx| log_in(ctx, account).await).await?;
    for item in 1..=3 {
        ctx.step("insert", async |ctx| {
            let record = format!(r#"{{"item":"widget {item}","quantity":{item}}}"#);
            let response = ctx
                .post("/records")
                .header("authorization", &auth)
                .header("content-type", "application/json")
                .body(record)
                .send()
                .await?
                .expect_status(201)?;
            if !response.text()?.starts_with(r#"{"id":"#) {
                return Err(loadbench::Error::msg("insert answered no id"));
            }
            Ok(())
        })
        .await?;
    }
    ctx.step("logout", async |ctx| log_out(ctx, &auth).await).await
}

// 150 users × 50 journeys, at the same time as the writers; 5 requests each.
#[loadbench::scenario(group = "journey", concurrency = 150, count = 7_500, timeout = "5s")]
async fn reader(ctx: &mut Ctx) -> loadbench::Result<()> {
    let account = 101 + ctx.user();
    let auth = ctx.step("login", async |ctx| log_in(ctx, account).await).await?;
    for _ in 0..3 {
        let id = fastrand::u32(1..=RECORDS);
        ctx.step("query", async |ctx| {
            let response =
                ctx.get(&format!("/records/{id}")).header("authorization", &auth).send().await?.expect_status(200)?;
            if !response.text()?.contains(&format!(r#""id":{id},"#)) {
                return Err(loadbench::Error::msg(format!("record {id} answered another record")));
            }
            Ok(())
        })
        .await?;
    }
    ctx.step("logout", async |ctx| log_out(ctx, &auth).await).await
}

fn main() -> std::process::ExitCode {
    loadbench::Harness::new()
        .default_target_process("app", std::process::Command::new(env!("CARGO_BIN_EXE_demo-app")))
        .run()
}
