//! The shards' results read back from their pods' logs: each shard's JSON is between
//! [`BEGIN_MARKER`] and [`END_MARKER`], after whatever the bench binary printed (its table,
//! progress, errors). Pure functions of the logs' text, so every case is a unit test.

use std::collections::BTreeMap;

use super::{BEGIN_MARKER, END_MARKER};

/// One pod's log, and the index Kubernetes gave the pod.
#[derive(Debug, Clone, Copy)]
pub struct PodLog<'a> {
    /// The pod's name, for messages.
    pub pod: &'a str,
    /// Its completion index; `None` when it has none (not a pod of an Indexed Job).
    pub index: Option<u32>,
    /// Everything `kubectl logs` printed.
    pub log: &'a str,
}

/// A log whose results cannot be taken, naming the pod.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("pod {pod}: {reason}")]
pub struct LogError {
    /// The pod's name.
    pub pod: String,
    /// What is wrong with its log.
    pub reason: String,
}

/// What the logs of a run's pods held.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Gathered {
    /// Each shard's JSON by index, as the bench binary wrote it.
    pub shards: BTreeMap<u32, String>,
    /// The indexes, from 0 to N - 1, whose results no log held.
    pub missing: Vec<u32>,
}

/// The text between the markers of `log`; `None` when the log has no begin marker (the bench
/// binary wrote no results). A begin marker without an end marker after it (the pod was killed
/// while printing, the log was cut) or a second pair is an error: a shard's results are taken
/// whole or not at all.
pub fn between_markers(log: &str) -> Result<Option<&str>, String> {
    let mut found = None;
    let mut begin = None;
    let mut offset = 0;
    for line in log.split_inclusive('\n') {
        let text = line.trim_end_matches(['\n', '\r']);
        let start = offset;
        offset += line.len();
        match (text, begin) {
            (BEGIN_MARKER, None) if found.is_some() => return Err("it holds two sets of results".to_owned()),
            (BEGIN_MARKER, None) => begin = Some(offset),
            (BEGIN_MARKER, Some(_)) => return Err("a begin marker follows another without an end marker".to_owned()),
            (END_MARKER, Some(from)) => {
                found = Some(&log[from..start]);
                begin = None;
            }
            (END_MARKER, None) => return Err("an end marker comes without a begin marker".to_owned()),
            _ => {}
        }
    }
    if begin.is_some() {
        return Err(format!(
            "the results begin (`{BEGIN_MARKER}`) but do not end (no `{END_MARKER}`): the pod stopped or its log was cut while they were printed"
        ));
    }
    Ok(found)
}

/// Checks one shard's results: a JSON object, and when it says which shard it is (`shard`,
/// written with `--shard`), the pod's. Returns the text as the file to write, ending in a newline.
pub fn check_shard(text: &str, index: u32, count: u32) -> Result<String, String> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("its results are not JSON: {e}"))?;
    if !value.is_object() {
        return Err("its results are not a JSON object".to_owned());
    }
    if let Some(shard) = value.get("shard").filter(|s| !s.is_null()) {
        let said = (shard["index"].as_u64(), shard["count"].as_u64());
        if said != (Some(u64::from(index)), Some(u64::from(count))) {
            return Err(format!(
                "its results say shard {}/{}, but the pod is shard {index}/{count}",
                shard["index"], shard["count"]
            ));
        }
    }
    Ok(text.trim().to_owned() + "\n")
}

