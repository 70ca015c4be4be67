//! The attribute's keys, spelt in one place: the walk over `key = value` matches them, the value
//! parsers name them in messages, and the "unknown attribute" message lists them all.

use std::fmt;

/// The attribute's keys. Typed so that a key is spelt in one place only (serde's `Symbol`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Key {
    Concurrency,
    Count,
    Duration,
    Timeout,
    MaxBody,
    Grace,
    Name,
    Target,
    Thresholds,
    Rate,
    MaxConcurrency,
    Warmup,
    ThinkTime,
    Setup,
    Teardown,
    Stages,
    RateStages,
    Group,
    Cookies,
    FollowRedirects,
    Feed,
    FeedMode,
    FeedEnd,
    Connections,
    Pipeline,
    Http2,
    Http3,
}

impl Key {
    pub(super) const ALL: [Key; 27] = [
        Key::Concurrency,
        Key::Count,
        Key::Duration,
        Key::Timeout,
        Key::MaxBody,
        Key::Grace,
        Key::Name,
        Key::Target,
        Key::Thresholds,
        Key::Rate,
        Key::MaxConcurrency,
        Key::Warmup,
        Key::ThinkTime,
        Key::Setup,
        Key::Teardown,
        Key::Stages,
        Key::RateStages,
        Key::Group,
        Key::Cookies,
        Key::FollowRedirects,
        Key::Feed,
        Key::FeedMode,
        Key::FeedEnd,
        Key::Connections,
        Key::Pipeline,
        Key::Http2,
        Key::Http3,
    ];

    pub(super) fn as_str(self) -> &'static str {
        match self {
            Key::Concurrency => "concurrency",
            Key::Count => "count",
            Key::Duration => "duration",
            Key::Timeout => "timeout",
            Key::MaxBody => "max_body",
            Key::Grace => "grace",
            Key::Name => "name",
            Key::Target => "target",
            Key::Thresholds => "thresholds",
            Key::Rate => "rate",
            Key::MaxConcurrency => "max_concurrency",
            Key::Warmup => "warmup",
            Key::ThinkTime => "think_time",
            Key::Setup => "setup",
            Key::Teardown => "teardown",
            Key::Stages => "stages",
            Key::RateStages => "rate_stages",
            Key::Group => "group",
            Key::Cookies => "cookies",
            Key::FollowRedirects => "follow_redirects",
            Key::Feed => "feed",
            Key::FeedMode => "feed_mode",
            Key::FeedEnd => "feed_end",
            Key::Connections => "connections",
            Key::Pipeline => "pipeline",
            Key::Http2 => "http2",
            Key::Http3 => "http3",
        }
    }

    /// A typical value, quoted in error messages.
    pub(super) fn example(self) -> &'static str {
        match self {
            Key::Concurrency => "100",
            Key::Count => "10_000",
            Key::Duration => "\"30s\"",
            Key::Timeout => "\"5s\"",
            Key::MaxBody => "1_048_576",
            Key::Grace => "\"2s\"",
            Key::Name => "\"checkout\"",
            Key::Target => "\"http://127.0.0.1:8080\"",
            Key::Thresholds => "(p99 < \"50ms\", error_rate < 0.01)",
            Key::Rate => "2000",
            Key::MaxConcurrency => "200",
            Key::Warmup => "\"5s\"",
            Key::ThinkTime => "\"500ms..2s\"",
            Key::Setup => "log_in",
            Key::Teardown => "log_out",
            Key::Stages => "[(\"10s\", 100), (\"30s\", 100), (\"10s\", 0)]",
            Key::RateStages => "[(\"10s\", 500), (\"30s\", 500)]",
            Key::Group => "\"shop\"",
            Key::Cookies => "\"user\"",
            Key::FollowRedirects => "5",
            Key::Feed => "\"data/users.csv\"",
            Key::FeedMode => "\"sequential\"",
            Key::FeedEnd => "\"wrap\"",
            Key::Connections => "16",
            Key::Pipeline => "16",
            Key::Http2 => "true",
            Key::Http3 => "true",
        }
    }

    pub(super) fn from_path(path: &syn::Path) -> Option<Key> {
        let ident = path.get_ident()?;
        Key::ALL.into_iter().find(|key| ident == key.as_str())
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
