//! What the table says of a scenario's connections, under its row: where the time of opening
//! them went (TCP connect, TLS handshake), how many handshakes resumed a session, that
//! certificates were not verified (`--insecure`), and what to do when they could not be; the
//! redirects followed on them.

use super::units::{micros, thousands};
use super::{HttpVersion, ScenarioReport};

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

/// `256 users on 16 connections, HTTP/1.1 pipelined up to 16 deep`, `1,000 users on 10
/// connections, HTTP/2 streams`: how the users' requests travelled when they did not each own a
/// connection, and what was spoken when HTTP/2 was asked and the server chose otherwise.
pub(super) fn transport_line(s: &ScenarioReport) -> Option<String> {
    let config = &s.config;
    if config.connections.is_none() && !config.http2 {
        return None;
    }
    let version = s.http.version.map(HttpVersion::as_str);
    let mut line = match config.connections {
        Some(n) => {
            let users = thousands(u64::from(config.concurrency));
            let shared =
                format!("{users} users on {} connection{}", thousands(u64::from(n)), if n == 1 { "" } else { "s" });
            match (s.http.version, config.pipeline.unwrap_or(1)) {
                (Some(HttpVersion::Http2), _) => format!("{shared}, HTTP/2 streams"),
                (Some(HttpVersion::Mixed), _) => {
                    format!("{shared}, HTTP/2 or HTTP/1.1 as each connection's ALPN chose")
                }
                (_, 1) => format!("{shared}, HTTP/1.1, one request at a time on each"),
                (_, depth) => format!("{shared}, HTTP/1.1 pipelined up to {depth} deep"),
            }
        }
        None => format!("{}, one connection per user", version.unwrap_or("HTTP/2")),
    };
    if config.http2 && s.http.version == Some(HttpVersion::Http11) {
        line.push_str("; warning: HTTP/2 was asked, but the server chose HTTP/1.1 (ALPN)");
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::ConfigReport;

    fn report(connections: Option<u32>, pipeline: Option<u32>, http2: bool, version: HttpVersion) -> ScenarioReport {
        let config = ConfigReport { concurrency: 256, connections, pipeline, http2, ..ConfigReport::default() };
        let mut s = ScenarioReport::not_started("s", config);
        s.http.version = Some(version);
        s
    }

    #[test]
    fn says_how_requests_travelled() {
        let line = |c, p, h2, v| transport_line(&report(c, p, h2, v));
        assert_eq!(line(None, None, false, HttpVersion::Http11), None);
        assert_eq!(
            line(Some(16), Some(16), false, HttpVersion::Http11).as_deref(),
            Some("256 users on 16 connections, HTTP/1.1 pipelined up to 16 deep")
        );
        assert_eq!(
            line(Some(1), None, false, HttpVersion::Http11).as_deref(),
            Some("256 users on 1 connection, HTTP/1.1, one request at a time on each")
        );
        assert_eq!(
            line(Some(4), None, true, HttpVersion::Http2).as_deref(),
            Some("256 users on 4 connections, HTTP/2 streams")
        );
        assert_eq!(line(None, None, true, HttpVersion::Http2).as_deref(), Some("HTTP/2, one connection per user"));
        assert_eq!(
            line(None, None, true, HttpVersion::Http11).as_deref(),
            Some("HTTP/1.1, one connection per user; warning: HTTP/2 was asked, but the server chose HTTP/1.1 (ALPN)")
        );
    }
}
