//! Sessions against a small application on 127.0.0.1: the cookie jar (a login in `setup` that
//! lasts, iterations that start from it, `cookies = "user"` and `"off"`, `ctx.cookies()`, the
//! crate's path and expiry rules), redirects (chains, the limit, 303 and 307, another origin, not
//! followed by default, `--follow-redirects` over the attribute) and JSON bodies. What is
//! asserted is what the server saw and what the report says.

#![allow(clippy::expect_used)]

use loadbench::ErrorKind;
use loadbench::http::ClientOptions;
use loadbench_tests::cli::cargo_loadbench;
use loadbench_tests::{Behavior, Reply, SeenRequest, TestServer, run_scenario as run};
use serde::{Deserialize, Serialize};

/// The application: a login with a session cookie, a cart, cookies scoped by path or expired,
/// chains of redirects, an echo and a JSON endpoint.
fn app(req: &SeenRequest) -> Reply {
    let cookies = req.header("cookie").unwrap_or("");
    let has = |pair: &str| cookies.split("; ").any(|c| c == pair);
    let host = req.header("host").unwrap_or("");
    match (req.method.as_str(), req.path.as_str()) {
        ("POST", "/login") => Reply::new(200, "welcome").header("set-cookie", "session=s3cret; Path=/; HttpOnly"),
        (_, "/me") if has("session=s3cret") => Reply::new(200, "ada"),
        (_, "/me") => Reply::new(401, "log in first"),
        (_, "/cart/add") => Reply::new(200, "added").header("set-cookie", "cart=1; Path=/"),
        (_, "/logout") => Reply::new(200, "bye").header("set-cookie", "session=gone; Path=/; Max-Age=0"),
        (_, "/scoped") => Reply::new(200, "").header("set-cookie", "admin=1; Path=/admin"),
        // Three hops: an absolute path, an absolute URL, a relative reference.
        (_, "/chain/3") => Reply::new(302, "").header("location", "/chain/2"),
        (_, "/chain/2") => Reply::new(302, "").header("location", format!("http://{host}/chain/1")),
        (_, "/chain/1") => Reply::new(302, "").header("location", "0"),
        (_, "/chain/0") => Reply::new(200, "end"),
        // Another port: another origin.
        (_, "/away") => Reply::new(302, "").header("location", "http://127.0.0.1:1/elsewhere"),
        ("POST", "/login-redirect") => {
            Reply::new(302, "").header("set-cookie", "session=s3cret; Path=/").header("location", "/me")
        }
        (_, "/see-other") => Reply::new(303, "").header("location", "/echo"),
        (_, "/temporary") => Reply::new(307, "").header("location", "/echo"),
        (_, "/echo") => Reply::new(200, format!("{} {}", req.method, String::from_utf8_lossy(&req.body))),
        ("POST", "/items") => match serde_json::from_slice::<Item>(&req.body) {
            Ok(item) => Reply::new(201, serde_json::json!({"id": 7, "name": item.name}).to_string())
                .header("content-type", "application/json"),
            Err(_) => Reply::new(400, "not an item"),
        },
        (_, "/not-json") => Reply::new(200, "<html></html>"),
        _ => Reply::new(404, ""),
    }
}

fn server() -> TestServer {
    TestServer::start(Behavior { app: Some(app), ..Behavior::default() })
}

/// Requests the server saw for `path`, and how many of them carried `cookie` (`name=value`).
fn seen(server: &TestServer, path: &str, cookie: &str) -> (usize, usize) {
    let requests: Vec<SeenRequest> = server.seen().into_iter().filter(|r| r.path == path).collect();
    let carrying = requests
        .iter()
        .filter(|r| r.headers.iter().any(|(n, v)| n == "cookie" && v.split("; ").any(|c| c == cookie)))
        .count();
    (requests.len(), carrying)
}

async fn log_in(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.post("/login").send().await?.expect_status(200)?;
    Ok(())
}

#[loadbench::scenario(name = "logged_in", concurrency = 2, count = 10, setup = log_in)]
#[loadbench::scenario(name = "logged_in_off", concurrency = 2, count = 10, setup = log_in, cookies = "off")]
async fn me(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/me").send().await?.expect_status(200)?;
    Ok(())
}

