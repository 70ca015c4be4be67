//! Data feeders against a real server on 127.0.0.1: which record each request carried, as the
//! server saw it, in every mode; and files that cannot be used, refused before any load.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use loadbench::feed::{FeedEnd, FeedMode, FeedSource};
use loadbench::report::ScenarioReport;
use loadbench_tests::child::{self, Finished, Running};
use loadbench_tests::{Behavior, TestServer};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

const NAMES: [&str; 5] = ["ann", "bob", "cid", "dee", "eve"];

fn run(scenario: &str, target: &str) -> ScenarioReport {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    loadbench_tests::run_scenario(scenario, target)
}

/// How many requests the server saw for each `/users/NAME` path (query left out).
fn users_seen(server: &TestServer) -> BTreeMap<String, u64> {
    let mut seen = BTreeMap::new();
    for request in server.seen() {
        let path = request.path.split('?').next().unwrap_or_default();
        let name = path.strip_prefix("/users/").unwrap_or_else(|| panic!("unexpected path {path}"));
        *seen.entry(name.to_owned()).or_insert(0) += 1;
    }
    seen
}

async fn get_user(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    let record = ctx.feed()?;
    let path = format!("/users/{}?user={}&password={}", record.get("username")?, ctx.user(), record.get("password")?);
    ctx.get(&path).send().await?.expect_status(200)?;
    Ok(())
}

#[loadbench::scenario(name = "feed_wrap", concurrency = 3, count = 20, feed = "data/feeds/users.csv")]
#[loadbench::scenario(
    name = "feed_stop",
    concurrency = 2,
    count = 20,
    feed = "data/feeds/users.csv",
    feed_mode = "sequential",
    feed_end = "stop"
)]
#[loadbench::scenario(
    name = "feed_random",
    concurrency = 2,
    count = 200,
    feed = "data/feeds/users.csv",
    feed_mode = "random"
)]
#[loadbench::scenario(
    name = "feed_per_user",
    concurrency = 4,
    count = 40,
    feed = "data/feeds/users.csv",
    feed_mode = "per_user"
)]
async fn users(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    get_user(ctx).await
}

#[test]
fn sequential_hands_out_records_in_turn_and_wraps() {
    let server = TestServer::start(Behavior::default());
    let report = run("feed_wrap", &server.url());

    assert_eq!((report.iterations, report.ok), (20, 20), "{report:#?}");
    // One shared index: 20 records taken from 5 are each taken 4 times, whichever user asked.
    let expected: BTreeMap<String, u64> = NAMES.iter().map(|n| ((*n).to_owned(), 4)).collect();
    assert_eq!(users_seen(&server), expected);
    // The password came from the same row as the name.
    assert!(server.seen().iter().all(|r| r.path.ends_with(&format!("password=pw-{}", &r.path[7..10]))));
    let feed = report.config.feed.as_ref().unwrap_or_else(|| panic!("no config.feed: {report:#?}"));
    assert_eq!(
        (feed.path.as_str(), feed.mode, feed.end, feed.records),
        ("data/feeds/users.csv", FeedMode::Sequential, FeedEnd::Wrap, 5)
    );
    assert!(report.feed_ran_out.is_none());
}

#[test]
fn a_stopping_feed_ends_the_scenario_and_says_so() {
    let server = TestServer::start(Behavior::default());
    let report = run("feed_stop", &server.url());

    // Every record went to exactly one request, and none was sent after the last.
    let expected: BTreeMap<String, u64> = NAMES.iter().map(|n| ((*n).to_owned(), 1)).collect();
    assert_eq!(users_seen(&server), expected);
    assert_eq!(report.ok, 5, "{report:#?}");
    let ran_out = report.feed_ran_out.unwrap_or_else(|| panic!("no feed_ran_out: {report:#?}"));
    assert_eq!(ran_out.records, 5);
    // Every iteration asked for is accounted for: run (one may have found the feed empty,
    // racing the other user to the last record) or not started.
    assert!(report.failed <= 1, "{report:#?}");
    assert_eq!(report.iterations + ran_out.not_started, 20, "{report:#?}");
    assert_eq!(report.config.feed.as_ref().map(|f| f.end), Some(FeedEnd::Stop));

    let json = serde_json::to_value(&report).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(json["feed_ran_out"]["records"], 5);
    assert_eq!(json["config"]["feed"]["end"], "stop");
    let table = loadbench::report::table::render(&{
        let mut run = loadbench::report::RunReport::new(std::time::SystemTime::now());
        run.scenarios.push(report);
        run
    });
    let line = format!(
        "feed_stop: feed data/feeds/users.csv ran out after 5 records (feed_end = \"stop\"): {} iterations not started",
        ran_out.not_started
    );
    assert!(table.contains(&line), "{table}");
}

