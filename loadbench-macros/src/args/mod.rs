//! The attribute's arguments, `#[scenario(concurrency = 100, count = 10_000, …)]`: parsed into
//! [`ScenarioArgs`] and validated before any code is generated (tokio-macros' `Configuration`).
//!
//! This module walks the `key = value` list and checks how the keys combine; what one value
//! may be is decided in [`value`] (and [`thresholds`] for the list), the keys are named in
//! [`key`]. Keeping the walk apart from the values lets each value parser be read, and tested,
//! without the bookkeeping of duplicates and clashes.

mod feed;
mod key;
mod thresholds;
mod value;

#[cfg(test)]
mod agreement;
#[cfg(test)]
mod tests;

use std::time::Duration;

use loadbench_grammar::{DEFAULT_OPEN_USERS, DEFAULT_USERS, MAX_DURATION, Rate, RowThreshold, Threshold};
use proc_macro2::{Span, TokenStream, TokenTree};
use syn::meta::ParseNestedMeta;
use syn::parse::{ParseBuffer, ParseStream, Parser as _};
use syn::spanned::Spanned as _;
use syn::{Expr, Token, token};

pub(crate) use self::feed::tokens as feed_tokens;
use self::key::Key;
pub(crate) use self::value::{Cookies, Load};
use self::value::{
    boolean, concurrency, cookies, duration, hook, hops, non_empty, positive_u64, rate, stages, strip_groups, target,
    think_time, warmup,
};
use crate::errors::Errors;

/// The validated arguments of one `#[scenario]`.
///
/// Each value keeps the span of the literal it came from, so that generated code built from it
/// points back at the attribute.
#[derive(Debug)]
pub(crate) struct ScenarioArgs {
    /// `concurrency = N`; the runtime's default of one virtual user when absent.
    pub(crate) concurrency: Option<(u32, Span)>,
    /// `count = N` or `duration = "…"`: exactly one of them is required.
    pub(crate) load: (Load, Span),
    /// `timeout = "…"`.
    pub(crate) timeout: Option<(Duration, Span)>,
    /// `max_body = N`: the most bytes of a response body a request keeps.
    pub(crate) max_body: Option<(u64, Span)>,
    /// `grace = "…"`: how long in-flight iterations may finish after the end or a stop.
    pub(crate) grace: Option<(Duration, Span)>,
    /// `name = "…"`; the function's name when absent.
    pub(crate) name: Option<(String, Span)>,
    /// `target = "http://…"` or `"https://…"`.
    pub(crate) target: Option<(String, Span)>,
    /// `thresholds(p99 < "50ms", …)`, each with the span of its tokens; empty when absent.
    pub(crate) thresholds: Vec<(Threshold, Span)>,
    /// `thresholds("login": max < "1s", …)`: those on the rows of a name, each with its span.
    pub(crate) row_thresholds: Vec<(RowThreshold, Span)>,
    /// `rate = 2000`, `rate = "2000"` or `rate = "120/m"`: the open model.
    pub(crate) rate: Option<(Rate, Span)>,
    /// `max_concurrency = N`: the users that serve `rate`; only with `rate`.
    pub(crate) max_concurrency: Option<(u32, Span)>,
    /// `warmup = "5s"` or `warmup = 100`: run first, left out of the figures.
    pub(crate) warmup: Option<(Load, Span)>,
    /// `think_time = "1s"` or `"500ms..2s"`: `(min, max)`, the same for a fixed pause.
    pub(crate) think_time: Option<((Duration, Duration), Span)>,
    /// `setup = login`: the path of an `async fn(&mut Ctx) -> Result<()>` run once per user first.
    pub(crate) setup: Option<(TokenStream, Span)>,
    /// `teardown = logout`: the same, run once per user at the end.
    pub(crate) teardown: Option<(TokenStream, Span)>,
    /// `stages = [("10s", 100), …]`: a ramp of users, each stage `(length, target users)`.
    pub(crate) stages: Option<(Vec<(Duration, u64)>, Span)>,
    /// `rate_stages = [("10s", 500), …]`: a ramp of the arrival rate, `(length, per second)`.
    pub(crate) rate_stages: Option<(Vec<(Duration, u64)>, Span)>,
    /// `group = "shop"`: scenarios of one group run at the same time.
    pub(crate) group: Option<(String, Span)>,
    /// `cookies = "iteration" | "user" | "off"`: what each user's jar keeps.
    pub(crate) cookies: Option<(Cookies, Span)>,
    /// `follow_redirects = N`: redirects a request follows by default.
    pub(crate) follow_redirects: Option<(u32, Span)>,
    /// `feed = "data/users.csv"` with its mode and end (indices into `feed::MODES`, `ENDS`).
    pub(crate) feed: Option<FeedArgs>,
    /// `connections = N`: the connections the users share.
    pub(crate) connections: Option<(u32, Span)>,
    /// `pipeline = D`: HTTP/1.1 requests in flight per shared connection.
    pub(crate) pipeline: Option<(u32, Span)>,
    /// `http2 = true`.
    pub(crate) http2: Option<(bool, Span)>,
    /// `http3 = true`.
    pub(crate) http3: Option<(bool, Span)>,
}

