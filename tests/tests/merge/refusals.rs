//! Files `cargo loadbench merge` and `report` must not trust, each refused with one line naming
//! the file and the field (`error: FILE: FIELD: what is wrong`), exit code 2, before anything is
//! written: a histogram that does not hold the shard's successes, counts that disagree or do not
//! add up within 64 bits, a shard count no run has, a histogram header claiming 4 GiB, a file of
//! 200 MB, shards of different runs. The ones that once took the machine's memory are watched:
//! bounded time, and peak memory (`VmHWM`) far below what they used to take.

use std::path::Path;
use std::time::Duration;

use base64::Engine as _;
use loadbench_tests::child::Running;
use serde_json::{Value, json};

use super::{Part, merge, refused, shard_document, spread, text};

/// Two shards of one run, as `shard_document` writes them, as JSON to tamper with.
fn two_shards() -> [Value; 2] {
    let part = |index: u32| Part {
        index,
        count: 2,
        start_ms: 1_800_000_000_000 + u64::from(index) * 40,
        seconds: vec![spread(200, 900_000, 400_000, u64::from(index) + 1); 2],
    };
    [0, 1].map(|index| serde_json::to_value(shard_document(&part(index))).expect("serializes"))
}

fn write_json(dir: &Path, name: &str, value: &Value) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_vec(value).expect("serializes")).expect("written");
    path
}

/// `merge a.json b.json` of `shards`: refused, its one line.
fn refused_pair(dir: &Path, shards: &[Value; 2]) -> String {
    let (a, b) = (write_json(dir, "a.json", &shards[0]), write_json(dir, "b.json", &shards[1]));
    refused(dir, &[&a, &b])
}

/// The line a refusal of `b.json`'s `field` starts with.
fn about(dir: &Path, field: &str) -> String {
    format!("error: {}: {field}: ", dir.join("b.json").display())
}

/// `cargo loadbench ARGS…` watched: refused with exit code 2 and one line within 10 s, its peak
/// memory under `mib` MiB; the line. Its address space is capped at 4 GiB, so that a regression
/// fails the test without taking the machine's memory with it.
fn refused_within(dir: &Path, args: &[&str], mib: u64) -> String {
    let running = Running::start(dir, Some("ulimit -v 4194304"), args);
    let out = running.finish(Duration::from_secs(60));
    assert_eq!(out.code, Some(2), "{out:#?}");
    assert_eq!(out.stderr.lines().count(), 1, "one line: {}", out.stderr);
    assert!(out.wall < Duration::from_secs(10), "{:?}", out.wall);
    assert!(out.peak_rss_kib < mib * 1024, "peak {} KiB, expected under {mib} MiB", out.peak_rss_kib);
    out.stderr.trim_end().to_owned()
}

#[test]
fn a_histogram_that_does_not_hold_the_shards_successes_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut shards = two_shards();
    // Shard 1's histogram replaced by one of ten times its samples, all 1 s: alone, it would
    // make the whole run's p99 a second.
    let slow = Part { index: 1, count: 2, start_ms: 1_800_000_000_040, seconds: vec![vec![1_000_000_000; 2_000]] };
    let slow = serde_json::to_value(shard_document(&slow)).expect("serializes");
    shards[1]["scenarios"][0]["latency_us"]["histogram"] = slow["scenarios"][0]["latency_us"]["histogram"].clone();
    let line = refused_pair(dir.path(), &shards);
    assert_eq!(
        line,
        about(dir.path(), "scenarios[0].latency_us.histogram")
            + "it holds 2000 samples, but `hello` has 400 successes: one sample per success"
    );
}

