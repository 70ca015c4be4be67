//! What the table says of a scenario's connections, under its row: where the time of opening
//! them went (TCP connect, TLS handshake, or QUIC's handshake with its connect), how many
//! handshakes resumed a session, what QUIC's connections measured (0-RTT, time to first byte),
//! that certificates were not verified (`--insecure`), and what to do when they could not be;
//! the redirects followed on them.

use super::units::{micros, thousands};
use super::{HttpVersion, ScenarioReport, TlsReport};

/// `connections: 50 opened; connect p50 85µs, p99 310µs; TLS handshake p50 1.21ms, p99 3.40ms
/// (48 full, 2 resumed, TLSv1.3)`: for `https://`, whose handshakes are worth seeing, and when
/// users opened more connections than one each (the server closed some, or asked to). Over
/// HTTP/3 there is no TCP connect: QUIC's one round trip opens the connection and makes the
/// handshake, one figure that the line calls the QUIC handshake (`connections: 4 opened; QUIC
/// handshake p50 1.10ms, p99 2.30ms (4 handshakes, TLSv1.3)`). Its handshakes are not split into
/// full and resumed: QUIC does not tell a resumed 1-RTT handshake from a full one.
pub(super) fn connection_line(s: &ScenarioReport) -> Option<String> {
    if s.config.http3 {
        let handshake = s.tls_handshake_us.as_ref()?;
        let mut line = format!(
            "connections: {} opened; QUIC handshake p50 {}, p99 {}",
            thousands(s.http.connections),
            micros(handshake.p50),
            micros(handshake.p99)
        );
        if let Some(tls) = &s.tls {
            let plural = if tls.handshakes == 1 { "" } else { "s" };
            line.push_str(&format!(" ({} handshake{plural}, {})", thousands(tls.handshakes), versions(tls)));
        }
        return Some(line);
    }
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
        line.push_str(&format!("; TLS handshake p50 {}, p99 {}", micros(handshake.p50), micros(handshake.p99)));
        line.push_str(&handshakes(tls));
    }
    Some(line)
}

/// ` (48 full, 2 resumed, TLSv1.3)`: the handshakes by kind and the versions they settled.
fn handshakes(tls: &TlsReport) -> String {
    format!(
        " ({} full, {} resumed, {})",
        thousands(tls.handshakes.saturating_sub(tls.resumed)),
        thousands(tls.resumed),
        versions(tls)
    )
}

/// `TLSv1.2, TLSv1.3`: the versions the handshakes settled.
fn versions(tls: &TlsReport) -> String {
    tls.versions.keys().map(String::as_str).collect::<Vec<_>>().join(", ")
}