/// Every shard's results from the logs of a run of `count` shards, and the indexes none held.
pub fn gather(count: u32, logs: &[PodLog<'_>]) -> Result<Gathered, LogError> {
    let mut shards = BTreeMap::new();
    let mut from_pod: BTreeMap<u32, &str> = BTreeMap::new();
    for log in logs {
        let error = |reason: String| LogError { pod: log.pod.to_owned(), reason };
        let Some(text) = between_markers(log.log).map_err(error)? else { continue };
        let index = log.index.ok_or_else(|| {
            error(format!("it has no completion index (annotation {}): not a shard", super::INDEX_ANNOTATION))
        })?;
        if index >= count {
            return Err(error(format!("its index {index} is not below the Job's {count} completions")));
        }
        if let Some(other) = from_pod.insert(index, log.pod) {
            return Err(error(format!("pod {other} printed the results of shard {index} too")));
        }
        shards.insert(index, check_shard(text, index, count).map_err(error)?);
    }
    let missing = (0..count).filter(|i| !shards.contains_key(i)).collect();
    Ok(Gathered { shards, missing })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(json: &str) -> String {
        format!(
            "progress 10%\n  table row\n{BEGIN_MARKER}\n{json}\n\n{END_MARKER}\nloadbench: the bench binary exited with code 0\n"
        )
    }

    #[test]
    fn the_results_are_the_lines_between_the_markers() {
        let text = log("{\n  \"scenarios\": []\n}");
        assert_eq!(between_markers(&text), Ok(Some("{\n  \"scenarios\": []\n}\n\n")));
        assert_eq!(between_markers("only a table\nerror: no scenario\n"), Ok(None));
        assert_eq!(between_markers(""), Ok(None));
        // Windows line ends, should a log come through something that adds them.
        let crlf = format!("x\r\n{BEGIN_MARKER}\r\n{{}}\r\n{END_MARKER}\r\n");
        assert_eq!(between_markers(&crlf), Ok(Some("{}\r\n")));
        // A marker is a whole line, not a part of one.
        assert_eq!(between_markers(&format!("echo '{BEGIN_MARKER}'\n")), Ok(None));
    }

    #[test]
    fn a_missing_end_marker_is_an_error_naming_the_pod() {
        let cut = format!("{BEGIN_MARKER}\n{{\"scenarios\": [\n");
        let err = gather(1, &[PodLog { pod: "run-0-abcde", index: Some(0), log: &cut }]).unwrap_err();
        assert_eq!(err.pod, "run-0-abcde");
        assert!(err.to_string().starts_with("pod run-0-abcde: the results begin"), "{err}");
        assert!(err.reason.contains(END_MARKER), "{err}");
    }

    #[test]
    fn stray_or_doubled_markers_are_errors() {
        for bad in [
            format!("{END_MARKER}\n"),
            format!("{BEGIN_MARKER}\n{BEGIN_MARKER}\n{{}}\n{END_MARKER}\n"),
            format!("{BEGIN_MARKER}\n{{}}\n{END_MARKER}\n{BEGIN_MARKER}\n{{}}\n{END_MARKER}\n"),
        ] {
            assert!(between_markers(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn several_pods_give_each_shard_once_and_name_the_missing() {
        let zero = log(r#"{"shard": {"index": 0, "count": 3}, "scenarios": []}"#);
        let two = log(r#"{"shard": {"index": 2, "count": 3}, "scenarios": []}"#);
        let failed = "error: cannot reach http://api:8080\nloadbench: the bench binary exited with code 3\n";
        let logs = [
            PodLog { pod: "run-2-x", index: Some(2), log: &two },
            PodLog { pod: "run-1-y", index: Some(1), log: failed },
            PodLog { pod: "run-0-z", index: Some(0), log: &zero },
        ];
        let gathered = gather(3, &logs).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(gathered.shards.keys().copied().collect::<Vec<_>>(), [0, 2]);
        assert_eq!(gathered.shards[&0], "{\"shard\": {\"index\": 0, \"count\": 3}, \"scenarios\": []}\n");
        assert_eq!(gathered.missing, [1]);
    }

    #[test]
    fn results_of_another_shard_or_pod_are_refused() {
        let one = log(r#"{"shard": {"index": 1, "count": 3}, "scenarios": []}"#);
        let err = gather(3, &[PodLog { pod: "run-0-z", index: Some(0), log: &one }]).unwrap_err();
        assert!(err.reason.contains("say shard 1/3, but the pod is shard 0/3"), "{err}");

        let plain = log("{}");
        let twice =
            [PodLog { pod: "a", index: Some(0), log: &plain }, PodLog { pod: "b", index: Some(0), log: &plain }];
        assert!(gather(1, &twice).unwrap_err().to_string().contains("pod a printed the results of shard 0 too"));
        let err = gather(1, &[PodLog { pod: "c", index: None, log: &plain }]).unwrap_err();
        assert!(err.reason.contains("no completion index"), "{err}");
        let err = gather(1, &[PodLog { pod: "d", index: Some(1), log: &plain }]).unwrap_err();
        assert!(err.reason.contains("not below the Job's 1 completions"), "{err}");
        let err = gather(1, &[PodLog { pod: "e", index: Some(0), log: &log("{\"scenarios\": [") }]).unwrap_err();
        assert!(err.reason.contains("not JSON"), "{err}");
        let err = gather(1, &[PodLog { pod: "f", index: Some(0), log: &log("[]") }]).unwrap_err();
        assert!(err.reason.contains("not a JSON object"), "{err}");
    }
}