#[test]
fn counts_that_disagree_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut shards = two_shards();
    shards[1]["scenarios"][0]["ok"] = 401.into();
    assert_eq!(
        refused_pair(dir.path(), &shards),
        about(dir.path(), "scenarios[0].ok") + "401 is more than `hello`'s 400 iterations"
    );
    let mut shards = two_shards();
    shards[1]["scenarios"][0]["failed"] = 3.into();
    assert_eq!(
        refused_pair(dir.path(), &shards),
        about(dir.path(), "scenarios[0].iterations") + "400 is not ok + failed + cancelled (400 + 3 + 0 = 403)"
    );
    let mut shards = two_shards();
    (shards[1]["scenarios"][0]["iterations"], shards[1]["scenarios"][0]["failed"]) = (403.into(), 3.into());
    assert_eq!(
        refused_pair(dir.path(), &shards),
        about(dir.path(), "scenarios[0].errors") + "the kinds add up to 0, not the 3 failed"
    );
}

#[test]
fn counts_that_would_wrap_when_added_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut shards = two_shards();
    // Each plausible alone; their sum does not fit in 64 bits, and once wrapped to 399.
    shards[0]["scenarios"][0]["dropped"] = 400.into();
    shards[1]["scenarios"][0]["dropped"] = u64::MAX.into();
    assert_eq!(
        refused_pair(dir.path(), &shards),
        about(dir.path(), "scenarios[0].dropped")
            + "its values add up past 2^64 - 1 over shards 0 to 1: no run counts that many, and a merge would wrap"
    );
    let mut shards = two_shards();
    shards[1]["scenarios"][0]["errors"]["status"] = u64::MAX.into();
    shards[1]["scenarios"][0]["errors"]["io"] = 2.into();
    let line = refused_pair(dir.path(), &shards);
    assert!(line.starts_with(&about(dir.path(), "scenarios[0].errors")), "{line}");
    assert!(line.ends_with("the kinds add up to past 2^64, not the 0 failed"), "{line}");
}

#[test]
fn a_shard_count_no_run_has_is_refused_without_allocating_for_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut shards = two_shards();
    shards[0]["shard"] = json!({ "index": 0, "count": u32::MAX });
    let a = write_json(dir.path(), "a.json", &shards[0]);
    let line = refused_within(dir.path(), &["merge", text(&a)], 64);
    assert_eq!(
        line,
        format!("error: {}: shard.count: 4294967295 is not a number of shards: a run has 1 to 10000", a.display())
    );
}

#[test]
fn a_histogram_header_claiming_4_gib_is_refused_in_bounded_time_and_memory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut shards = two_shards();
    // A valid V2 header (3 digits, 1 ns to 10 s) whose payload length says 4 GiB; no payload.
    let mut header = Vec::new();
    header.extend(0x1c84_9313_u32.to_be_bytes());
    header.extend(u32::MAX.to_be_bytes());
    header.extend(0_u32.to_be_bytes());
    header.extend(3_u32.to_be_bytes());
    header.extend(1_u64.to_be_bytes());
    header.extend(10_000_000_000_u64.to_be_bytes());
    header.extend(1.0_f64.to_be_bytes());
    shards[1]["scenarios"][0]["latency_us"]["histogram"] =
        base64::engine::general_purpose::STANDARD.encode(header).into();
    let (a, b) = (write_json(dir.path(), "a.json", &shards[0]), write_json(dir.path(), "b.json", &shards[1]));
    let line = refused_within(dir.path(), &["merge", text(&a), text(&b)], 64);
    assert_eq!(
        line,
        about(dir.path(), "scenarios[0].latency_us.histogram")
            + "not a histogram loadbench reads: its header claims 4294967295 bytes of counts, but only 0 follow"
    );
    assert!(!line.contains("Error {") && !line.contains("IoError"), "in words: {line}");
}

#[test]
fn a_corrupt_histogram_is_refused_in_words() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut shards = two_shards();
    let histogram = shards[1]["scenarios"][0]["latency_us"]["histogram"].as_str().expect("a histogram").to_owned();
    let mut bytes = base64::engine::general_purpose::STANDARD.decode(histogram).expect("base64");
    // The deflated counts cut short.
    bytes.truncate(bytes.len() - 12);
    let claimed = u32::try_from(bytes.len() - 8).expect("small");
    bytes[4..8].copy_from_slice(&claimed.to_be_bytes());
    shards[1]["scenarios"][0]["latency_us"]["histogram"] =
        base64::engine::general_purpose::STANDARD.encode(bytes).into();
    let line = refused_pair(dir.path(), &shards);
    assert!(line.starts_with(&about(dir.path(), "scenarios[0].latency_us.histogram")), "{line}");
    assert!(line.contains("not a histogram loadbench reads: "), "{line}");
    assert!(!line.contains("Error {") && !line.contains("IoError") && !line.contains("kind:"), "in words: {line}");
}

