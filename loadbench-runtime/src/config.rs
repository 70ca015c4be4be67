//! What a scenario declares: its load and settings, as the `#[scenario]` attribute builds them in a
//! `const` ([`ScenarioConfig`]). The engine turns one into a load plan; the words themselves (rates,
//! durations, thresholds) are the shared grammar's.

use std::time::Duration;

pub use loadbench_grammar::Rate;
use loadbench_grammar::{DEFAULT_OPEN_USERS, DEFAULT_USERS, RowThreshold, Threshold};

/// Per-request timeout used when the attribute gives none (k6 uses 60 s, wrk 2 s; 30 s keeps a
/// stalled server from holding a run for a minute while leaving room for slow endpoints).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// Most bytes of a response body a request keeps when neither the attribute (`max_body = N`) nor
/// the request ([`RequestBuilder::max_body`](crate::RequestBuilder::max_body)) sets it: larger
/// than any page or API answer a load test reads, small enough that a thousand users cannot
/// exhaust memory together by accident. A longer body fails the request with
/// [`ErrorKind::BodyTooLarge`](crate::ErrorKind::BodyTooLarge).
pub const DEFAULT_MAX_BODY: u64 = 16 * 1024 * 1024;
/// How long in-flight iterations may go on once a run is over (its duration reached, or the first
/// Ctrl-C or SIGTERM) before they are cancelled, when neither `--grace` nor `grace = "…"` says
/// (k6's `gracefulStop` is 30 s; 5 s lets most slow requests end without holding a stopped run).
pub const DEFAULT_GRACE: Duration = Duration::from_secs(5);

/// How long a scenario runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Load {
    /// Run the body exactly this many times in total, across all virtual users.
    Count(u64),
    /// Keep starting iterations until this much time has passed.
    Duration(Duration),
}

/// One stage of a ramp of virtual users (`stages = [("10s", 100), …]`): over `duration`, the
/// number of active users moves in a straight line from the previous stage's target (0 before
/// the first) to `target`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stage {
    /// How long the stage lasts.
    pub duration: Duration,
    /// Active virtual users at its end.
    pub target: u32,
}

/// One stage of a ramp of the arrival rate (`rate_stages = [("10s", 500), …]`): over
/// `duration`, the rate moves in a straight line from the previous stage's (0 before the first)
/// to `rate` iterations per second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateStage {
    /// How long the stage lasts.
    pub duration: Duration,
    /// Iterations per second at its end.
    pub rate: u64,
}

/// A virtual user's pause between iterations in the closed model: a uniformly random time from
/// `min` to `max` (both the same for a fixed pause).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThinkTime {
    /// The shortest pause.
    pub min: Duration,
    /// The longest pause; at least `min`.
    pub max: Duration,
}

/// What a virtual user's cookie jar keeps (`cookies = "…"` in the attribute). A jar is the
/// user's own; its domain, path and expiry rules are RFC 6265's, as the `cookie_store` crate
/// applies them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CookieMode {
    /// `cookies = "iteration"`, the default: the cookies the user's `setup` got are kept for its
    /// whole run (log in once per user, in `setup`), and those set during an iteration are
    /// dropped at its end, so that every iteration starts from the jar `setup` left (k6 empties
    /// its jar at each iteration; keeping `setup`'s cookies is what makes a session last).
    #[default]
    Iteration,
    /// `cookies = "user"`: kept for the user's whole run, iteration after iteration, as a
    /// browser keeps them.
    User,
    /// `cookies = "off"`: no jar; `Set-Cookie` is ignored and no `Cookie` header is sent unless
    /// the scenario writes one.
    Off,
}

