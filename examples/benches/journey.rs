//! The business journey, LoadRunner's classic: 100 users log in, insert three records and log
//! out, while 150 other users log in, query a random record of 10,000 three times and log out,
//! against a small application backed by SQLite (`loadbench_examples::journey`).
//!
//! What a session-based application needs, each in a line or two:
//! - the accounts come from a CSV file (`data/users.csv`, a feeder): each writer keeps one
//!   account (`feed_mode = "per_user"`), each reader's journey takes one at random;
//! - the login answers a session cookie, which the user's cookie jar sends from then on (no
//!   header to carry by hand) and forgets when the iteration ends;
//! - bodies go out and come back as JSON through serde (`.json(…)`, `response.json()`);
//! - the queries of different records are one row, `GET /records/{id}` (a request name);
//! - what the answers hold is checked (`ctx.check`) without failing the journey, and the
//!   readers' `checks` threshold fails the run if more than 1 % of the checks failed.
//!
//! The application runs as a process of its own (the `demo-app` binary), started and stopped by
//! this bench, so that the table can show its CPU and memory apart from the load generator's;
//! each step of a journey has its own row, with its errors and timeouts.

use loadbench::Ctx;
use loadbench_examples::journey::RECORDS;
use serde_json::{Value, json};

/// Logs in with the credentials of the account the feed hands this journey; the session comes
/// back as the cookie `session`, kept in the user's jar.
async fn log_in(ctx: &mut Ctx) -> loadbench::Result<()> {
    let account = ctx.feed()?;
    let credentials = json!({ "user": account.get("user")?, "password": account.get("password")? });
    let answer: Value = ctx.post("/login").json(&credentials).send().await?.expect_status(200)?.json()?;
    ctx.check("login answers a token", answer.get("token").is_some_and(Value::is_string));
    let has_cookie = ctx.cookies().get("session").is_some();
    ctx.check("login sets the session cookie", has_cookie);
    Ok(())
}

async fn log_out(ctx: &mut Ctx) -> loadbench::Result<()> {
    ctx.post("/logout").send().await?.expect_status(204)?;
    Ok(())
}

// 100 users × 50 journeys; 5 requests each. Writer `u` logs in as the account on line `u + 1`
// of the file.
#[loadbench::scenario(
    group = "journey",
    concurrency = 100,
    count = 5_000,
    timeout = "5s",
    feed = "data/users.csv",
    feed_mode = "per_user"
)]
async fn writer(ctx: &mut Ctx) -> loadbench::Result<()> {
    ctx.step("login", async |ctx| log_in(ctx).await).await?;
    for item in 1..=3 {
        ctx.step("insert", async |ctx| {
            let record = json!({ "item": format!("widget {item}"), "quantity": item });
            let answer: Value = ctx.post("/records").json(&record).send().await?.expect_status(201)?.json()?;
            ctx.check("insert answers an id", answer.get("id").is_some_and(Value::is_u64));
            Ok(())
        })
        .await?;
    }
    ctx.step("logout", async |ctx| log_out(ctx).await).await
}

// 150 users × 50 journeys, at the same time as the writers; 5 requests each, as a random account
// of the file.
#[loadbench::scenario(
    group = "journey",
    concurrency = 150,
    count = 7_500,
    timeout = "5s",
    feed = "data/users.csv",
    feed_mode = "random",
    thresholds(checks > 0.99)
)]
async fn reader(ctx: &mut Ctx) -> loadbench::Result<()> {
    ctx.step("login", async |ctx| log_in(ctx).await).await?;
    for _ in 0..3 {
        let id = fastrand::u32(1..=RECORDS);
        ctx.step("query", async |ctx| {
            let record: Value = ctx
                .get(&format!("/records/{id}"))
                .name("GET /records/{id}")
                .send()
                .await?
                .expect_status(200)?
                .json()?;
            ctx.check("the record is the one asked for", record.get("id").and_then(Value::as_u64) == Some(id.into()));
            Ok(())
        })
        .await?;
    }
    ctx.step("logout", async |ctx| log_out(ctx).await).await
}

fn main() -> std::process::ExitCode {
    loadbench::Harness::new()
        .default_target_process("app", std::process::Command::new(env!("CARGO_BIN_EXE_demo-app")))
        .run()
}