#[test]
fn random_records_all_come_from_the_file() {
    let server = TestServer::start(Behavior::default());
    let report = run("feed_random", &server.url());

    assert_eq!(report.ok, 200, "{report:#?}");
    let seen = users_seen(&server);
    assert_eq!(seen.keys().map(String::as_str).collect::<Vec<_>>(), NAMES, "every record drawn, and only those");
    assert!(seen.values().all(|n| (15..=70).contains(n)), "spread over the file: {seen:?}");
    assert_eq!(report.config.feed.map(|f| f.mode), Some(FeedMode::Random));
}

#[test]
fn per_user_each_user_keeps_its_record() {
    let server = TestServer::start(Behavior::default());
    let report = run("feed_per_user", &server.url());

    assert_eq!(report.ok, 40, "{report:#?}");
    let mut users = BTreeMap::new();
    for request in server.seen() {
        let (path, query) = request.path.split_once('?').unwrap_or_else(|| panic!("{}", request.path));
        let user: usize = query
            .split('&')
            .find_map(|kv| kv.strip_prefix("user="))
            .and_then(|u| u.parse().ok())
            .unwrap_or_else(|| panic!("{query}"));
        assert_eq!(path, format!("/users/{}", NAMES[user]), "user {user} sends record {user}");
        *users.entry(user).or_insert(0) += 1;
    }
    // Which users ran depends on the machine: 40 iterations on loopback can all be claimed by the
    // worker thread that started first (its two users take turns while each waits for its
    // response) before the other thread's users begin. The property is the mapping above, for
    // every user that ran; more than one user must have run for it to mean anything.
    assert!((2..=4).contains(&users.len()), "users that ran: {users:?}");
}

#[derive(serde::Deserialize)]
struct Item {
    id: u64,
    name: String,
}

#[loadbench::scenario(name = "feed_jsonl", concurrency = 2, count = 6, feed = "data/feeds/items.jsonl")]
async fn items(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    let record = ctx.feed()?;
    let item: Item = record.parse()?;
    // A JSON value that is not a string reads as its JSON text.
    let id = record.get("id")?;
    ctx.get(&format!("/items/{}/{}/{id}", item.id, item.name)).send().await?.expect_status(200)?;
    Ok(())
}

#[test]
fn json_lines_records_parse_into_types() {
    let server = TestServer::start(Behavior::default());
    let report = run("feed_jsonl", &server.url());

    assert_eq!(report.ok, 6, "{report:#?}");
    let mut paths: Vec<String> = server.seen().into_iter().map(|r| r.path).collect();
    paths.sort();
    assert_eq!(
        paths,
        [
            "/items/11/lamp/11",
            "/items/11/lamp/11",
            "/items/12/desk/12",
            "/items/12/desk/12",
            "/items/13/sofa/13",
            "/items/13/sofa/13"
        ]
    );
    assert_eq!(report.config.feed.map(|f| f.records), Some(3));
}

#[loadbench::scenario(name = "feed_given", concurrency = 1, count = 3)]
async fn given(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    get_user(ctx).await
}