/// The settings of one scenario, built by `#[scenario]` in a `const` context.
// Not `Eq`: thresholds hold `f64` limits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScenarioConfig {
    /// Virtual users as written (`concurrency`, or `max_concurrency` in the open model): at most
    /// this many bodies in flight, and this many whenever there is work (closed model). With
    /// [`ScenarioConfig::rate`], the users available to serve the rate. `None`: what
    /// [`ScenarioConfig::users`] derives.
    pub concurrency: Option<u32>,
    /// Open model: start iterations at this rate, whether or not earlier ones finished.
    pub rate: Option<Rate>,
    /// Run this many iterations, or for this long, before the measured part; their results are
    /// left out of every figure.
    pub warmup: Option<Load>,
    /// Closed model: each user pauses this long after each iteration, outside its latency.
    pub think_time: Option<ThinkTime>,
    /// A ramp of virtual users; the users are then its highest target.
    pub stages: &'static [Stage],
    /// A ramp of the arrival rate (open model); empty otherwise.
    pub rate_stages: &'static [RateStage],
    /// `group = "…"`: the selected scenarios of one group run at the same time, as one workload.
    pub group: Option<&'static str>,
    /// When the scenario stops.
    pub load: Load,
    /// Per-request timeout; [`DEFAULT_TIMEOUT`] when `None`.
    pub timeout: Option<Duration>,
    /// Most bytes of a response body kept (`max_body = N`); [`DEFAULT_MAX_BODY`] when `None`.
    pub max_body: Option<u64>,
    /// `grace = "…"`: how long in-flight iterations may finish after the run's end or the first
    /// stop signal before they are cancelled; [`DEFAULT_GRACE`] when `None` (`--grace` overrides
    /// it).
    pub grace: Option<Duration>,
    /// Base URL from the attribute; the command line and `LOADBENCH_TARGET` take precedence.
    pub target: Option<&'static str>,
    /// `thresholds(…)` from the attribute: conditions checked after a full run.
    pub thresholds: &'static [Threshold],
    /// `thresholds("ROW": …)` from the attribute: conditions on the scenario's steps and named
    /// requests of a name, checked with the scenario's.
    pub row_thresholds: &'static [RowThreshold],
    /// `cookies = "…"`: what each virtual user's cookie jar keeps.
    pub cookies: CookieMode,
    /// `follow_redirects = N`: redirects a request follows unless it says otherwise; 0 (the
    /// default) follows none, so that a request is one exchange and its latency the server's
    /// (`--follow-redirects` overrides it).
    pub follow_redirects: u32,
    /// `feed = "…"` (with `feed_mode`, `feed_end`): records for [`Ctx::feed`](crate::Ctx::feed).
    pub feed: Option<crate::feed::FeedConfig>,
    /// `connections = N`, `pipeline = D`, `http2 = true`: how the users' requests travel.
    pub transport: Transport,
}

/// How a scenario's requests travel (`connections`, `pipeline` and `http2` in the attribute;
/// `--connections`, `--pipeline` and `--http2` on the command line).
///
/// By default each virtual user owns one HTTP/1.1 connection (over TLS, the protocol ALPN
/// settles on, offering only `http/1.1`), so `concurrency = C` means C connections with one
/// request each. With `connections = N` the users share N connections instead: each user still
/// has one request in flight at a time, and what changes is where it travels. Over HTTP/2 the
/// requests on a connection are concurrent streams (up to the server's
/// `MAX_CONCURRENT_STREAMS`); over HTTP/1.1 they are pipelined, at most `pipeline` per
/// connection (1 unless set: users then take turns on the connections), answered in order.
///
/// ```
/// use loadbench::{Protocol, Transport};
/// // TechEmpower's plaintext test: 256 users on 16 connections, 16 requests deep.
/// let plaintext = Transport { connections: Some(16), pipeline: Some(16), protocol: Protocol::Http1 };
/// // h2load -c 10 -m 100: 1,000 users on 10 HTTP/2 connections.
/// let h2 = Transport { connections: Some(10), pipeline: None, protocol: Protocol::Http2 };
/// assert!(plaintext.shares_connections() && h2.shares_connections());
/// assert!(!Transport::DEFAULT.shares_connections());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Transport {
    /// The connections the users share; `None`, the default, gives each user its own.
    pub connections: Option<u32>,
    /// HTTP/1.1: the most requests in flight on one shared connection (pipelined); 1 when
    /// `None`. Has no meaning without `connections`, nor over HTTP/2.
    pub pipeline: Option<u32>,
    /// The protocol asked for (`http2 = true` or `--http2` ask for HTTP/2).
    pub protocol: Protocol,
}

/// The protocol a scenario's requests are asked to speak.
///
/// Pipelining is not a variant of its own: pipelining is how HTTP/1.1 travels on shared connections
/// (`connections`, `pipeline`), and a lane asking for HTTP/2 over TLS speaks it too when ALPN
/// settles on `http/1.1`. A `Pipelined` variant would repeat `connections` and could disagree
/// with it. The wire each lane runs is [`Transport::shares_connections`] with this.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Protocol {
    /// HTTP/1.1: each user on a connection of its own, or pipelined on shared ones.
    #[default]
    Http1,
    /// HTTP/2: with prior knowledge on `http://`, offered first by ALPN on `https://` (a server
    /// that answers `http/1.1` is then spoken to in HTTP/1.1, and the report says so).
    Http2,
    /// HTTP/3 over QUIC, on `https://` targets only, and never anything else: asked for, not
    /// discovered through `Alt-Svc`. Needs the runtime's `http3` feature.
    Http3,
}

