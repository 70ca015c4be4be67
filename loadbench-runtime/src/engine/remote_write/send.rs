//! The sender thread: POSTs each queued push to the endpoint, as remote-write 1.0 asks (a
//! snappy-compressed protobuf `WriteRequest`), with a timeout, and counts the samples the
//! endpoint took and those it did not.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Receiver;
use std::time::Duration;

use prost::Message as _;

use super::proto::WriteRequest;

/// How long a push may take, connection included, before its samples are dropped: a push is a
/// few kilobytes, which a Prometheus on the same network takes in milliseconds.
const TIMEOUT: Duration = Duration::from_secs(2);

/// The most of an error answer's body kept for the report.
const ERROR_BODY: u64 = 200;

/// One push: its body, compressed, and the samples in it.
#[derive(Debug)]
pub(super) struct Batch {
    body: Vec<u8>,
    pub(super) samples: u64,
    /// The scenario's last reading.
    last: bool,
}

impl Batch {
    /// `request` encoded and compressed (snappy's block format, as remote-write asks).
    pub(super) fn encode(request: &WriteRequest, last: bool) -> Batch {
        let samples =
            request.timeseries.iter().map(|series| (series.samples.len() + series.histograms.len()) as u64).sum();
        let raw = request.encode_to_vec();
        // Compressing bytes in memory fails only past snappy's size bound (4 GiB), far above a
        // push of a few kilobytes; an empty body is then sent, refused and counted as dropped.
        let body = snap::raw::Encoder::new().compress_vec(&raw).unwrap_or_default();
        Batch { body, samples, last }
    }
}

/// What the sender did.
#[derive(Debug, Default)]
pub(super) struct Sent {
    /// Samples in pushes the endpoint accepted.
    pub(super) samples: u64,
    /// Samples in pushes that failed, or that were dropped unsent when the scenario ended.
    pub(super) dropped: u64,
    pub(super) first_error: Option<String>,
}

/// Sends what arrives on `batches` to `url` until the queue's other side is gone. Once `closing`
/// is set, only the last reading is still sent: what is queued before it is dropped, so that a
/// slow endpoint holds the end of a scenario one push at most.
pub(super) fn run(url: &str, batches: &Receiver<Batch>, closing: &AtomicBool) -> Sent {
    let config = ureq::Agent::config_builder().timeout_global(Some(TIMEOUT)).http_status_as_error(false).build();
    let agent = ureq::Agent::new_with_config(config);
    let mut sent = Sent::default();
    for batch in batches {
        if closing.load(Ordering::Relaxed) && !batch.last {
            sent.dropped += batch.samples;
            continue;
        }
        match push(&agent, url, batch.body) {
            Ok(()) => sent.samples += batch.samples,
            Err(reason) => {
                sent.dropped += batch.samples;
                sent.first_error.get_or_insert(reason);
            }
        }
    }
    sent
}

/// One POST; the reason it failed, in a few words, when it did.
fn push(agent: &ureq::Agent, url: &str, body: Vec<u8>) -> Result<(), String> {
    let answer = agent
        .post(url)
        .header("Content-Encoding", "snappy")
        .header("Content-Type", "application/x-protobuf")
        .header("X-Prometheus-Remote-Write-Version", "0.1.0")
        .header("User-Agent", concat!("loadbench/", env!("CARGO_PKG_VERSION")))
        .send(body);
    let mut answer = answer.map_err(|err| err.to_string())?;
    let status = answer.status();
    if status.is_success() {
        return Ok(());
    }
    let said = answer.body_mut().with_config().limit(ERROR_BODY).read_to_string().unwrap_or_default();
    let said = said.trim();
    Err(if said.is_empty() { format!("HTTP {status}") } else { format!("HTTP {status}: {said}") })
}