#[test]
fn a_login_in_setup_lasts_the_whole_run() {
    let server = server();
    let report = run("logged_in", &server.url());
    assert_eq!((report.ok, report.failed), (10, 0), "{:?}", report.errors);
    assert_eq!(seen(&server, "/login", "session=s3cret"), (2, 0), "one login per user, in setup");
    assert_eq!(seen(&server, "/me", "session=s3cret"), (10, 10), "every request carried the session");
}

#[test]
fn cookies_off_sends_no_cookie() {
    let server = server();
    let report = run("logged_in_off", &server.url());
    assert_eq!((report.ok, report.failed, report.errors.status), (0, 10, 10));
    assert_eq!(report.http.status.get(&401), Some(&10));
    assert_eq!(seen(&server, "/me", "session=s3cret"), (10, 0));
}

#[loadbench::scenario(name = "cart_per_iteration", concurrency = 1, count = 3, setup = log_in)]
#[loadbench::scenario(name = "cart_per_user", concurrency = 1, count = 3, setup = log_in, cookies = "user")]
async fn cart(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/me").send().await?.expect_status(200)?;
    ctx.get("/cart/add").send().await?.expect_status(200)?;
    Ok(())
}

#[test]
fn an_iterations_cookies_do_not_leak_into_the_next_but_setups_stay() {
    let server = server();
    let report = run("cart_per_iteration", &server.url());
    assert_eq!(report.ok, 3, "{:?}", report.errors);
    assert_eq!(seen(&server, "/me", "session=s3cret"), (3, 3), "setup's cookie in every iteration");
    assert_eq!(seen(&server, "/me", "cart=1"), (3, 0), "no iteration starts with the last one's cart");
}

#[test]
fn cookies_user_keeps_them_from_iteration_to_iteration() {
    let server = server();
    let report = run("cart_per_user", &server.url());
    assert_eq!(report.ok, 3, "{:?}", report.errors);
    assert_eq!(seen(&server, "/me", "session=s3cret"), (3, 3));
    assert_eq!(seen(&server, "/me", "cart=1"), (3, 2), "iterations 2 and 3 start with the cart");
}

/// Fails the iteration with `what` unless `ok`.
fn ensure(ok: bool, what: &str) -> loadbench::Result<()> {
    if ok { Ok(()) } else { Err(loadbench::Error::msg(what)) }
}

#[loadbench::scenario(name = "jar_api", concurrency = 1, count = 1)]
async fn jar_api(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.cookies().set("theme", "dark")?;
    ensure(ctx.cookies().get("theme") == Some("dark"), "get after set")?;
    ensure(ctx.cookies().set("bad name", "x").is_err(), "a name with a space refused")?;
    ctx.get("/scoped").send().await?;
    // `admin` has `Path=/admin`: sent to /admin/page only.
    ctx.get("/other").send().await?;
    ctx.get("/admin/page").send().await?;
    ctx.post("/login").send().await?.expect_status(200)?;
    ensure(ctx.cookies().get("session") == Some("s3cret"), "the login's cookie")?;
    // `Max-Age=0` removes it.
    ctx.get("/logout").send().await?;
    ensure(ctx.cookies().get("session").is_none(), "an expired cookie is gone")?;
    ctx.get("/me").send().await?.expect_status(401)?;
    ensure(ctx.cookies().remove("theme") && !ctx.cookies().remove("theme"), "remove")?;
    let names: Vec<String> = ctx.cookies().iter().map(|(name, _)| name.to_owned()).collect();
    ensure(names == ["admin"], "only admin is left")?;
    ctx.cookies().clear();
    ctx.get("/admin/page").send().await?;
    Ok(())
}

#[test]
fn ctx_cookies_reads_and_writes_the_jar_under_the_crates_rules() {
    let server = server();
    let report = run("jar_api", &server.url());
    assert_eq!(report.ok, 1, "{:?} {:?}", report.errors, report.user_setup);
    assert_eq!(seen(&server, "/other", "theme=dark"), (1, 1), "a cookie set by the scenario is sent");
    assert_eq!(seen(&server, "/other", "admin=1"), (1, 0), "Path=/admin is not sent to /other");
    assert_eq!(seen(&server, "/admin/page", "admin=1"), (2, 1), "sent to /admin/page, until cleared");
    assert_eq!(seen(&server, "/me", "session=s3cret"), (1, 0), "Max-Age=0 expired the session");
}

