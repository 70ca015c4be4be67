//! What the table says of a scenario's connections, under its row: where the time of opening
//! them went (TCP connect, TLS handshake), how many handshakes resumed a session, that
//! certificates were not verified (`--insecure`), and what to do when they could not be; the
//! redirects followed on them.

use super::ScenarioReport;
use super::units::{micros, thousands};

/// `connections: 50 opened; connect p50 85µs, p99 310µs; TLS handshake p50 1.21ms, p99 3.40ms
/// (48 full, 2 resumed, TLSv1.3)`: for `https://`, whose handshakes are worth seeing, and when
/// users opened more connections than one each (the server closed some, or asked to).
pub(super) fn connection_line(s: &ScenarioReport) -> Option<String> {
    let connect = s.connect_us.as_ref()?;
    if s.tls.is_none() && s.http.connections <= u64::from(s.config.concurrency) {
        return None;
    }
    let mut line = format!(
        "connections: {} opened; connect p50 {}, p99 {}",
        thousands(s.http.connections),
        micros(connect.p50),
        micros(connect.p99)
    );
    if let (Some(handshake), Some(tls)) = (&s.tls_handshake_us, &s.tls) {
        let versions = tls.versions.keys().map(String::as_str).collect::<Vec<_>>().join(", ");
        line.push_str(&format!(
            "; TLS handshake p50 {}, p99 {} ({} full, {} resumed, {versions})",
            micros(handshake.p50),
            micros(handshake.p99),
            thousands(tls.handshakes - tls.resumed),
            thousands(tls.resumed)
        ));
    }
    Some(line)
}

/// `12 redirects followed (16 responses in all)`: the hops that requests asking to follow
/// redirects added, each an exchange of its own inside its request's latency.
pub(super) fn redirects_line(s: &ScenarioReport) -> Option<String> {
    (s.http.redirects > 0).then(|| {
        format!("{} redirects followed ({} responses in all)", thousands(s.http.redirects), thousands(s.http.responses))
    })
}

/// The warning for a scenario whose server certificate was not checked.
pub(super) fn insecure_line(s: &ScenarioReport) -> Option<&'static str> {
    s.config
        .tls
        .as_ref()
        .filter(|t| t.insecure)
        .map(|_| "warning: TLS certificates were not verified (--insecure): the server's identity was not checked")
}

/// Hints for the run's failures that a flag answers, once per run: after the table, on stderr.
pub fn hints<'a>(scenarios: impl IntoIterator<Item = &'a ScenarioReport>) -> Vec<String> {
    let mut hints = Vec::new();
    if scenarios.into_iter().any(|s| s.tls.as_ref().is_some_and(|t| t.unverified > 0)) {
        hints.push(
            "hint: the server's TLS certificate could not be verified; pass --cacert FILE to trust its CA (PEM), \
             or --insecure to skip verification"
                .to_owned(),
        );
    }
    hints
}
