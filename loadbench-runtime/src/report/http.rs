//! What went over the wire for one scenario: responses, bytes, statuses, connections, retries,
//! redirects, and the HTTP version they came over.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// What went over the wire.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HttpReport {
    /// Responses received whole, of any status, to the measured iterations' requests (not a
    /// setup's, a teardown's or a warmup's): the table's `responses`, and over `duration_us` its
    /// `req/s`.
    pub responses: u64,
    /// Body bytes of the responses received whole, kept or discarded; a response cut short by a
    /// timeout or an error is not counted.
    pub bytes_received: u64,
    /// Responses by status code.
    #[serde(deserialize_with = "status_codes")]
    pub status: BTreeMap<u16, u64>,
    /// TCP connections opened (the first one per virtual user, plus reconnects).
    pub connections: u64,
    /// Requests sent a second time, on a new connection, because the reused connection they
    /// were sent on turned out closed before any byte of the response (a keep-alive race).
    #[serde(default)]
    pub retries: u64,
    /// Redirects followed: requests sent to a `Location` because a request asked to follow
    /// (`follow_redirects`); each is also one of `responses`.
    #[serde(default)]
    pub redirects: u64,
    /// The protocol the responses came over; absent when none came.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<HttpVersion>,
}

/// The HTTP version a scenario's responses came over (`http.version` in the JSON).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum HttpVersion {
    /// HTTP/1.1, one request at a time on a connection or pipelined.
    #[serde(rename = "HTTP/1.1")]
    Http11,
    /// HTTP/2: with prior knowledge, or chosen by ALPN.
    #[serde(rename = "HTTP/2")]
    Http2,
    /// HTTP/3, over QUIC.
    #[serde(rename = "HTTP/3")]
    Http3,
    /// Some of each (ALPN chose differently on different connections).
    #[serde(rename = "mixed")]
    Mixed,
}

impl HttpVersion {
    /// The version of `responses` responses of which `http2` came over HTTP/2 and `http3` over
    /// HTTP/3; `None` for none.
    pub fn of(responses: u64, http2: u64, http3: u64) -> Option<HttpVersion> {
        match (responses, http2, http3) {
            (0, _, _) => None,
            (_, 0, 0) => Some(HttpVersion::Http11),
            (all, h2, 0) if h2 >= all => Some(HttpVersion::Http2),
            (all, 0, h3) if h3 >= all => Some(HttpVersion::Http3),
            _ => Some(HttpVersion::Mixed),
        }
    }

    /// As the table and the JSON write it.
    pub fn as_str(self) -> &'static str {
        match self {
            HttpVersion::Http11 => "HTTP/1.1",
            HttpVersion::Http2 => "HTTP/2",
            HttpVersion::Http3 => "HTTP/3",
            HttpVersion::Mixed => "mixed",
        }
    }

    /// Two parts' versions as one (workers into a scenario, runs into their merge).
    pub fn merge(a: Option<HttpVersion>, b: Option<HttpVersion>) -> Option<HttpVersion> {
        match (a, b) {
            (Some(a), Some(b)) if a != b => Some(HttpVersion::Mixed),
            (a, b) => a.or(b),
        }
    }
}

impl HttpReport {
    /// Adds another report's figures to these (workers into a scenario, runs into their merge).
    pub fn add(&mut self, other: &HttpReport) {
        self.version = HttpVersion::merge(self.version, other.version);
        self.responses += other.responses;
        self.bytes_received += other.bytes_received;
        self.connections += other.connections;
        self.retries += other.retries;
        self.redirects += other.redirects;
        for (&code, &n) in &other.status {
            *self.status.entry(code).or_default() += n;
        }
    }
}

/// Reads [`HttpReport::status`], whose keys JSON writes as strings (`"200"`), also where serde
/// buffers the document before reading it and then no longer parses numbers out of keys: inside a
/// `#[serde(flatten)]` field, as `cargo loadbench`'s results hold a report (serde-rs/serde#1183).
fn status_codes<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<BTreeMap<u16, u64>, D::Error> {
    #[derive(PartialEq, Eq, PartialOrd, Ord, Deserialize)]
    #[serde(untagged)]
    enum Code {
        Number(u16),
        Text(String),
    }
    BTreeMap::<Code, u64>::deserialize(deserializer)?
        .into_iter()
        .map(|(code, n)| match code {
            Code::Number(code) => Ok((code, n)),
            Code::Text(text) => text
                .parse()
                .map(|code| (code, n))
                .map_err(|_| serde::de::Error::custom(format!("`{text}` is not an HTTP status code"))),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_codes_read_back_from_json_keys() {
        let http = HttpReport { status: [(200, 9), (503, 1)].into_iter().collect(), ..HttpReport::default() };
        let json = serde_json::to_string(&http).unwrap_or_default();
        assert!(json.contains(r#""status":{"200":9,"503":1}"#), "{json}");
        assert_eq!(serde_json::from_str::<HttpReport>(&json).ok(), Some(http));
        let bad = json.replace("503", "5xx");
        let err = serde_json::from_str::<HttpReport>(&bad).map(drop).map_err(|e| e.to_string());
        assert!(err.is_err_and(|e| e.contains("`5xx` is not an HTTP status code")));
    }
}
