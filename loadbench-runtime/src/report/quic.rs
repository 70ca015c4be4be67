//! The QUIC part of an HTTP/3 scenario's results: what its connections did beyond the requests'
//! latency, which the scenario's histograms hold as for every protocol.

use serde::{Deserialize, Serialize};

use super::LatencyReport;

/// What an HTTP/3 scenario's QUIC connections measured. The connect and the handshake are one
/// figure under QUIC (one round trip carries both): a 1-RTT connection's is the scenario's
/// `tls_handshake_us`, and there is no `connect_us`. A 0-RTT connection is counted here instead,
/// apart from them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct QuicReport {
    /// Connections that sent their first requests as 0-RTT early data, on a ticket from an
    /// earlier connection of the same lane.
    #[serde(default)]
    pub zero_rtt_offered: u64,
    /// Of those, the ones whose early data the server accepted (the others' requests were sent
    /// again once the handshake completed).
    #[serde(default)]
    pub zero_rtt_accepted: u64,
    /// From the start of a 0-RTT connection to the server's answer on its early data; `None`
    /// when no connection offered 0-RTT.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zero_rtt_us: Option<LatencyReport>,
    /// Time to first byte: from a request's send to its response's head, per request that got
    /// one; `None` when no response arrived.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttfb_us: Option<LatencyReport>,
}