impl Protocol {
    /// What the attribute's `http2` key asks for: HTTP/2 when `true`.
    pub const fn from_http2(http2: bool) -> Protocol {
        if http2 { Protocol::Http2 } else { Protocol::Http1 }
    }

    /// Whether HTTP/2 is asked for.
    pub const fn is_http2(self) -> bool {
        matches!(self, Protocol::Http2)
    }

    /// Whether HTTP/3 is asked for.
    pub const fn is_http3(self) -> bool {
        matches!(self, Protocol::Http3)
    }
}

impl Transport {
    /// One HTTP/1.1 connection per user, one request on it at a time.
    pub const DEFAULT: Transport = Transport { connections: None, pipeline: None, protocol: Protocol::Http1 };

    /// Whether requests go through connections that are not one user's own: shared ones, or
    /// HTTP/2 and HTTP/3 (whose connections are driven by a task of their own even with one user
    /// each).
    pub fn shares_connections(&self) -> bool {
        self.connections.is_some() || self.protocol != Protocol::Http1
    }

    /// The pipelining depth in force over HTTP/1.1: `pipeline`, else 1.
    pub fn depth(&self) -> u32 {
        self.pipeline.unwrap_or(1).max(1)
    }
}

impl ScenarioConfig {
    /// The settings of a scenario that declares nothing but its load: one user in the closed
    /// model running one iteration, no warmup, ramp, feed or thresholds, the default timeout,
    /// grace and body limit, each user on a connection of its own. The one home of the
    /// defaults: `#[scenario]` writes the keys the author wrote and fills the rest with
    /// `..ScenarioConfig::DEFAULT`, as does code building a scenario without the attribute.
    pub const DEFAULT: ScenarioConfig = ScenarioConfig {
        concurrency: None,
        rate: None,
        warmup: None,
        think_time: None,
        stages: &[],
        rate_stages: &[],
        group: None,
        load: Load::Count(1),
        timeout: None,
        max_body: None,
        grace: None,
        target: None,
        thresholds: &[],
        row_thresholds: &[],
        cookies: CookieMode::Iteration,
        follow_redirects: 0,
        feed: None,
        transport: Transport::DEFAULT,
    };

    /// The virtual users in force: as written, else a ramp's highest target, else
    /// [`DEFAULT_OPEN_USERS`] in the open model and [`DEFAULT_USERS`] in the closed one.
    pub fn users(&self) -> u32 {
        let open = self.rate.is_some() || !self.rate_stages.is_empty();
        self.concurrency.or_else(|| self.stages.iter().map(|stage| stage.target).max()).unwrap_or(if open {
            DEFAULT_OPEN_USERS
        } else {
            DEFAULT_USERS
        })
    }

    /// The per-request timeout in force.
    pub fn timeout(&self) -> Duration {
        self.timeout.unwrap_or(DEFAULT_TIMEOUT)
    }

    /// The most bytes of a response body kept, in force.
    pub fn max_body(&self) -> u64 {
        self.max_body.unwrap_or(DEFAULT_MAX_BODY)
    }

    /// The grace period declared, else [`DEFAULT_GRACE`].
    pub fn grace(&self) -> Duration {
        self.grace.unwrap_or(DEFAULT_GRACE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_users_are_as_written_else_derived_from_the_load() {
        let ten_per_second = Some(Rate { iterations: 10, per: Duration::from_secs(1) });
        const SECOND: Duration = Duration::from_secs(1);
        const RAMP: &[Stage] = &[Stage { duration: SECOND, target: 8 }, Stage { duration: SECOND, target: 3 }];
        const RATE_RAMP: &[RateStage] = &[RateStage { duration: SECOND, rate: 5 }];
        let users = |config: ScenarioConfig| config.users();
        assert_eq!(users(ScenarioConfig::DEFAULT), DEFAULT_USERS);
        assert_eq!(users(ScenarioConfig { rate: ten_per_second, ..ScenarioConfig::DEFAULT }), DEFAULT_OPEN_USERS);
        assert_eq!(users(ScenarioConfig { rate_stages: RATE_RAMP, ..ScenarioConfig::DEFAULT }), DEFAULT_OPEN_USERS);
        assert_eq!(users(ScenarioConfig { stages: RAMP, ..ScenarioConfig::DEFAULT }), 8);
        assert_eq!(users(ScenarioConfig { concurrency: Some(7), rate: ten_per_second, ..ScenarioConfig::DEFAULT }), 7);
        assert_eq!(users(ScenarioConfig { concurrency: Some(1), ..ScenarioConfig::DEFAULT }), 1);
    }
}
