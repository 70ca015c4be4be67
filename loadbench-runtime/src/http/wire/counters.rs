//! What one virtual user counts of its HTTP exchanges and TLS handshakes, in its own state (no
//! shared counter on the request path), merged into its worker's figures when it finishes.

use http::StatusCode;

/// HTTP figures of one virtual user, merged into the scenario's totals when it finishes.
///
/// What every response counts comes first, and the first status code's slot within the same 64
/// bytes: one cache line where the struct starts on a line (see `Ctx`'s layout); a test holds it.
#[derive(Debug, Default)]
#[repr(C)]
pub(crate) struct HttpCounters {
    pub(crate) responses: u64,
    pub(crate) bytes_received: u64,
    /// Of `responses`, those that came over HTTP/2.
    pub(crate) http2_responses: u64,
    pub(crate) status: StatusCounts,
    pub(crate) connections: u64,
    /// Requests sent again on a new connection after their reused one turned out closed.
    pub(crate) retries: u64,
    /// Redirects followed (requests sent to a `Location`).
    pub(crate) redirects: u64,
    /// Of `responses`, those that came over HTTP/3 (after the status counts, which every response
    /// touches, so that they stay in the first cache line).
    pub(crate) http3_responses: u64,
    pub(crate) tls: TlsCounters,
}

impl HttpCounters {
    /// Forgets the exchanges counted so far (responses, bytes, statuses, retries, redirects), not
    /// the connections and handshakes, which the user keeps: a setup's or a warmup's exchanges
    /// are not the scenario's, its connections stay open for it.
    pub(crate) fn forget_exchanges(&mut self) {
        self.responses = 0;
        self.bytes_received = 0;
        self.http2_responses = 0;
        self.http3_responses = 0;
        self.status.clear();
        self.retries = 0;
        self.redirects = 0;
    }
}

/// TLS handshakes of one virtual user.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct TlsCounters {
    /// Completed handshakes, full or resumed.
    pub(crate) handshakes: u64,
    /// Of those, the ones that resumed an earlier session.
    pub(crate) resumed: u64,
    /// Of those, the ones that negotiated TLS 1.3 (the others, 1.2).
    pub(crate) tls13: u64,
    /// QUIC connections that sent their first requests as 0-RTT early data (counted apart from
    /// `handshakes`: the server's answer comes later, and the worker records it).
    pub(crate) zero_rtt_offered: u64,
    /// Handshakes that failed because the server's certificate could not be verified.
    pub(crate) unverified: u64,
    /// Of those, the ones whose certificate was not valid for the target's host name.
    pub(crate) wrong_name: u64,
    /// Of those, the ones whose certificate was self-signed and marked as a CA.
    pub(crate) ca_as_server: u64,
}

/// Responses per status code. Few distinct codes occur in a run, so the first few are kept
/// inline, in the user's own state, which the request has just touched anyway: with a thousand
/// users, a heap allocation per user is a cache miss per response.
#[derive(Debug, Default)]
pub(crate) struct StatusCounts {
    /// `(code, count)`; a code of 0 marks a free slot.
    inline: [(u16, u64); 4],
    more: Vec<(u16, u64)>,
}

impl StatusCounts {
    pub(in crate::http) fn count(&mut self, status: StatusCode) {
        let code = status.as_u16();
        for slot in &mut self.inline {
            if slot.0 == code {
                slot.1 += 1;
                return;
            }
            if slot.0 == 0 {
                *slot = (code, 1);
                return;
            }
        }
        match self.more.iter_mut().find(|(c, _)| *c == code) {
            Some((_, n)) => *n += 1,
            None => self.more.push((code, 1)),
        }
    }

    /// Every `(code, count)` counted.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u16, u64)> + '_ {
        self.inline.iter().copied().filter(|&(code, _)| code != 0).chain(self.more.iter().copied())
    }

    pub(crate) fn clear(&mut self) {
        *self = StatusCounts::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What every response counts, then the first status code's slot, within 64 bytes of the
    /// struct's start (the comment on [`HttpCounters`]).
    #[test]
    #[cfg(target_pointer_width = "64")]
    fn what_every_response_counts_leads_the_counters() {
        use std::mem::{offset_of, size_of};
        let status = offset_of!(HttpCounters, status) + offset_of!(StatusCounts, inline);
        assert!(status + size_of::<(u16, u64)>() <= 64, "the first status slot at byte {status}");
    }

    #[test]
    fn status_counts_keep_every_code_beyond_the_inline_slots() {
        let mut counts = StatusCounts::default();
        for code in [200, 200, 201, 404, 500, 503, 200, 418, 503] {
            counts.count(StatusCode::from_u16(code).unwrap());
        }
        let mut all: Vec<(u16, u64)> = counts.iter().collect();
        all.sort_unstable();
        assert_eq!(all, [(200, 3), (201, 1), (404, 1), (418, 1), (500, 1), (503, 2)]);
        counts.clear();
        assert_eq!(counts.iter().count(), 0);
    }
}
