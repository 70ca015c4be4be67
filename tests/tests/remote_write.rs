//! Live metrics by Prometheus remote-write, against a real Prometheus: the test starts Debian's
//! `prometheus` with its remote-write receiver and native histograms on, runs a scenario that
//! pushes to it, queries the series back through Prometheus' HTTP API and checks that their last
//! values are the run's JSON's counts. Skipped with a message when `prometheus` is not installed
//! and `CI` is unset; failing when `CI` is set (`.ci/run` installs it).
//!
//! Also, without Prometheus: a dead endpoint costs the load nothing, and the samples it did not
//! take are counted in the results.

#![allow(clippy::expect_used)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use loadbench::cli::{HistogramKind, Label, RemoteWriteConfig};
use loadbench::report::ScenarioReport;
use loadbench_tests::{Behavior, TestServer};
use serde_json::Value;

/// One run at a time: the harness handles signals once per process.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// This user's iterations so far, this one included.
fn next(ctx: &mut loadbench::Ctx) -> u32 {
    let n = ctx.user_data::<u32>();
    *n += 1;
    *n
}

/// A request and a pause per iteration, and every user's 10th iteration failing as `custom`: a
/// run long enough for a few pushes, with failures to count by kind.
#[loadbench::scenario(concurrency = 4, count = 600)]
async fn pushed(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    let n = next(ctx);
    ctx.get("/").send().await?.expect_status(200)?;
    ctx.measure("pause", async move {
        tokio::time::sleep(Duration::from_millis(3)).await;
        if n.is_multiple_of(10) { Err(std::io::Error::other("every tenth")) } else { Ok(()) }
    })
    .await?;
    Ok(())
}

/// A free port on loopback (nothing listens on it once this returns).
fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a port");
    listener.local_addr().expect("its address").port()
}

/// `prometheus` on the PATH, or `None` (skipped with a message, unless CI is set: then a failure).
fn prometheus_binary() -> Option<PathBuf> {
    let found = std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join("prometheus"))
        .find(|path| path.is_file());
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "prometheus is not installed and CI is set: `.ci/run` installs Debian's `prometheus` package"
        );
        eprintln!("skipped: prometheus is not installed (Debian's `prometheus` package; `.ci/run` installs it)");
    }
    found
}

/// A Prometheus of the test's own, on a free port, its data in a temporary directory; killed when
/// dropped.
struct Prometheus {
    child: Child,
    base: String,
    _data: tempfile::TempDir,
}

impl Prometheus {
    fn start(binary: &Path) -> Prometheus {
        let data = tempfile::tempdir().expect("a temporary directory");
        let config = data.path().join("prometheus.yml");
        std::fs::write(&config, "global:\n  scrape_interval: 1m\n").expect("the configuration");
        let address = format!("127.0.0.1:{}", free_port());
        let log = std::fs::File::create(data.path().join("prometheus.log")).expect("a log file");
        let child = Command::new(binary)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!("--storage.tsdb.path={}", data.path().join("tsdb").display()))
            .arg(format!("--web.listen-address={address}"))
            .args(["--web.enable-remote-write-receiver", "--enable-feature=native-histograms"])
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("prometheus starts");
        let prometheus = Prometheus { child, base: format!("http://{address}"), _data: data };
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let ready = ureq::get(format!("{}/-/ready", prometheus.base)).call();
            if ready.is_ok_and(|answer| answer.status() == 200) {
                return prometheus;
            }
            if Instant::now() > deadline {
                let log = std::fs::read_to_string(prometheus._data.path().join("prometheus.log")).unwrap_or_default();
                panic!("prometheus was not ready within 60s:\n{log}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn write_url(&self) -> String {
        format!("{}/api/v1/write", self.base)
    }

    /// The value of the only series `promql` returns now, with its labels.
    fn one(&self, promql: &str) -> (Value, f64) {
        let url = url::Url::parse_with_params(&format!("{}/api/v1/query", self.base), [("query", promql)])
            .expect("a query URL");
        let mut answer = ureq::get(url.as_str()).call().expect("the query is answered");
        let text = answer.body_mut().read_to_string().expect("its body");
        let json: Value = serde_json::from_str(&text).expect("JSON");
        let result = json["data"]["result"].as_array().unwrap_or_else(|| panic!("{promql}: {text}"));
        assert_eq!(result.len(), 1, "{promql}: one series expected: {text}");
        let value = result[0]["value"][1].as_str().and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("{text}"));
        (result[0]["metric"].clone(), value)
    }

