//! What a scenario's live metrics did (`--remote-write`): its JSON (`remote_write`) and the
//! table's line for it. The figures are samples, as Prometheus counts them: one value of one
//! series at one instant.

use serde::{Deserialize, Serialize};

use super::ScenarioReport;
use super::units::thousands;

/// The pushes of one scenario's live metrics to a Prometheus remote-write endpoint.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoteWriteReport {
    /// The endpoint.
    pub url: String,
    /// Samples the endpoint accepted (a 2xx answer).
    pub samples_sent: u64,
    /// Samples dropped: their push found the queue full (the endpoint slower than the interval),
    /// failed, timed out or was refused. The load never waits for the endpoint; what it could not
    /// take is counted here.
    pub samples_dropped: u64,
    /// The first failed push's reason, when one failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_error: Option<String>,
}

impl RemoteWriteReport {
    /// Adds another run's or shard's pushes (`--runs N`, `cargo loadbench merge`): the samples
    /// add up, the first failure stays.
    pub fn add(&mut self, other: &RemoteWriteReport) {
        self.samples_sent += other.samples_sent;
        self.samples_dropped += other.samples_dropped;
        if self.first_error.is_none() {
            self.first_error.clone_from(&other.first_error);
        }
    }
}

/// `remote write: 1,234 samples sent to http://…, 0 dropped`, with the first failure's reason
/// when samples were dropped.
pub(crate) fn line(s: &ScenarioReport) -> Option<String> {
    let pushed = s.remote_write.as_ref()?;
    let mut line = format!(
        "remote write: {} samples sent to {}, {} dropped",
        thousands(pushed.samples_sent),
        pushed.url,
        thousands(pushed.samples_dropped)
    );
    if let Some(error) = pushed.first_error.as_ref().filter(|_| pushed.samples_dropped > 0) {
        line.push_str(&format!(" (first failure: {error})"));
    }
    Some(line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::ConfigReport;

    #[test]
    fn the_line_says_what_was_sent_and_dropped() {
        let mut s = ScenarioReport::not_started("GET /", ConfigReport::default());
        assert_eq!(line(&s), None);
        let url = "http://127.0.0.1:9090/api/v1/write".to_owned();
        s.remote_write =
            Some(RemoteWriteReport { url, samples_sent: 12_345, samples_dropped: 0, first_error: Some("x".into()) });
        assert_eq!(
            line(&s).as_deref(),
            Some("remote write: 12,345 samples sent to http://127.0.0.1:9090/api/v1/write, 0 dropped")
        );
        if let Some(pushed) = &mut s.remote_write {
            pushed.samples_dropped = 40;
            pushed.first_error = Some("connection refused".into());
        }
        assert!(line(&s).is_some_and(|l| l.ends_with(", 40 dropped (first failure: connection refused)")));
    }
}