/// A scenario's feed, as declared.
#[derive(Debug)]
pub(crate) struct FeedArgs {
    pub(crate) path: (String, Span),
    /// The runtime's `FeedMode` variant.
    pub(crate) mode: (&'static str, Span),
    /// The runtime's `FeedEnd` variant.
    pub(crate) end: (&'static str, Span),
}

impl ScenarioArgs {
    /// Parses and validates the tokens between the attribute's parentheses, reporting every
    /// problem at once.
    pub(crate) fn parse(tokens: TokenStream) -> syn::Result<ScenarioArgs> {
        let mut builder = Builder::default();
        let mut errors = Errors::default();
        let parsed = syn::meta::parser(|meta| builder.parse_one(&meta, &mut errors)).parse2(tokens);
        // A syntax error stops syn's loop, so keys after it were never seen and the
        // "needs `count` or `duration`" check would be a guess.
        let complete = errors.check(parsed).is_some();
        let args = builder.build(complete, &mut errors);
        errors.finish()?;
        args.ok_or_else(|| syn::Error::new(Span::call_site(), NO_LOAD))
    }

    /// Stands in for arguments that failed to parse, so that the rest of the expansion (and the
    /// IDE's view of it) stays as close as possible to what the user meant.
    pub(crate) fn fallback() -> ScenarioArgs {
        ScenarioArgs {
            concurrency: None,
            load: (Load::Count(1), Span::call_site()),
            timeout: None,
            max_body: None,
            grace: None,
            name: None,
            target: None,
            thresholds: Vec::new(),
            row_thresholds: Vec::new(),
            rate: None,
            max_concurrency: None,
            warmup: None,
            think_time: None,
            setup: None,
            teardown: None,
            stages: None,
            rate_stages: None,
            group: None,
            cookies: None,
            follow_redirects: None,
            feed: None,
            connections: None,
            pipeline: None,
            http2: None,
            http3: None,
        }
    }
}

const NO_LOAD: &str =
    "a scenario needs `count = N`, `duration = \"…\"` or a ramp (`stages = […]`, `rate_stages = […]`)";

/// The values parsed so far. Only valid values are stored; `seen` also records keys whose value
/// was rejected, so that a duplicate or a `count`/`duration` clash is still reported.
#[derive(Debug, Default)]
struct Builder {
    seen: Vec<(Key, Span)>,
    concurrency: Option<(u32, Span)>,
    count: Option<(u64, Span)>,
    duration: Option<(Duration, Span)>,
    timeout: Option<(Duration, Span)>,
    max_body: Option<(u64, Span)>,
    grace: Option<(Duration, Span)>,
    name: Option<(String, Span)>,
    target: Option<(String, Span)>,
    thresholds: Vec<(Threshold, Span)>,
    row_thresholds: Vec<(RowThreshold, Span)>,
    rate: Option<(Rate, Span)>,
    max_concurrency: Option<(u32, Span)>,
    warmup: Option<(Load, Span)>,
    think_time: Option<((Duration, Duration), Span)>,
    setup: Option<(TokenStream, Span)>,
    teardown: Option<(TokenStream, Span)>,
    stages: Option<(Vec<(Duration, u64)>, Span)>,
    rate_stages: Option<(Vec<(Duration, u64)>, Span)>,
    group: Option<(String, Span)>,
    cookies: Option<(Cookies, Span)>,
    follow_redirects: Option<(u32, Span)>,
    feed: Option<(String, Span)>,
    feed_mode: Option<(usize, Span)>,
    feed_end: Option<(usize, Span)>,
    connections: Option<(u32, Span)>,
    pipeline: Option<(u32, Span)>,
    http2: Option<(bool, Span)>,
    http3: Option<(bool, Span)>,
}

impl Builder {
    /// Handles one `key = value`. Problems with the key or the value go to `errors` and parsing
    /// goes on with the next key; only an `Err` from here (malformed syntax) stops syn's loop.
    fn parse_one(&mut self, meta: &ParseNestedMeta, errors: &mut Errors) -> syn::Result<()> {
        let key_span = meta.path.span();
        let Some(key) = Key::from_path(&meta.path) else {
            let path = meta.path.segments.iter().map(|s| s.ident.to_string()).collect::<Vec<_>>().join("::");
            let message = match crate::suggest::closest(&path, Key::ALL.map(Key::as_str)) {
                Some(key) => format!("unknown attribute `{path}`; did you mean `{key}`?"),
                None => {
                    let expected = Key::ALL.map(|k| format!("`{k}`")).join(", ");
                    format!("unknown attribute `{path}`; expected one of: {expected}")
                }
            };
            errors.spanned(&meta.path, message);
            return skip_value(meta.input);
        };

        if self.seen.iter().any(|&(k, _)| k == key) {
            errors.at(key_span, format!("`{key}` is set more than once"));
        }
        let clash = match key {
            Key::Count => Some(Key::Duration),
            Key::Duration => Some(Key::Count),
            _ => None,
        };
        if let Some(other) = clash.filter(|other| self.seen.iter().any(|(k, _)| k == other)) {
            errors.at(
                key_span,
                format!("`{key}` cannot be combined with `{other}`: a scenario stops after a number of iterations or after a time, not both"),
            );
        }
        self.seen.push((key, key_span));

        if key == Key::Thresholds {
            if !meta.input.peek(token::Paren) {
                errors.at(key_span, format!("write thresholds as a list: `thresholds{}`", key.example()));
                return skip_value(meta.input);
            }
            let content;
            syn::parenthesized!(content in meta.input);
            let lists = thresholds::list(&content, key_span, errors)?;
            // A repeated `thresholds` has been reported; keep the first list, like other keys.
            if self.thresholds.is_empty() && self.row_thresholds.is_empty() {
                self.thresholds = lists.scenario;
                self.row_thresholds = lists.rows;
            }
            return Ok(());
        }
        if !meta.input.peek(Token![=]) {
            errors.at(key_span, format!("expected a value: `{key} = {}`", key.example()));
            return skip_value(meta.input);
        }
        let value: Expr = match meta.value().and_then(ParseBuffer::parse) {
            Ok(value) => value,
            Err(error) => {
                errors.push(error);
                return skip_value(meta.input);
            }
        };
        let value = strip_groups(&value);
        let span = value.span();
        match key {
            Key::Concurrency => store(&mut self.concurrency, errors.check(concurrency(key, value)), span),
            Key::MaxConcurrency => store(&mut self.max_concurrency, errors.check(concurrency(key, value)), span),
            Key::Rate => store(&mut self.rate, errors.check(rate(value)), span),
            Key::Warmup => store(&mut self.warmup, errors.check(warmup(value)), span),
            Key::ThinkTime => store(&mut self.think_time, errors.check(think_time(value)), span),
            Key::Stages => store(&mut self.stages, errors.check(stages(key, value, u64::from(u32::MAX))), span),
            Key::RateStages => store(&mut self.rate_stages, errors.check(stages(key, value, u64::MAX)), span),
            Key::Setup => {
                if let (None, Some(path)) = (&self.setup, errors.check(hook(key, value))) {
                    self.setup = Some(path);
                }
            }
            Key::Teardown => {
                if let (None, Some(path)) = (&self.teardown, errors.check(hook(key, value))) {
                    self.teardown = Some(path);
                }
            }
            Key::Count => store(&mut self.count, errors.check(positive_u64(key, value)), span),
            Key::MaxBody => store(&mut self.max_body, errors.check(positive_u64(key, value)), span),
            Key::Duration => store(&mut self.duration, errors.check(duration(key, value)), span),
            Key::Timeout => store(&mut self.timeout, errors.check(duration(key, value)), span),
            Key::Grace => store(&mut self.grace, errors.check(duration(key, value)), span),
            Key::Name => store(&mut self.name, errors.check(non_empty(key, value)), span),
            Key::Group => store(&mut self.group, errors.check(non_empty(key, value)), span),
            Key::Target => store(&mut self.target, errors.check(target(value)), span),
            Key::Cookies => store(&mut self.cookies, errors.check(cookies(key, value)), span),
            Key::FollowRedirects => store(&mut self.follow_redirects, errors.check(hops(key, value)), span),
            Key::Feed => store(&mut self.feed, errors.check(feed::path(value)), span),
            Key::FeedMode => store(&mut self.feed_mode, errors.check(feed::choice(key, value, &feed::MODES)), span),
            Key::FeedEnd => store(&mut self.feed_end, errors.check(feed::choice(key, value, &feed::ENDS)), span),
            Key::Connections => store(&mut self.connections, errors.check(concurrency(key, value)), span),
            Key::Pipeline => store(&mut self.pipeline, errors.check(concurrency(key, value)), span),
            Key::Http2 => store(&mut self.http2, errors.check(boolean(key, value)), span),
            Key::Http3 => store(&mut self.http3, errors.check(boolean(key, value)), span),
            Key::Thresholds => {} // handled above: a list, not `= value`
        }
        Ok(())
    }

    /// Checks the combination of keys. Returns `None` when something is missing; the reason is in
    /// `errors` unless parsing stopped early.
    fn build(self, complete: bool, errors: &mut Errors) -> Option<ScenarioArgs> {
        let load_given =
            self.seen.iter().any(|&(k, _)| matches!(k, Key::Count | Key::Duration | Key::Stages | Key::RateStages));
        if complete && !load_given {
            // Call site: the attribute itself, since there is no token to point at.
            errors.at(Span::call_site(), NO_LOAD);
        }
        let seen = |key: Key| self.seen.iter().find(|&&(k, _)| k == key).map(|&(_, span)| span);
        // A ramp sets the run time and its own load; every key it replaces is reported where
        // it was written.
        let replaced: [(Key, &[Key], &str); 2] = [
            (
                Key::Stages,
                &[Key::Concurrency, Key::Count, Key::Duration, Key::Rate, Key::RateStages, Key::Warmup],
                "the stages set the users and how long the scenario runs",
            ),
            (
                Key::RateStages,
                &[Key::Rate, Key::Concurrency, Key::Count, Key::Duration, Key::Warmup, Key::ThinkTime],
                "the stages set the arrival rate and how long the scenario runs",
            ),
        ];
        for (ramp, keys, why) in replaced {
            if seen(ramp).is_some() {
                for &key in keys {
                    if let Some(span) = seen(key) {
                        errors.at(span, format!("`{key}` cannot be combined with `{ramp}`: {why}"));
                    }
                }
            }
        }
        let open = seen(Key::Rate).or(seen(Key::RateStages));
        match (open, seen(Key::Concurrency), seen(Key::MaxConcurrency)) {
            (Some(_), Some(span), _) => errors.at(
                span,
                "`concurrency` sets the users of the closed model; with `rate`, write `max_concurrency = N` for the users that serve the rate",
            ),
            (None, _, Some(span)) => errors.at(
                span,
                "`max_concurrency` goes with `rate = …` or `rate_stages = […]` (the open model); for a fixed number of users write `concurrency = N`",
            ),
            _ => {}
        }
        if let (Some(_), Some(span)) = (seen(Key::Rate), seen(Key::ThinkTime)) {
            errors
                .at(span, "`think_time` paces the users of the closed model; with `rate`, the schedule sets the pace");
        }
        if seen(Key::Feed).is_none() {
            for key in [Key::FeedMode, Key::FeedEnd] {
                if let Some(span) = seen(key) {
                    errors.at(span, format!("`{key}` goes with `feed = \"data/users.csv\"`, which names the file"));
                }
            }
        }
        if let (Some(&(mode, _)), Some(span)) = (self.feed_mode.as_ref(), seen(Key::FeedEnd))
            && mode != 0
        {
            errors.at(
                span,
                format!(
                    "`feed_end` is for `feed_mode = \"sequential\"`: a {} feed never runs out",
                    if mode == 1 { "random" } else { "per-user" }
                ),
            );
        }
        self.check_transport(errors);
        let feed = self.feed.map(|path| FeedArgs {
            path: path.clone(),
            mode: self.feed_mode.map_or((feed::MODE_VARIANTS[0], path.1), |(i, span)| (feed::MODE_VARIANTS[i], span)),
            end: self.feed_end.map_or((feed::END_VARIANTS[0], path.1), |(i, span)| (feed::END_VARIANTS[i], span)),
        });
        let ramp = self.stages.as_ref().or(self.rate_stages.as_ref());
        let load = match (self.count, self.duration, ramp) {
            (Some((count, span)), None, None) => (Load::Count(count), span),
            (None, Some((duration, span)), None) => (Load::Duration(duration), span),
            (None, None, Some((stages, span))) => {
                // `stages` has checked the total against the limit; saturating keeps this total.
                let total = loadbench_grammar::total_duration(stages.iter().map(|s| s.0)).unwrap_or(MAX_DURATION);
                (Load::Duration(total), *span)
            }
            _ => return None,
        };
        Some(ScenarioArgs {
            concurrency: self.concurrency,
            load,
            timeout: self.timeout,
            max_body: self.max_body,
            grace: self.grace,
            name: self.name,
            target: self.target,
            thresholds: self.thresholds,
            row_thresholds: self.row_thresholds,
            rate: self.rate,
            max_concurrency: self.max_concurrency,
            warmup: self.warmup,
            think_time: self.think_time,
            setup: self.setup,
            teardown: self.teardown,
            stages: self.stages,
            rate_stages: self.rate_stages,
            group: self.group,
            cookies: self.cookies,
            follow_redirects: self.follow_redirects,
            feed,
            connections: self.connections,
            pipeline: self.pipeline,
            http2: self.http2,
            http3: self.http3,
        })
    }

    /// One protocol at most, `pipeline` needs shared HTTP/1.1 connections, and shared
    /// connections need users to share them: each key reported where it was written.
    fn check_transport(&self, errors: &mut Errors) {
        let http2 = matches!(self.http2, Some((true, _)));
        let http3 = matches!(self.http3, Some((true, _)));
        if let (true, Some((_, span))) = (http2, &self.http3)
            && http3
        {
            errors.at(*span, "`http2` and `http3` ask for different protocols; keep one");
        }
        match (&self.pipeline, &self.connections) {
            (Some((_, span)), _) if http2 => errors.at(
                *span,
                "`pipeline` is HTTP/1.1's: over HTTP/2 (`http2 = true`) the requests on a connection are concurrent streams; remove `pipeline`",
            ),
            (Some((_, span)), _) if http3 => errors.at(
                *span,
                "`pipeline` is HTTP/1.1's: over HTTP/3 (`http3 = true`) the requests on a connection are concurrent streams; remove `pipeline`",
            ),
            (Some((_, span)), None) => errors.at(
                *span,
                "`pipeline` needs `connections = N`: a user with a connection of its own has one request in flight, so there is nothing to pipeline",
            ),
            _ => {}
        }
        // The users as the runtime derives them (`ScenarioConfig::users`): `concurrency`,
        // `max_concurrency`, a ramp's highest target, or the model's default.
        let open = self.rate.is_some() || self.rate_stages.is_some();
        let users = self
            .concurrency
            .or(self.max_concurrency)
            .map(|(n, _)| u64::from(n))
            .or_else(|| self.stages.as_ref().and_then(|(stages, _)| stages.iter().map(|s| s.1).max()))
            .unwrap_or(u64::from(if open { DEFAULT_OPEN_USERS } else { DEFAULT_USERS }));
        if let Some((n, span)) = &self.connections
            && u64::from(*n) > users
        {
            errors.at(
                *span,
                format!("`connections = {n}` is more than the virtual users ({users}): each connection needs a user to send on it"),
            );
        }
    }
}

/// Keeps the first valid value: a duplicate has already been reported.
fn store<T>(slot: &mut Option<(T, Span)>, value: Option<T>, span: Span) {
    if let (None, Some(value)) = (&slot, value) {
        *slot = Some((value, span));
    }
}

/// Skips the rest of a rejected `key = value` so that the keys after it are still checked.
fn skip_value(input: ParseStream) -> syn::Result<()> {
    input.step(|cursor| {
        let mut rest = *cursor;
        while let Some((tt, next)) = rest.token_tree() {
            if matches!(&tt, TokenTree::Punct(p) if p.as_char() == ',') {
                break;
            }
            rest = next;
        }
        Ok(((), rest))
    })
}