/// `0-RTT: N of M connections offered early data, K accepted (p50 …); time to first byte p50 …,
/// p99 …`: what an HTTP/3 scenario's QUIC connections measured beyond the
/// latency columns, each part only when it has a figure; `None` without a `quic` part or with
/// nothing in it.
pub(super) fn quic_line(s: &ScenarioReport) -> Option<String> {
    let quic = s.quic.as_ref()?;
    let mut parts = Vec::new();
    if quic.zero_rtt_offered > 0 {
        // Never "40 of 30": a document whose connections were counted apart still reads whole.
        let mut part = format!(
            "0-RTT: {} of {} connections offered early data, {} accepted",
            thousands(quic.zero_rtt_offered),
            thousands(s.http.connections.max(quic.zero_rtt_offered)),
            thousands(quic.zero_rtt_accepted)
        );
        if let Some(zero_rtt) = &quic.zero_rtt_us {
            part.push_str(&format!(" (p50 {})", micros(zero_rtt.p50)));
        }
        parts.push(part);
    }
    if let Some(ttfb) = &quic.ttfb_us {
        parts.push(format!("time to first byte p50 {}, p99 {}", micros(ttfb.p50), micros(ttfb.p99)));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// `256 users on 16 connections, HTTP/1.1 pipelined up to 16 deep`, `1,000 users on 10
/// connections, HTTP/2 streams`: how the users' requests travelled when they did not each own a
/// connection or asked for HTTP/2 or HTTP/3, and what was spoken when HTTP/2 was asked and the
/// server chose otherwise. HTTP/3 is never negotiated down: it is what was asked.
pub(super) fn transport_line(s: &ScenarioReport) -> Option<String> {
    let config = &s.config;
    if config.http3 {
        return Some(match config.connections {
            Some(n) => format!(
                "{} users on {} connection{}, HTTP/3 streams",
                thousands(u64::from(config.concurrency)),
                thousands(u64::from(n)),
                if n == 1 { "" } else { "s" }
            ),
            None => "HTTP/3, one connection per user".to_owned(),
        });
    }
    if config.connections.is_none() && !config.http2 {
        return None;
    }
    let version = s.http.version.map(HttpVersion::as_str);
    let mut line = match config.connections {
        Some(n) => {
            let users = thousands(u64::from(config.concurrency));
            let shared =
                format!("{users} users on {} connection{}", thousands(u64::from(n)), if n == 1 { "" } else { "s" });
            // With no response, what was asked is all there is to say.
            let spoken = s.http.version.or(config.http2.then_some(HttpVersion::Http2));
            match (spoken, config.pipeline.unwrap_or(1)) {
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

/// The widest a hint's line is, `hint: ` included: a hint is wrapped, never cut.
pub const HINT_WIDTH: usize = 100;

/// Hints for the run's failures that a flag answers, once per run: after the table, on stderr.
/// Each is whole, wrapped at [`HINT_WIDTH`] columns, its later lines indented under its first
/// word (one string, its lines joined by `\n`). A certificate that failed verification gets the
/// fix for how it failed: another host name, a self-signed CA's certificate, or any other
/// (`--cacert`, `--insecure`).
pub fn hints<'a>(scenarios: impl IntoIterator<Item = &'a ScenarioReport>) -> Vec<String> {
    let mut tls = TlsReport::default();
    for report in scenarios.into_iter().filter_map(|s| s.tls.as_ref()) {
        tls.add(report);
    }
    let mut hints = Vec::new();
    if tls.wrong_name > 0 {
        hints.push(
            "the server's TLS certificate is not valid for the host name in the target URL (the cause \
             above names the ones it holds): put one of those names in the URL, and add --connect-to \
             NAME:PORT:ADDRESS:PORT to reach this server under it when that name leads elsewhere",
        );
    }
    if tls.ca_as_server > 0 {
        hints.push(
            "the server's TLS certificate is self-signed and marked as a CA (as `openssl req -x509` makes \
             one), and a CA's certificate is never accepted as a server's own, not even with --cacert: \
             pass --insecure to skip verification, or give the server a certificate issued by a CA and \
             pass that CA with --cacert FILE",
        );
    }
    if tls.unverified > tls.wrong_name + tls.ca_as_server {
        hints.push(
            "the server's TLS certificate could not be verified; pass --cacert FILE to trust its CA (PEM), \
             or --insecure to skip verification",
        );
    }
    hints.into_iter().map(|text| wrap("hint: ", text, HINT_WIDTH)).collect()
}

/// `lead` then `text`, wrapped at spaces to lines of at most `width` characters (a longer word
/// alone on its line), each line after the first indented by `lead`'s width.
fn wrap(lead: &str, text: &str, width: usize) -> String {
    let indent = " ".repeat(lead.chars().count());
    let mut out = lead.to_owned();
    let mut line = lead.chars().count();
    let mut first = true;
    for word in text.split_whitespace() {
        let len = word.chars().count();
        if !first && line + 1 + len > width {
            out.push('\n');
            out.push_str(&indent);
            line = indent.len();
            first = true;
        }
        if !first {
            out.push(' ');
            line += 1;
        }
        out.push_str(word);
        line += len;
        first = false;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_certificate_failure_gets_its_own_fix_wrapped_whole() {
        let with = |unverified, wrong_name, ca_as_server| {
            let mut s = ScenarioReport::not_started("s", crate::report::ConfigReport::default());
            s.tls = Some(TlsReport { unverified, wrong_name, ca_as_server, ..TlsReport::default() });
            hints([&s])
        };
        assert!(with(0, 0, 0).is_empty());
        let name = with(5, 5, 0);
        assert_eq!(name.len(), 1, "{name:?}");
        assert!(name[0].contains("not valid for the host name") && name[0].contains("--connect-to"), "{name:?}");
        assert!(!name[0].contains("--cacert") && !name[0].contains("--insecure"), "{name:?}");
        let ca = with(3, 0, 3);
        assert_eq!(ca.len(), 1, "{ca:?}");
        assert!(ca[0].contains("--insecure") && ca[0].contains("never accepted"), "{ca:?}");
        let issuer = with(4, 0, 0);
        assert!(issuer[0].contains("--cacert FILE") && issuer[0].contains("--insecure"), "{issuer:?}");
        // Two causes in one run: a hint for each.
        assert_eq!(with(7, 2, 0).len(), 2);
        for hint in [&name[0], &ca[0], &issuer[0]] {
            let lines: Vec<&str> = hint.lines().collect();
            assert!(lines[0].starts_with("hint: ") && lines.len() > 1, "{hint}");
            assert!(lines.iter().all(|l| l.chars().count() <= HINT_WIDTH), "{hint}");
            assert!(lines[1..].iter().all(|l| l.starts_with("      ") && !l[6..].starts_with(' ')), "{hint}");
        }
        assert_eq!(wrap("> ", "a bb ccc", 6), "> a bb\n  ccc");
        assert_eq!(wrap("> ", "abcdefgh x", 6), "> abcdefgh\n  x");
    }
    use crate::report::ConfigReport;

    fn report(connections: Option<u32>, pipeline: Option<u32>, http2: bool, version: HttpVersion) -> ScenarioReport {
        let config = ConfigReport { concurrency: 256, connections, pipeline, http2, ..ConfigReport::default() };
        let mut s = ScenarioReport::not_started("s", config);
        s.http.version = Some(version);
        s
    }

    #[test]
    fn says_http3_streams_or_a_connection_per_user() {
        let mut shared = report(Some(4), None, false, HttpVersion::Http3);
        shared.config.http3 = true;
        assert_eq!(transport_line(&shared).as_deref(), Some("256 users on 4 connections, HTTP/3 streams"));
        shared.config.connections = Some(1);
        assert_eq!(transport_line(&shared).as_deref(), Some("256 users on 1 connection, HTTP/3 streams"));
        let mut own = report(None, None, false, HttpVersion::Http3);
        own.config.http3 = true;
        own.http.version = None;
        assert_eq!(transport_line(&own).as_deref(), Some("HTTP/3, one connection per user"));
    }

    fn latency(p50: f64, p99: f64) -> crate::report::LatencyReport {
        crate::report::LatencyReport {
            mean: p50,
            stdev: 0.0,
            min: p50,
            p50,
            p90: p99,
            p95: p99,
            p99,
            p99_9: p99,
            max: p99,
            percentiles: Default::default(),
            spectrum: Vec::new(),
            histogram: None,
        }
    }

    #[test]
    fn over_quic_the_handshake_is_one_figure_with_its_connect() {
        let mut s = report(Some(4), None, false, HttpVersion::Http3);
        s.config.http3 = true;
        s.http.connections = 4;
        s.tls_handshake_us = Some(latency(1_100.0, 2_300.0));
        let versions = [("TLSv1.3".to_owned(), 4)].into_iter().collect();
        s.tls = Some(TlsReport { handshakes: 4, versions, ..TlsReport::default() });
        let mut one = s.clone();
        one.http.connections = 1;
        if let Some(tls) = one.tls.as_mut() {
            tls.handshakes = 1;
        }
        assert!(connection_line(&one).is_some_and(|l| l.ends_with("(1 handshake, TLSv1.3)")), "{one:?}");
        assert_eq!(
            connection_line(&s).as_deref(),
            Some("connections: 4 opened; QUIC handshake p50 1.10ms, p99 2.30ms (4 handshakes, TLSv1.3)")
        );
        // The same figures over TCP are a TLS handshake after a connect.
        s.config.http3 = false;
        s.connect_us = Some(latency(85.0, 310.0));
        assert_eq!(
            connection_line(&s).as_deref(),
            Some(
                "connections: 4 opened; connect p50 85µs, p99 310µs; TLS handshake p50 1.10ms, p99 2.30ms (4 full, 0 resumed, TLSv1.3)"
            )
        );
    }

    #[test]
    fn the_quic_line_says_what_0_rtt_and_the_first_byte_took() {
        use crate::report::QuicReport;
        let mut s = report(Some(4), None, false, HttpVersion::Http3);
        s.config.http3 = true;
        s.http.connections = 50;
        assert_eq!(quic_line(&s), None, "no quic part");
        s.quic = Some(QuicReport::default());
        assert_eq!(quic_line(&s), None, "nothing measured");
        s.quic = Some(QuicReport {
            zero_rtt_offered: 40,
            zero_rtt_accepted: 38,
            zero_rtt_us: Some(latency(1_200.0, 3_000.0)),
            ttfb_us: Some(latency(410.0, 1_900.0)),
        });
        assert_eq!(
            quic_line(&s).as_deref(),
            Some(
                "0-RTT: 40 of 50 connections offered early data, 38 accepted (p50 1.20ms); time to first byte p50 410µs, p99 1.90ms"
            )
        );
        s.quic = Some(QuicReport { ttfb_us: Some(latency(410.0, 1_900.0)), ..QuicReport::default() });
        assert_eq!(quic_line(&s).as_deref(), Some("time to first byte p50 410µs, p99 1.90ms"));
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
        let mut nothing = report(Some(2), None, true, HttpVersion::Http2);
        nothing.http.version = None;
        assert_eq!(transport_line(&nothing).as_deref(), Some("256 users on 2 connections, HTTP/2 streams"));
        assert_eq!(
            line(None, None, true, HttpVersion::Http11).as_deref(),
            Some("HTTP/1.1, one connection per user; warning: HTTP/2 was asked, but the server chose HTTP/1.1 (ALPN)")
        );
    }
}