#[test]
fn a_harness_gives_a_scenario_its_feed() {
    let server = TestServer::start(Behavior::default());
    let users = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/feeds/users.csv");
    let report = {
        let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        loadbench::Harness::new()
            .target(server.url())
            .only("feed_given")
            .progress(false)
            .feed("feed_given", FeedSource::new(&users).end(FeedEnd::Stop))
            .run_report()
            .unwrap_or_else(|e| panic!("{e}"))
    };
    assert_eq!(report.scenarios[0].ok, 3);
    assert_eq!(
        server.seen().iter().map(|r| &r.path[..10]).collect::<Vec<_>>(),
        ["/users/ann", "/users/bob", "/users/cid"]
    );

    // Without a feed, `ctx.feed()` fails the iteration and says how to give one.
    let report = run("feed_given", &server.url());
    assert_eq!(report.failed, 3, "{report:#?}");

    // A bad file given to the harness is refused before any load.
    let before = server.requests();
    let malformed = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/feeds/malformed.csv");
    let err = loadbench::Harness::new()
        .target(server.url())
        .only("feed_given")
        .progress(false)
        .feed("feed_given", FeedSource::new(&malformed))
        .run_report()
        .err()
        .map(|e| e.to_string());
    assert_eq!(err, Some(format!("feed {}: line 3: 1 fields, where the header row has 2", malformed.display())));
    assert_eq!(server.requests(), before);
}

/// Runs the `feed_errors` bench binary on `scenarios`; returns its exit code and stderr.
fn feed_errors(server: &TestServer, scenarios: &[&str]) -> (Option<i32>, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_feed_errors"))
        .args(["--bench", "--exact", "--target", &server.url()])
        .args(scenarios)
        .env_remove(loadbench::cli::OUTPUT_ENV)
        .env_remove(loadbench::cli::TARGET_ENV)
        .output()
        .unwrap_or_else(|e| panic!("run feed_errors: {e}"));
    (output.status.code(), String::from_utf8_lossy(&output.stderr).into_owned())
}

#[test]
fn unusable_files_stop_the_run_before_any_load_with_one_line() {
    let server = TestServer::start(Behavior::default());
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/feeds");
    let cases = [
        (
            "missing",
            format!(
                "error: feed {}: cannot read it: No such file or directory (os error 2)\n",
                data.join("missing.csv").display()
            ),
        ),
        (
            "malformed",
            format!(
                "error: feed {}: line 3: 1 fields, where the header row has 2\n",
                data.join("malformed.csv").display()
            ),
        ),
        (
            "not_objects",
            format!(
                "error: feed {}: line 2: not a JSON object (each line is one record)\n",
                data.join("not_objects.jsonl").display()
            ),
        ),
        (
            "too_few_for_users",
            format!(
                "error: feed {}: has 5 records, but feed_mode = \"per_user\" needs one for each of the scenario's 6 users\n",
                data.join("users.csv").display()
            ),
        ),
    ];
    for (scenario, expected) in cases {
        // `fine` is selected too and sorts first: no scenario runs when any feed is bad.
        let (code, stderr) = feed_errors(&server, &["fine", scenario]);
        assert_eq!(code, Some(2), "{scenario}: {stderr}");
        assert_eq!(stderr, expected, "{scenario}");
    }
    assert_eq!(server.requests(), 0, "no request reached the server");
}

/// The bound on what should be quick, generous for a slow and busy machine.
const PATIENCE: Duration = Duration::from_secs(20);

/// The `feed_errors` binary's scenario `given` run on `file`, started in `dir` and watched.
fn given_feed(server: &TestServer, dir: &Path, file: &Path) -> Running {
    Running::start_program(
        Path::new(env!("CARGO_BIN_EXE_feed_errors")),
        dir,
        &["--bench", "--exact", "--target", &server.url(), "given"],
        &[("FEED_ERRORS_FILE", file.as_os_str())],
    )
}

/// A FIFO at `dir/NAME`.
fn fifo(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    let made = Command::new("mkfifo").arg(&path).status().unwrap_or_else(|e| panic!("mkfifo: {e}"));
    assert!(made.success(), "mkfifo {}", path.display());
    path
}

