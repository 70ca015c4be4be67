//! Live progress, end to end: five scenarios (two of them a group, running together) run by this
//! test binary in a child process, once with stderr on a pseudo-terminal (`script`), where each
//! has its live line, and once with stderr a pipe, as in CI, where each prints its 10 % lines.

use std::process::{Command, Stdio};

use loadbench_tests::{Behavior, TestServer};

const NAMES: [&str; 5] = ["progress_first", "progress_second", "progress_third", "progress_fourth", "progress_fifth"];

/// Where the child finds the server; unset, the child test refuses to run.
const URL_ENV: &str = "LOADBENCH_PROGRESS_TEST_URL";

#[loadbench::scenario(concurrency = 2, duration = "1200ms")]
async fn progress_first(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?.expect_status(200)?;
    Ok(())
}

#[loadbench::scenario(concurrency = 2, duration = "1200ms")]
async fn progress_second(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?.expect_status(200)?;
    Ok(())
}

#[loadbench::scenario(concurrency = 2, count = 3_000)]
async fn progress_third(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?.expect_status(200)?;
    Ok(())
}

#[loadbench::scenario(group = "pair", concurrency = 2, duration = "1200ms")]
async fn progress_fourth(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?.expect_status(200)?;
    Ok(())
}

#[loadbench::scenario(group = "pair", concurrency = 2, duration = "1200ms")]
async fn progress_fifth(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?.expect_status(200)?;
    Ok(())
}

/// Runs the five scenarios with progress shown; started by the tests below in a child process.
#[test]
#[ignore = "run by the tests of this file in a child process"]
fn child_runs_the_five_scenarios() {
    let url = std::env::var(URL_ENV).expect("started by a test of this file, with the server's URL");
    let report = loadbench::Harness::new().target(url).progress(true).run_report().expect("the scenarios run");
    assert_eq!(report.scenarios.len(), 5);
}

/// The child's command line: this test binary, running only the child test.
fn child_args() -> (String, Vec<String>) {
    let exe = std::env::current_exe().unwrap_or_else(|err| panic!("the test binary's path: {err}"));
    let args = ["--exact", "child_runs_the_five_scenarios", "--ignored", "--nocapture", "--test-threads", "1"];
    (exe.display().to_string(), args.iter().map(ToString::to_string).collect())
}

/// Every 4th response is a 500: errors by kind on the lines.
fn server() -> TestServer {
    TestServer::start(Behavior { fail_every: Some(4), ..Behavior::default() })
}

#[test]
fn a_terminal_shows_each_scenario_with_its_place_speed_latency_errors_and_users() {
    let server = server();
    let (exe, args) = child_args();
    // `script` gives the child a pseudo-terminal of 160 columns; what it draws comes back on
    // script's stdout.
    let command = format!("stty cols 160 rows 40 2>/dev/null; exec '{exe}' {}", args.join(" "));
    let out = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .env(URL_ENV, server.url())
        .env_remove("CI")
        .stdin(Stdio::null())
        .output()
        .expect("`script` (util-linux) runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}\n{text}", String::from_utf8_lossy(&out.stderr));
    // Each scenario has its line, numbered in the order they run (a group's members together).
    let number = |name: &str| {
        let at = text.find(&format!("] {name} [")).unwrap_or_else(|| panic!("no line of {name} in:\n{text}"));
        let open = text[..at].rfind('[').unwrap_or_else(|| panic!("no [i/5] before {name}"));
        text[open..=at].to_owned()
    };
    let heads: Vec<String> = NAMES.iter().map(|name| number(name)).collect();
    let mut sorted = heads.clone();
    sorted.sort();
    assert_eq!(sorted, ["[1/5]", "[2/5]", "[3/5]", "[4/5]", "[5/5]"], "{heads:?}");
    let (fourth, fifth) = (heads[3].as_bytes()[1], heads[4].as_bytes()[1]);
    assert_eq!(fourth.abs_diff(fifth), 1, "a group's members follow each other: {heads:?}");
    for figure in [" req/s", " p50 ", " p99 ", "/ ETA ", "users 2/2", "status"] {
        assert!(text.contains(figure), "no {figure:?} in:\n{text}");
    }
    assert!(text.contains("errors: "), "the failing requests are counted by kind:\n{text}");
    // No plain lines on a terminal.
    assert!(!text.contains("progress_first: 10% ("), "{text}");
}

#[test]
fn elsewhere_each_scenario_prints_its_ten_percent_lines_group_members_too() {
    let server = server();
    let (exe, args) = child_args();
    let out = Command::new(exe).args(args).env(URL_ENV, server.url()).output().expect("the test binary runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let mut numbers = Vec::new();
    for name in NAMES {
        // Which scenario of how many, first.
        let load = if name == "progress_third" { "3,000 iterations" } else { "1s 200ms" };
        let start = stderr.lines().find(|l| l.ends_with(&format!("] {name}: running ({load}, 2 users)")));
        numbers.push(start.unwrap_or_else(|| panic!("no start line of {name} in:\n{stderr}"))[..5].to_owned());
        for step in 1..10 {
            let line = format!("{name}: {}% (", step * 10);
            assert!(stderr.contains(&line), "no {line:?} in:\n{stderr}");
        }
        assert!(stderr.contains(&format!("{name}: done (")), "{stderr}");
    }
    numbers.sort();
    assert_eq!(numbers, ["[1/5]", "[2/5]", "[3/5]", "[4/5]", "[5/5]"], "{stderr}");
    // No terminal drawing in a pipe.
    assert!(!stderr.contains(" req/s  p50 "), "{stderr}");
}
