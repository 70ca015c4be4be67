//! The TLS part of a scenario's results: its handshakes, and the settings it ran with.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The TLS handshakes of an `https://` scenario.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TlsReport {
    /// Handshakes completed, full or resumed: one per connection opened, but for failed ones.
    pub handshakes: u64,
    /// Of those, the ones that resumed a virtual user's earlier session with a ticket instead of
    /// a full handshake (a reconnect after `Connection: close`, an idle close, a retry).
    pub resumed: u64,
    /// Completed handshakes by protocol version (`"TLSv1.3"`, `"TLSv1.2"`).
    pub versions: BTreeMap<String, u64>,
    /// Handshakes that failed because the server's certificate could not be verified (counted
    /// in `errors.tls` with the others).
    #[serde(default)]
    pub unverified: u64,
    /// Of `unverified`, the handshakes whose certificate was not valid for the target's host name
    /// (a name the certificate does not hold): the right name, or `--connect-to`, answers them.
    #[serde(default)]
    pub wrong_name: u64,
    /// Of `unverified`, the handshakes whose certificate was self-signed and marked as a CA, which
    /// is never accepted as a server's own certificate, even trusted with `--cacert`.
    #[serde(default)]
    pub ca_as_server: u64,
}

impl TlsReport {
    /// Adds another report's handshakes to these.
    pub fn add(&mut self, other: &TlsReport) {
        self.handshakes += other.handshakes;
        self.resumed += other.resumed;
        self.unverified += other.unverified;
        self.wrong_name += other.wrong_name;
        self.ca_as_server += other.ca_as_server;
        for (version, &n) in &other.versions {
            *self.versions.entry(version.clone()).or_default() += n;
        }
    }
}

/// The TLS settings an `https://` scenario ran with.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TlsConfigReport {
    /// The server's certificate was not verified (`--insecure`).
    pub insecure: bool,
    /// CA files trusted beside the machine's trust store (`--cacert`).
    #[serde(default)]
    pub cacert: Vec<String>,
    /// The client certificate shown (`--cert`), for mutual TLS.
    #[serde(default)]
    pub client_cert: Option<String>,
    /// Whether reconnects resumed their session (off with `--no-tls-resumption`).
    pub resumption: bool,
}