#[loadbench::scenario(name = "chain", concurrency = 1, count = 5, follow_redirects = 5)]
#[loadbench::scenario(name = "chain_limited", concurrency = 1, count = 5, follow_redirects = 2)]
#[loadbench::scenario(
    name = "chain_pipelined",
    concurrency = 4,
    count = 8,
    follow_redirects = 5,
    connections = 1,
    pipeline = 4
)]
async fn chain(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    let response = ctx.get("/chain/3").send().await?.expect_status(200)?;
    ensure(response.text()? == "end", "the last hop's body")
}

/// Runs `scenario`, whose `n` iterations each follow `/chain/3` to its end on one connection, and
/// checks what the server and the report saw.
fn chain_followed(scenario: &str, n: u64) {
    let server = server();
    let report = run(scenario, &server.url());
    assert_eq!((report.ok, report.failed), (n, 0), "{:?}", report.errors);
    for hop in ["/chain/3", "/chain/2", "/chain/1", "/chain/0"] {
        assert_eq!(seen(&server, hop, "").0 as u64, n, "{hop}");
    }
    assert_eq!(report.http.redirects, 3 * n);
    assert_eq!(report.http.responses, 4 * n, "every hop is an exchange");
    assert_eq!((report.http.status.get(&302), report.http.status.get(&200)), (Some(&(3 * n)), Some(&n)));
    assert_eq!(report.http.connections, 1, "every hop of every user on the one connection");
}

#[test]
fn a_chain_of_redirects_is_followed_to_its_end() {
    chain_followed("chain", 5);
}

#[test]
fn a_chain_of_redirects_is_followed_on_a_shared_pipelined_connection() {
    chain_followed("chain_pipelined", 8);
}

#[test]
fn the_limit_returns_the_last_redirect() {
    let server = server();
    let report = run("chain_limited", &server.url());
    assert_eq!((report.ok, report.failed, report.errors.status), (0, 5, 5));
    assert_eq!((seen(&server, "/chain/1", "").0, seen(&server, "/chain/0", "").0), (5, 0));
    assert_eq!(report.http.redirects, 10);
}

#[loadbench::scenario(name = "not_followed", concurrency = 1, count = 4)]
#[loadbench::scenario(name = "overridden", concurrency = 1, count = 4, follow_redirects = 5)]
async fn redirect_as_is(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/chain/3").send().await?.expect_status(302)?;
    Ok(())
}

#[test]
fn redirects_are_not_followed_by_default() {
    let server = server();
    let report = run("not_followed", &server.url());
    assert_eq!(report.ok, 4, "{:?}", report.errors);
    assert_eq!((seen(&server, "/chain/3", "").0, seen(&server, "/chain/2", "").0), (4, 0));
    assert_eq!(report.http.redirects, 0);
}

#[test]
fn the_command_lines_follow_redirects_overrides_the_attribute() {
    let server = server();
    // What `--follow-redirects 0` sets (`ClientArgs::apply`), as a bench binary applies it.
    let options = ClientOptions { follow_redirects: Some(0), ..ClientOptions::default() };
    let report = loadbench::Harness::new()
        .target(server.url())
        .only("overridden")
        .progress(false)
        .client(options)
        .run_report()
        .expect("runs");
    let report = &report.scenarios[0];
    assert_eq!(report.ok, 4, "{:?}", report.errors);
    assert_eq!((seen(&server, "/chain/3", "").0, seen(&server, "/chain/2", "").0), (4, 0));
}

