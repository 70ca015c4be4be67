//! The scenarios shown in README.md and docs/scenarios.md, kept compiling.

#[loadbench::scenario(concurrency = 10, duration = "10s")]
async fn home(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?.expect_status(200)?;
    Ok(())
}

#[loadbench::scenario(concurrency = 50, count = 20_000)]
async fn create_item(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.post("/items")
        .header("content-type", "application/json")
        .body(r#"{"name":"widget"}"#)
        .send()
        .await?
        .expect_status(201)?;
    Ok(())
}

#[loadbench::scenario(concurrency = 20, duration = "30s", timeout = "2s")]
async fn get_item(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    let path = format!("/items/{}", ctx.user() + 1); // each virtual user its own item
    let body = ctx.get(&path).send().await?.expect_status(200)?;
    let _id: u64 = body.text()?.trim().parse()?; // any error converts with `?`
    Ok(())
}

#[loadbench::scenario(concurrency = 50, count = 20_000, thresholds(p99 < "50ms", error_rate < 0.01, rps > 1000))]
async fn checkout(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/cart").send().await?.expect_status(200)?;
    Ok(())
}

#[loadbench::scenario(rate = "2000/s", max_concurrency = 200, duration = "30s")]
#[loadbench::scenario(name = "search_per_minute", rate = "120/m", count = 600)]
#[loadbench::scenario(name = "search_warm", concurrency = 20, duration = "1m", warmup = "10s")]
#[loadbench::scenario(name = "search_warm_count", concurrency = 20, count = 10_000, warmup = 500)]
#[loadbench::scenario(name = "search_ramp", stages = [("10s", 100), ("30s", 100), ("10s", 0)])]
#[loadbench::scenario(name = "search_rate_ramp", rate_stages = [("10s", 500), ("30s", 500), ("10s", 0)], max_concurrency = 200)]
#[loadbench::scenario(name = "browse", concurrency = 100, duration = "1m", think_time = "1s..3s")]
#[loadbench::scenario(name = "poll", concurrency = 10, count = 1_000, think_time = "500ms")]
async fn search(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/search?q=widget").send().await?.expect_status(200)?;
    Ok(())
}

#[loadbench::scenario(concurrency = 100, duration = "1m")]
async fn journey(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.step("insert", async |ctx| {
        ctx.post("/items").body(r#"{"name":"widget"}"#).send().await?.expect_status(201)?;
        Ok(())
    })
    .await?;
    ctx.step("query", async |ctx| {
        ctx.get("/items?name=widget").send().await?.expect_status(200)?;
        Ok(())
    })
    .await
}

async fn log_in(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.post("/login").body(r#"{"user":"demo"}"#).send().await?.expect_status(200)?;
    Ok(())
}

async fn log_out(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.post("/logout").send().await?.expect_success()?;
    Ok(())
}

#[loadbench::scenario(concurrency = 50, duration = "1m", setup = log_in, teardown = log_out)]
async fn account(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/account").send().await?.expect_status(200)?;
    Ok(())
}

#[loadbench::scenario(group = "shop", concurrency = 100, duration = "1m")]
async fn insert_records(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.post("/records").body("{}").send().await?.expect_status(201)?;
    Ok(())
}

#[loadbench::scenario(group = "shop", concurrency = 150, duration = "1m")]
async fn query_records(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/records?limit=10").send().await?.expect_status(200)?;
    Ok(())
}

#[loadbench::scenario(concurrency = 10, count = 100)]
async fn other_methods(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.put("/items/1").body("{}").send().await?.expect_success()?;
    ctx.delete("/items/1").send().await?.expect_success()?;
    let response = ctx.request(loadbench::Method::PATCH, "/items/2").send().await?;
    if response.status() == loadbench::StatusCode::CONFLICT || response.headers().is_empty() {
        return Err(loadbench::Error::msg("conflict"));
    }
    Ok(())
}

// The README's JSON bodies, with nothing but what the runtime re-exports.
#[loadbench::scenario(concurrency = 10, count = 100)]
async fn json_bodies(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    let item = loadbench::json!({ "name": "widget", "price": 3 });
    let created: loadbench::JsonValue = ctx.post("/items").json(&item).send().await?.expect_status(201)?.json()?;
    ctx.get(&format!("/items/{}", created["id"])).send().await?.expect_status(200)?;
    Ok(())
}

// The README's `main` with a default target; never called here, because trybuild runs `main`.
#[allow(dead_code)]
fn readme_main() -> std::process::ExitCode {
    loadbench::Harness::new().default_target(|| Ok("http://127.0.0.1:8080".to_owned())).run()
}

// The README's `main` that starts, watches and stops a server process (`env!("CARGO_BIN_EXE_…")`
// there, which only a package with that binary has).
#[allow(dead_code)]
fn readme_process_main() -> std::process::ExitCode {
    loadbench::Harness::new()
        .default_target_process("app", std::process::Command::new("demo-app"))
        .watch("db", 4242)
        .scale(0.1)
        .run()
}

// Sessions, request names, data feeders and checks.

#[loadbench::scenario(concurrency = 50, duration = "1m")]
async fn session(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    let user = ctx.user();
    let credentials = loadbench::json!({ "user": format!("user{user}"), "password": "secret" });
    ctx.post("/login").json(&credentials).send().await?.expect_status(200)?;
    // The session cookie of the login's answer goes with this request by itself.
    ctx.get("/account").send().await?.expect_status(200)?;
    Ok(())
}

#[loadbench::scenario(concurrency = 20, count = 10_000)]
async fn items(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    let id = ctx.user() % 1_000; // a u32
    ctx.get(&format!("/items/{id}")).name("GET /items/{id}").send().await?.expect_status(200)?;
    Ok(())
}

#[derive(serde::Deserialize)]
struct Account {
    user: String,
    password: String,
}

#[loadbench::scenario(concurrency = 100, count = 5_000, feed = "data/users.csv", feed_mode = "per_user")]
async fn fed_log_in(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    let record = ctx.feed()?;
    let user = record.get("user")?; // a column, as text
    let account: Account = record.parse()?; // or the whole record, through serde
    assert_eq!(user, account.user);
    let credentials = loadbench::json!({ "user": account.user, "password": account.password });
    ctx.post("/login").json(&credentials).send().await?.expect_status(200)?;
    Ok(())
}

#[loadbench::scenario(concurrency = 10, count = 1_000, thresholds(checks > 0.99, p95 < "20ms"))]
async fn item(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    let response = ctx.get("/items/1").send().await?;
    ctx.check("status is 200", response.status() == 200);
    if !ctx.check("has an id", response.text()?.contains(r#""id""#)) {
        return Ok(()); // nothing more to look at
    }
    Ok(())
}

// Connections: HTTP/2 and pipelining.
#[loadbench::scenario(concurrency = 256, connections = 16, pipeline = 16, duration = "15s")]
async fn plaintext(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/plaintext").send().await?.expect_status(200)?;
    Ok(())
}

#[loadbench::scenario(concurrency = 1000, connections = 10, http2 = true, count = 100_000)]
async fn streams(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?.expect_status(200)?;
    Ok(())
}

#[loadbench::scenario(concurrency = 50, http2 = true, duration = "30s")]
async fn clients(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?.expect_status(200)?;
    Ok(())
}

fn main() {}