#[test]
fn a_feed_that_never_ends_is_refused_at_the_limit_in_bounded_memory() {
    let server = TestServer::start(Behavior::default());
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let zero = dir.path().join("zero.csv");
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap_or_else(|e| panic!("{e}"));
    let mut child = given_feed(&server, dir.path(), &zero);
    let limit_kib = loadbench::feed::DEFAULT_MAX_BYTES / 1024;
    // Past this, the binary is reading without bound: stopped here rather than let it take the
    // machine's memory.
    let runaway_kib = 4 * limit_kib;
    let start = Instant::now();
    while !child.exited() && child.peak_rss_kib() < runaway_kib && start.elapsed() < PATIENCE {
        child.wait_for(Duration::from_millis(50), || false);
    }
    let finished = child.stop();
    assert_eq!(finished.code, Some(2), "{finished:#?}");
    assert_eq!(
        finished.stderr,
        format!(
            "error: feed {}: larger than 256 MiB, the most a feed may be (a feed is held in memory \
             whole; FeedSource::max_bytes sets another limit)\n",
            zero.display()
        )
    );
    // The file's bytes, read once, and the process around them.
    assert!(finished.peak_rss_kib < limit_kib + 64 * 1024, "peak {} KiB", finished.peak_rss_kib);
    assert!(finished.wall < PATIENCE, "{:?}", finished.wall);
    assert_eq!(server.requests(), 0, "no request reached the server");
}

/// Sends `signal` to `child` once it handles it, then waits for it to exit: its exit code, how long
/// it took after the signal, and what it printed.
fn stopped_by(mut child: Running, signal: &str, number: u32) -> (Finished, Duration) {
    let pid = child.pid();
    assert!(child.wait_for(PATIENCE, || child::handles(pid, number)), "the binary never handled SIG{signal}");
    let sent = Instant::now();
    child.signal(signal);
    child.wait_for(PATIENCE, || false);
    let took = sent.elapsed();
    (child.stop(), took)
}

/// A FIFO with no writer blocks whoever opens it to read: SIGTERM still stops the run, with
/// exit code 143, before any load.
#[test]
fn a_fifo_feed_with_no_writer_stops_on_sigterm() {
    let server = TestServer::start(Behavior::default());
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let users = fifo(dir.path(), "users.csv");
    let child = given_feed(&server, dir.path(), &users);
    // Signals are handled before any feed is read; give it the time to reach the FIFO.
    std::thread::sleep(Duration::from_millis(300));
    let (finished, took) = stopped_by(child, "TERM", 15);
    assert_eq!(finished.code, Some(143), "{took:?} after SIGTERM: {finished:#?}");
    assert!(took < Duration::from_secs(5), "{took:?} after SIGTERM");
    assert_eq!(server.requests(), 0, "no request reached the server");
}

/// A FIFO whose writer sends a header and never closes it blocks the read itself: SIGHUP (a
/// closed terminal) stops the run as SIGTERM does, with exit code 129, before any load.
#[test]
fn a_fifo_feed_whose_writer_never_closes_stops_on_sighup() {
    let server = TestServer::start(Behavior::default());
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let users = fifo(dir.path(), "users.csv");
    let child = given_feed(&server, dir.path(), &users);
    // Opening the FIFO to write returns once the binary has opened it to read.
    let (opened, writer) = std::sync::mpsc::channel();
    let path = users.clone();
    std::thread::spawn(move || {
        let mut file = std::fs::OpenOptions::new().write(true).open(&path).unwrap_or_else(|e| panic!("{e}"));
        file.write_all(b"username,password\nann,pw-ann\n").unwrap_or_else(|e| panic!("{e}"));
        let _ = opened.send(file);
    });
    let _writer = writer.recv_timeout(PATIENCE).unwrap_or_else(|_| panic!("the binary never opened its feed"));
    let (finished, took) = stopped_by(child, "HUP", 1);
    assert_eq!(finished.code, Some(129), "{took:?} after SIGHUP: {finished:#?}");
    assert!(took < Duration::from_secs(5), "{took:?} after SIGHUP");
    assert_eq!(server.requests(), 0, "no request reached the server");
}
