//! What a worker measured of the connections its users opened: TCP connect and TLS handshake
//! times, and the handshakes by kind. Separate from the iterations' latency, which includes them
//! when a request had to open a connection: here is where that part of the time goes.

use std::time::Duration;

use hdrhistogram::Histogram;

use super::histogram::{latency_of, new_histogram};
use crate::http::{HttpCounters, QuicTiming};
use crate::report::histogram::Keep;
use crate::report::{LatencyReport, QuicReport, TlsReport};

/// One worker's connections. The histograms are made on first use: a closed-model run opens its
/// connections once, and an `http://` one makes no handshake.
#[derive(Debug, Default)]
pub(crate) struct ConnectionStats {
    connect_ns: Option<Histogram<u64>>,
    handshake_ns: Option<Histogram<u64>>,
    /// HTTP/3: each request's time to its response's head.
    first_byte_ns: Option<Histogram<u64>>,
    /// HTTP/3: each 0-RTT connection's time to the server's answer on its early data.
    zero_rtt_ns: Option<Histogram<u64>>,
    pub(crate) tls: TlsReport,
    /// HTTP/3: 0-RTT connections, offered and accepted.
    zero_rtt: (u64, u64),
}

impl ConnectionStats {
    /// Records one connection opened.
    pub(crate) fn record(&mut self, connect: Option<Duration>, handshake: Option<Duration>) {
        if let Some(connect) = connect {
            record(&mut self.connect_ns, connect);
        }
        if let Some(handshake) = handshake {
            record(&mut self.handshake_ns, handshake);
        }
    }

    /// Records what HTTP/3 measured beyond a request's latency.
    #[cfg_attr(not(feature = "http3"), allow(dead_code))]
    pub(crate) fn record_quic(&mut self, timing: QuicTiming) {
        match timing {
            QuicTiming::FirstByte(elapsed) => record(&mut self.first_byte_ns, elapsed),
            // A 0-RTT connection's handshake completes when the server answers its early data:
            // a handshake like any other in the counts, resumed when the data was taken (it
            // was sent on a ticket), its time apart from the 1-RTT ones.
            QuicTiming::ZeroRtt { elapsed, accepted } => {
                record(&mut self.zero_rtt_ns, elapsed);
                self.zero_rtt.1 += u64::from(accepted);
                self.tls.handshakes += 1;
                self.tls.resumed += u64::from(accepted);
                *self.tls.versions.entry("TLSv1.3".to_owned()).or_default() += 1;
            }
        }
    }

    /// Adds a finished user's handshake counts.
    pub(crate) fn absorb(&mut self, counters: &HttpCounters) {
        let tls = &counters.tls;
        self.tls.handshakes += tls.handshakes;
        self.tls.resumed += tls.resumed;
        self.tls.unverified += tls.unverified;
        self.tls.wrong_name += tls.wrong_name;
        self.tls.ca_as_server += tls.ca_as_server;
        self.zero_rtt.0 += tls.zero_rtt_offered;
        for (version, n) in [("TLSv1.3", tls.tls13), ("TLSv1.2", tls.handshakes - tls.tls13)] {
            if n > 0 {
                *self.tls.versions.entry(version.to_owned()).or_default() += n;
            }
        }
    }

    /// Adds another worker's connections.
    pub(crate) fn merge(&mut self, other: ConnectionStats) {
        merge(&mut self.connect_ns, other.connect_ns);
        merge(&mut self.handshake_ns, other.handshake_ns);
        merge(&mut self.first_byte_ns, other.first_byte_ns);
        merge(&mut self.zero_rtt_ns, other.zero_rtt_ns);
        self.tls.add(&other.tls);
        self.zero_rtt = (self.zero_rtt.0 + other.zero_rtt.0, self.zero_rtt.1 + other.zero_rtt.1);
    }

    /// TCP connect times, if any connection was opened; with `histograms`, their histogram too.
    pub(crate) fn connect_report(&self, histograms: bool) -> Option<LatencyReport> {
        self.connect_ns.as_ref().and_then(|h| latency_of(h, &[], Keep { spectrum: false, histogram: histograms }))
    }

    /// TLS handshake times, if any handshake completed; with `histograms`, their histogram too.
    pub(crate) fn handshake_report(&self, histograms: bool) -> Option<LatencyReport> {
        self.handshake_ns.as_ref().and_then(|h| latency_of(h, &[], Keep { spectrum: false, histogram: histograms }))
    }
}

impl ConnectionStats {
    /// The QUIC part of an HTTP/3 scenario's report; with `histograms`, the latencies'
    /// histograms too.
    pub(crate) fn quic_report(&self, histograms: bool) -> QuicReport {
        let keep = Keep { spectrum: false, histogram: histograms };
        QuicReport {
            zero_rtt_offered: self.zero_rtt.0,
            zero_rtt_accepted: self.zero_rtt.1,
            zero_rtt_us: self.zero_rtt_ns.as_ref().and_then(|h| latency_of(h, &[], keep)),
            ttfb_us: self.first_byte_ns.as_ref().and_then(|h| latency_of(h, &[], keep)),
        }
    }
}

fn record(histogram: &mut Option<Histogram<u64>>, elapsed: Duration) {
    let ns = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX).max(1);
    let histogram = histogram.get_or_insert_with(new_histogram);
    if histogram.record(ns).is_err() {
        histogram.saturating_record(ns);
    }
}

fn merge(into: &mut Option<Histogram<u64>>, other: Option<Histogram<u64>>) {
    match (into.as_mut(), other) {
        // Both auto-resize, so `add` cannot fail on range.
        (Some(into), Some(other)) => {
            let _ = into.add(&other);
        }
        (None, other) => *into = other,
        (Some(_), None) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_merge_across_workers() {
        let mut a = ConnectionStats::default();
        a.record(Some(Duration::from_micros(100)), None);
        let mut b = ConnectionStats::default();
        b.record(Some(Duration::from_micros(300)), Some(Duration::from_millis(2)));
        a.merge(b);
        let connect = a.connect_report(false).map(|l| (l.min.round(), l.max.round()));
        assert_eq!(connect, Some((100.0, 300.0)));
        // Within the histogram's 0.1 % resolution.
        assert!(a.handshake_report(false).is_some_and(|l| (l.p50 - 2000.0).abs() <= 2.0));
        assert!(ConnectionStats::default().connect_report(false).is_none());
    }
}