#[test]
fn a_200_mb_file_is_refused_before_it_is_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("huge.json");
    let file = std::fs::File::create(&path).expect("create");
    // Sparse: 200 MB that take no disk.
    file.set_len(200 << 20).expect("set_len");
    for command in ["merge", "report"] {
        let line = refused_within(dir.path(), &[command, text(&path)], 48);
        assert_eq!(
            line,
            format!(
                "error: cannot read results {}: it is larger than 64 MiB, more than any results document loadbench writes",
                path.display()
            )
        );
    }
}

#[test]
fn shards_of_different_runs_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    // The same config, started at different --start-at instants: each shard's load ran alone.
    let mut shards = two_shards();
    shards[0]["start"] = json!({ "at": "2026-12-01T10:00:00.000Z", "late_ms": 0 });
    shards[1]["start"] = json!({ "at": "2026-12-01T10:05:00.000Z", "late_ms": 0 });
    assert_eq!(
        refused_pair(dir.path(), &shards),
        about(dir.path(), "start.at")
            + &format!(
                "`2026-12-01T10:05:00.000Z`, but `2026-12-01T10:00:00.000Z` in {}: shards of different runs (each shard of a run waits for the same --start-at)",
                dir.path().join("a.json").display()
            )
    );
    let mut shards = two_shards();
    shards[0]["run_id"] = "nightly-41".into();
    shards[1]["run_id"] = "nightly-42".into();
    assert_eq!(
        refused_pair(dir.path(), &shards),
        about(dir.path(), "run_id")
            + &format!(
                "`nightly-42`, but `nightly-41` in {}: shards of different runs (each shard of a run has the same --run-id)",
                dir.path().join("a.json").display()
            )
    );
    let mut shards = two_shards();
    shards[0]["run_id"] = "nightly-41".into();
    let line = refused_pair(dir.path(), &shards);
    assert!(line.starts_with(&about(dir.path(), "run_id")) && line.contains("absent, but `nightly-41`"), "{line}");

    // The same identity, or none at all (files from before it was written), merges.
    for id in [Some("nightly-41"), None] {
        let mut shards = two_shards();
        for shard in &mut shards {
            shard["start"] = json!({ "at": "2026-12-01T10:00:00.000Z", "late_ms": 0 });
            if let Some(id) = id {
                shard["run_id"] = id.into();
            }
        }
        let (a, b) = (write_json(dir.path(), "a.json", &shards[0]), write_json(dir.path(), "b.json", &shards[1]));
        let merged = dir.path().join("merged.json");
        let out = merge(dir.path(), &[text(&a), text(&b), "--json", text(&merged)]);
        assert_eq!(out.code, Some(0), "{out:#?}");
        let results: Value = serde_json::from_str(&std::fs::read_to_string(&merged).expect("merged")).expect("JSON");
        assert_eq!(results["run_id"].as_str(), id, "the run's id stays: {}", results["run_id"]);
        assert_eq!(results["scenarios"][0]["ok"], 800);
    }
}

#[test]
fn report_refuses_what_merge_refuses() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut shards = two_shards();
    shards[1]["scenarios"][0]["ok"] = 401.into();
    let b = write_json(dir.path(), "b.json", &shards[1]);
    let out = super::cargo_loadbench_in(dir.path(), &["report", text(&b)]);
    assert_eq!((out.code, out.stderr.lines().count()), (Some(2), 1), "{out:#?}");
    assert_eq!(
        out.stderr.trim_end(),
        about(dir.path(), "scenarios[0].ok") + "401 is more than `hello`'s 400 iterations"
    );
}