    /// Whether Prometheus takes `promql` as a query (whatever it returns).
    fn accepts(&self, promql: &str) -> Result<(), String> {
        let url = url::Url::parse_with_params(&format!("{}/api/v1/query", self.base), [("query", promql)])
            .expect("a query URL");
        let config = ureq::Agent::config_builder().http_status_as_error(false).build();
        let mut answer = ureq::Agent::new_with_config(config).get(url.as_str()).call().expect("the query is answered");
        let text = answer.body_mut().read_to_string().expect("its body");
        if answer.status() == 200 { Ok(()) } else { Err(text) }
    }
}

/// Every query of the Grafana dashboard in examples/, its variables given values.
fn dashboard_queries(run: &str) -> Vec<String> {
    let path = loadbench_tests::cli::workspace_root().join("examples/grafana/loadbench.json");
    let text = std::fs::read_to_string(&path).expect("the dashboard");
    let dashboard: Value = serde_json::from_str(&text).expect("the dashboard is JSON");
    let panels = dashboard["panels"].as_array().expect("panels");
    let queries: Vec<String> = panels
        .iter()
        .flat_map(|panel| panel["targets"].as_array().into_iter().flatten())
        .filter_map(|target| target["expr"].as_str())
        .map(|expr| expr.replace("$run", run).replace("$scenario", ".*").replace("$__rate_interval", "1m"))
        .collect();
    assert!(queries.len() >= 8, "{queries:?}");
    queries
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `pushed` against `server` with its live metrics going to `url`; its report, checked
/// against the schema as the JSON document it is part of.
fn run(server: &TestServer, run_id: &str, url: String, histograms: HistogramKind) -> ScenarioReport {
    let config = RemoteWriteConfig {
        url,
        labels: vec![Label { name: "env".into(), value: "e2e".into() }],
        interval: Duration::from_millis(200),
        histograms,
    };
    let report = loadbench::Harness::new()
        .target(server.url())
        .only("pushed")
        .progress(false)
        .run_id(run_id)
        .remote_write(config)
        .run_report()
        .expect("the run");
    loadbench_tests::schema::Schema::RunReport.assert_serializes_valid(&report, run_id);
    report.scenarios.into_iter().next().expect("one scenario")
}

/// The counts of `report` as its JSON says them.
fn json_count(report: &ScenarioReport, pointer: &str) -> f64 {
    let json = serde_json::to_value(report).expect("JSON");
    json.pointer(pointer).and_then(Value::as_f64).unwrap_or_else(|| panic!("no {pointer} in the JSON"))
}

#[test]
fn the_pushed_series_end_on_the_runs_counts() {
    let Some(binary) = prometheus_binary() else { return };
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let prometheus = Prometheus::start(&binary);
    let server = TestServer::start(Behavior::default());
    let report = run(&server, "e2e-native", prometheus.write_url(), HistogramKind::Native);

    let pushed = report.remote_write.as_ref().expect("remote_write in the results");
    assert_eq!(pushed.samples_dropped, 0, "{pushed:?}");
    assert!(pushed.samples_sent > 0, "{pushed:?}");
    assert_eq!(server.requests(), 600);
    let select = r#"{run="e2e-native",scenario="pushed"}"#;
    let (labels, iterations) = prometheus.one(&format!("loadbench_iterations_total{select}"));
    assert_eq!(iterations, json_count(&report, "/ok") + json_count(&report, "/failed"));
    assert_eq!(iterations, 600.0);
    assert_eq!((labels["env"].as_str(), labels["shard"].as_str()), (Some("e2e"), Some("0")), "{labels}");
    let (_, custom) = prometheus.one(r#"loadbench_failures_total{run="e2e-native",kind="custom"}"#);
    assert_eq!(custom, json_count(&report, "/errors/custom"));
    assert!(custom >= 56.0, "every user's 10th iteration fails: {custom}");
    let (_, responses) = prometheus.one(&format!("loadbench_requests_total{select}"));
    assert_eq!(responses, json_count(&report, "/http/responses"));
    let (_, bytes) = prometheus.one(&format!("loadbench_received_bytes_total{select}"));
    assert_eq!(bytes, json_count(&report, "/http/bytes_received"));
    let (_, successes) = prometheus.one(&format!("histogram_count(loadbench_latency_seconds{select})"));
    assert_eq!(successes, json_count(&report, "/ok"));
    // The median from the pushed buckets is near the run's own: within the buckets' width.
    let (_, p50) = prometheus.one(&format!("histogram_quantile(0.5, loadbench_latency_seconds{select})"));
    let own = json_count(&report, "/latency_us/p50") / 1e6;
    assert!((p50 - own).abs() <= own * 0.25, "p50 {p50}s against the run's {own}s");

    // The named row of the measured pause, as the JSON's `requests` entry.
    let pause = report.requests.iter().find(|r| r.name == "pause").expect("the pause's row");
    let row = r#"{run="e2e-native",request="pause"}"#;
    let (_, runs) = prometheus.one(&format!("loadbench_request_iterations_total{row}"));
    assert_eq!((runs, pause.iterations), (600.0, 600));
    let (_, refused) =
        prometheus.one(r#"loadbench_request_failures_total{run="e2e-native",request="pause",kind="custom"}"#);
    assert_eq!(refused, pause.errors.custom as f64);
    assert_eq!(refused, custom, "each refused pause failed its iteration");
    let (_, paused) = prometheus.one(&format!("histogram_count(loadbench_request_latency_seconds{row})"));
    assert_eq!(paused, pause.ok as f64);

    // The dashboard's queries are Prometheus', over series that exist.
    let pushed = [
        "loadbench_request_",
        "loadbench_step_",
        "loadbench_iterations_total",
        "loadbench_failures_total",
        "loadbench_requests_total",
        "loadbench_received_bytes_total",
        "loadbench_latency_seconds",
    ];
    for query in dashboard_queries("e2e-native") {
        prometheus.accepts(&query).unwrap_or_else(|e| panic!("{query}: {e}"));
        assert!(pushed.iter().any(|name| query.contains(name)), "{query} reads no pushed series");
    }
}

#[test]
fn classic_buckets_end_on_the_runs_counts() {
    let Some(binary) = prometheus_binary() else { return };
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let prometheus = Prometheus::start(&binary);
    let server = TestServer::start(Behavior::default());
    let report = run(&server, "e2e-classic", prometheus.write_url(), HistogramKind::Classic);

    assert_eq!(report.remote_write.as_ref().map(|p| p.samples_dropped), Some(0));
    let select = r#"{run="e2e-classic"}"#;
    let (_, count) = prometheus.one(&format!("loadbench_latency_seconds_count{select}"));
    assert_eq!(count, json_count(&report, "/ok"));
    let (_, all) = prometheus.one(r#"loadbench_latency_seconds_bucket{run="e2e-classic",le="+Inf"}"#);
    assert_eq!(all, count);
    let pause = report.requests.iter().find(|r| r.name == "pause").expect("the pause's row");
    let (_, paused) = prometheus.one(r#"loadbench_request_latency_seconds_count{run="e2e-classic",request="pause"}"#);
    assert_eq!(paused, pause.ok as f64);
    let (_, all) =
        prometheus.one(r#"loadbench_request_latency_seconds_bucket{run="e2e-classic",request="pause",le="+Inf"}"#);
    assert_eq!(all, paused);
}

#[test]
fn a_dead_endpoint_costs_the_load_nothing_and_its_samples_are_counted() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let server = TestServer::start(Behavior::default());
    let nowhere = format!("http://127.0.0.1:{}/api/v1/write", free_port());
    let report = run(&server, "e2e-dead", nowhere.clone(), HistogramKind::Native);

    // Every iteration ran and was counted as usual.
    assert_eq!(server.requests(), 600);
    assert_eq!(report.ok + report.failed, 600);
    assert!(report.setup_error.is_none());
    let pushed = report.remote_write.as_ref().expect("remote_write in the results");
    assert_eq!(pushed.url, nowhere);
    assert_eq!(pushed.samples_sent, 0);
    assert!(pushed.samples_dropped > 0, "{pushed:?}");
    assert!(pushed.first_error.is_some(), "{pushed:?}");
    let mut document: loadbench::report::RunReport = loadbench::report::RunReport::new(std::time::SystemTime::now());
    document.scenarios = vec![report.clone()];
    let table = loadbench::report::table::render(&document);
    assert!(
        table.contains(&format!("remote write: 0 samples sent to {nowhere}, {} dropped", pushed.samples_dropped)),
        "{table}"
    );
}

/// `cargo loadbench` passes the flags on to the bench binary, which, built without the
/// `remote-write` feature (as a user's bench is by default), refuses them before any load, in one
/// line naming the feature.
#[test]
fn a_bench_built_without_the_feature_refuses_the_flag_before_any_load() {
    let server = TestServer::start(Behavior::default());
    let out = loadbench_tests::cli::run_fixture(
        "basic",
        &[
            "--target",
            &server.url(),
            "--remote-write",
            "http://127.0.0.1:9/api/v1/write",
            "--remote-write-label",
            "env=ci",
            "--quiet",
        ],
    );
    assert_eq!(out.code, Some(2), "{out:#?}");
    let refusal: Vec<&str> = out.stderr.lines().filter(|l| l.contains("--remote-write is not built")).collect();
    assert_eq!(refusal.len(), 1, "{}", out.stderr);
    assert!(
        refusal[0].starts_with("error: ") && refusal[0].contains(r#"features = ["remote-write"]"#),
        "{}",
        refusal[0]
    );
    assert_eq!(server.requests(), 0, "refused before any load");
}