#[loadbench::scenario(name = "methods", concurrency = 1, count = 1)]
async fn methods(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    let per_request = ctx.get("/chain/3").follow_redirects(3).send().await?.expect_status(200)?;
    ensure(per_request.text()? == "end", "followed per request")?;
    let see_other = ctx.post("/see-other").body("form").follow_redirects(1).send().await?;
    ensure(see_other.text()? == "GET ", "303 after a POST is a GET without body")?;
    let temporary = ctx.post("/temporary").body("payload").follow_redirects(1).send().await?;
    ensure(temporary.text()? == "POST payload", "307 keeps the method and the body")?;
    ctx.get("/away").follow_redirects(5).send().await?.expect_status(302)?;
    // The 302's cookie is stored before /me is asked for.
    ctx.post("/login-redirect").follow_redirects(1).send().await?.expect_status(200)?;
    Ok(())
}

#[test]
fn redirects_change_or_keep_the_method_and_stay_in_their_origin() {
    let server = server();
    let report = run("methods", &server.url());
    assert_eq!(report.ok, 1, "{:?}", report.errors);
    let echoes: Vec<(String, Vec<u8>)> =
        server.seen().into_iter().filter(|r| r.path == "/echo").map(|r| (r.method, r.body)).collect();
    assert_eq!(echoes, [("GET".to_owned(), Vec::new()), ("POST".to_owned(), b"payload".to_vec())]);
    // 3 + 1 + 1 + 0 (another origin) + 1.
    assert_eq!(report.http.redirects, 6);
    assert_eq!(seen(&server, "/me", "session=s3cret"), (1, 1));
}

#[derive(Debug, Serialize, Deserialize)]
struct Item {
    name: String,
}

#[derive(Debug, Deserialize)]
struct Created {
    id: u64,
    name: String,
}

#[loadbench::scenario(name = "json", concurrency = 1, count = 1)]
async fn json(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    let item = Item { name: "widget".to_owned() };
    let created: Created = ctx.post("/items").json(&item).send().await?.expect_status(201)?.json()?;
    ensure(created.id == 7 && created.name == "widget", "the echoed item")?;
    let untyped: serde_json::Value = ctx.post("/items").json(&item).send().await?.json()?;
    ensure(untyped["id"] == 7, "as a serde_json::Value")?;
    // A parse error names the type and the position.
    let err = ctx.get("/not-json").send().await?.json::<Created>().err().ok_or(loadbench::Error::msg("parsed"))?;
    ensure(err.kind() == ErrorKind::Scenario, "a scenario error")?;
    let message = err.to_string();
    ensure(message.contains("Created") && message.contains("line 1 column 1"), &message)?;
    // A value serde cannot write fails `send` before anything is sent.
    let keys = std::collections::BTreeMap::from([((1, 2), "pair as a key")]);
    let err = ctx.post("/items").json(&keys).send().await.err().ok_or(loadbench::Error::msg("sent"))?;
    ensure(err.kind() == ErrorKind::Scenario && err.to_string().contains("JSON"), &err.to_string())
}

#[test]
fn json_bodies_go_through_serde_both_ways() {
    let server = server();
    let report = run("json", &server.url());
    assert_eq!(report.ok, 1, "{:?}", report.errors);
    let posts: Vec<SeenRequest> = server.seen().into_iter().filter(|r| r.path == "/items").collect();
    assert_eq!(posts.len(), 2, "the unserializable body was never sent");
    assert_eq!(posts[0].header("content-type"), Some("application/json"));
    assert_eq!(posts[0].body, br#"{"name":"widget"}"#);
}

#[test]
fn cargo_loadbench_url_follows_with_the_flag_and_reports_the_hops() {
    let server = server();
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("out.json");
    let target = format!("{}/chain/3", server.url());
    let json_arg = json.to_str().expect("UTF-8 path");
    let out = cargo_loadbench(&["url", &target, "-n", "4", "-c", "1", "--follow-redirects", "5", "--json", json_arg]);
    assert_eq!(out.code, Some(0), "{out:#?}");
    let raw = loadbench_tests::cli::read_json(&json);
    assert_eq!(raw.pointer("/scenarios/0/http/redirects"), Some(&serde_json::json!(12)), "{raw:#}");
    assert_eq!(raw.pointer("/scenarios/0/http/status/200"), Some(&serde_json::json!(4)));
    assert_eq!(seen(&server, "/chain/0", "").0, 4);
    assert!(out.stdout.contains("12 redirects followed (16 responses in all)"), "{}", out.stdout);
}
