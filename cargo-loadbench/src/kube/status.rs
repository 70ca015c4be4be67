//! What Kubernetes says of a run's Job and its pods, read from `kubectl get … -o json`. Pure
//! functions of that JSON: fields that are absent read as Kubernetes means them (a count of 0, no
//! condition yet).

use serde_json::Value;

use super::{CONTAINER, INDEX_ANNOTATION};

/// Where a Job is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobState {
    /// Neither complete nor failed yet.
    Running {
        /// Pods running.
        active: u64,
        /// Pods that succeeded.
        succeeded: u64,
        /// Pods that failed.
        failed: u64,
    },
    /// Every index succeeded (condition `Complete`).
    Complete,
    /// The Job failed (condition `Failed`): a shard failed, or the deadline passed.
    Failed {
        /// Kubernetes' reason, such as `BackoffLimitExceeded` or `DeadlineExceeded`.
        reason: String,
        /// Its message.
        message: String,
    },
}

/// The state of the Job `job` (one object of `kubectl get job NAME -o json`). Only the terminal
/// conditions count: `SuccessCriteriaMet` and `FailureTarget` come while pods are still being
/// stopped, and their logs are not all written yet.
pub fn job_state(job: &Value) -> JobState {
    let status = &job["status"];
    let conditions = status["conditions"].as_array().map(Vec::as_slice).unwrap_or_default();
    let holds = |kind: &str| conditions.iter().find(|c| c["type"] == kind && c["status"] == "True");
    if holds("Complete").is_some() {
        return JobState::Complete;
    }
    if let Some(failed) = holds("Failed") {
        let text = |key: &str| failed[key].as_str().unwrap_or_default().to_owned();
        return JobState::Failed { reason: text("reason"), message: text("message") };
    }
    let count = |key: &str| status[key].as_u64().unwrap_or(0);
    JobState::Running { active: count("active"), succeeded: count("succeeded"), failed: count("failed") }
}

/// How many shards the Job runs: its `spec.completions`.
pub fn completions(job: &Value) -> Option<u32> {
    job["spec"]["completions"].as_u64().and_then(|n| u32::try_from(n).ok())
}

/// One pod of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pod {
    /// Its name.
    pub name: String,
    /// Its completion index, from the annotation Kubernetes sets.
    pub index: Option<u32>,
    /// `Succeeded`, `Failed`, `Running`, `Pending`…
    pub phase: String,
    /// How the bench container ended, when it has: exit code and Kubernetes' reason
    /// (`Completed`, `Error`, `OOMKilled`).
    pub exit: Option<(i64, String)>,
}

/// The pods of `kubectl get pods -l … -o json`, by index, then name.
pub fn pods(list: &Value) -> Vec<Pod> {
    let items = list["items"].as_array().map(Vec::as_slice).unwrap_or_default();
    let mut pods: Vec<Pod> = items
        .iter()
        .map(|item| {
            let index = item["metadata"]["annotations"][INDEX_ANNOTATION].as_str().and_then(|i| i.parse().ok());
            let containers = item["status"]["containerStatuses"].as_array().map(Vec::as_slice).unwrap_or_default();
            let exit = containers.iter().find(|c| c["name"] == CONTAINER).and_then(|c| {
                let terminated = &c["state"]["terminated"];
                let code = terminated["exitCode"].as_i64()?;
                Some((code, terminated["reason"].as_str().unwrap_or_default().to_owned()))
            });
            Pod {
                name: item["metadata"]["name"].as_str().unwrap_or_default().to_owned(),
                index,
                phase: item["status"]["phase"].as_str().unwrap_or("Unknown").to_owned(),
                exit,
            }
        })
        .collect();
    pods.sort_by(|a, b| (a.index, &a.name).cmp(&(b.index, &b.name)));
    pods
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn only_terminal_conditions_end_the_wait() {
        let running = json!({ "status": { "active": 8, "succeeded": 2, "conditions": [
            { "type": "SuccessCriteriaMet", "status": "True" }
        ] } });
        assert_eq!(job_state(&running), JobState::Running { active: 8, succeeded: 2, failed: 0 });
        assert_eq!(job_state(&json!({})), JobState::Running { active: 0, succeeded: 0, failed: 0 });
        let complete = json!({ "status": { "conditions": [{ "type": "Complete", "status": "True" }] } });
        assert_eq!(job_state(&complete), JobState::Complete);
        let failed = json!({ "status": { "failed": 1, "conditions": [
            { "type": "FailureTarget", "status": "True" },
            { "type": "Failed", "status": "True", "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit" }
        ] } });
        assert_eq!(
            job_state(&failed),
            JobState::Failed {
                reason: "BackoffLimitExceeded".into(),
                message: "Job has reached the specified backoff limit".into()
            }
        );
        assert_eq!(completions(&json!({ "spec": { "completions": 10 } })), Some(10));
        assert_eq!(completions(&json!({ "spec": {} })), None);
    }

    #[test]
    fn pods_come_with_their_index_and_exit() {
        let list = json!({ "items": [
            { "metadata": { "name": "run-1-b", "annotations": { INDEX_ANNOTATION: "1" } },
              "status": { "phase": "Failed", "containerStatuses": [
                  { "name": "bench", "state": { "terminated": { "exitCode": 137, "reason": "OOMKilled" } } }
              ] } },
            { "metadata": { "name": "run-0-a", "annotations": { INDEX_ANNOTATION: "0" } },
              "status": { "phase": "Running" } },
            { "metadata": { "name": "stray" }, "status": {} },
        ] });
        let pods = pods(&list);
        let names: Vec<&str> = pods.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["stray", "run-0-a", "run-1-b"]);
        assert_eq!(pods[0].index, None);
        assert_eq!(pods[0].phase, "Unknown");
        assert_eq!(pods[1].exit, None);
        assert_eq!(pods[2].exit, Some((137, "OOMKilled".into())));
        assert_eq!(pods[2].phase, "Failed");
    }
}
