//! The attribute's arguments, `#[scenario(concurrency = 100, count = 10_000, …)]`: parsed into
//! [`ScenarioArgs`] and validated before any code is generated (tokio-macros' `Configuration`).

use std::fmt;
use std::time::Duration;

use humantime::DurationError;
use proc_macro2::{Span, TokenStream, TokenTree};
use quote::ToTokens as _;
use syn::meta::ParseNestedMeta;
use syn::parse::{ParseBuffer, ParseStream, Parser as _};
use syn::spanned::Spanned as _;
use syn::{Expr, ExprLit, ExprUnary, Ident, Lit, LitInt, LitStr, Token, UnOp, token};

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
    /// `name = "…"`; the function's name when absent.
    pub(crate) name: Option<(String, Span)>,
    /// `target = "http://…"`.
    pub(crate) target: Option<(String, Span)>,
    /// `thresholds(p99 < "50ms", …)`, each with the span of its text; empty when absent.
    pub(crate) thresholds: Vec<(Threshold, Span)>,
    /// `rate = 2000` or `rate = "120/m"`: the open model.
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
}

/// An arrival rate: `iterations` every `per`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rate {
    pub(crate) iterations: u64,
    pub(crate) per: Duration,
}

/// When a scenario stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Load {
    Count(u64),
    Duration(Duration),
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
            name: None,
            target: None,
            thresholds: Vec::new(),
            rate: None,
            max_concurrency: None,
            warmup: None,
            think_time: None,
            setup: None,
            teardown: None,
            stages: None,
            rate_stages: None,
            group: None,
        }
    }
}

const NO_LOAD: &str =
    "a scenario needs `count = N`, `duration = \"…\"` or a ramp (`stages = […]`, `rate_stages = […]`)";

/// The attribute's keys. Typed so that a key is spelt in one place only (serde's `Symbol`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    Concurrency,
    Count,
    Duration,
    Timeout,
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
}

impl Key {
    const ALL: [Key; 16] = [
        Key::Concurrency,
        Key::Count,
        Key::Duration,
        Key::Timeout,
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
    ];

    fn as_str(self) -> &'static str {
        match self {
            Key::Concurrency => "concurrency",
            Key::Count => "count",
            Key::Duration => "duration",
            Key::Timeout => "timeout",
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
        }
    }

    /// A typical value, quoted in error messages.
    fn example(self) -> &'static str {
        match self {
            Key::Concurrency => "100",
            Key::Count => "10_000",
            Key::Duration => "\"30s\"",
            Key::Timeout => "\"5s\"",
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
        }
    }

    fn from_path(path: &syn::Path) -> Option<Key> {
        let ident = path.get_ident()?;
        Key::ALL.into_iter().find(|key| ident == key.as_str())
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The values parsed so far. Only valid values are stored; `seen` also records keys whose value
/// was rejected, so that a duplicate or a `count`/`duration` clash is still reported.
#[derive(Debug, Default)]
struct Builder {
    seen: Vec<(Key, Span)>,
    concurrency: Option<(u32, Span)>,
    count: Option<(u64, Span)>,
    duration: Option<(Duration, Span)>,
    timeout: Option<(Duration, Span)>,
    name: Option<(String, Span)>,
    target: Option<(String, Span)>,
    thresholds: Vec<(Threshold, Span)>,
    rate: Option<(Rate, Span)>,
    max_concurrency: Option<(u32, Span)>,
    warmup: Option<(Load, Span)>,
    think_time: Option<((Duration, Duration), Span)>,
    setup: Option<(TokenStream, Span)>,
    teardown: Option<(TokenStream, Span)>,
    stages: Option<(Vec<(Duration, u64)>, Span)>,
    rate_stages: Option<(Vec<(Duration, u64)>, Span)>,
    group: Option<(String, Span)>,
}

impl Builder {
    /// Handles one `key = value`. Problems with the key or the value go to `errors` and parsing
    /// goes on with the next key; only an `Err` from here (malformed syntax) stops syn's loop.
    fn parse_one(&mut self, meta: &ParseNestedMeta, errors: &mut Errors) -> syn::Result<()> {
        let key_span = meta.path.span();
        let Some(key) = Key::from_path(&meta.path) else {
            let path = meta.path.segments.iter().map(|s| s.ident.to_string()).collect::<Vec<_>>().join("::");
            let expected = Key::ALL.map(|k| format!("`{k}`")).join(", ");
            errors.spanned(&meta.path, format!("unknown attribute `{path}`; expected one of: {expected}"));
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
            let list = thresholds(&content, key_span, errors)?;
            // A repeated `thresholds` has been reported; keep the first list, like other keys.
            if self.thresholds.is_empty() {
                self.thresholds = list;
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
            Key::Count => store(&mut self.count, errors.check(count(value)), span),
            Key::Duration => store(&mut self.duration, errors.check(duration(key, value)), span),
            Key::Timeout => store(&mut self.timeout, errors.check(duration(key, value)), span),
            Key::Name => store(&mut self.name, errors.check(name(value)), span),
            Key::Group => store(&mut self.group, errors.check(group(value)), span),
            Key::Target => store(&mut self.target, errors.check(target(value)), span),
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
        let ramp = self.stages.as_ref().or(self.rate_stages.as_ref());
        let load = match (self.count, self.duration, ramp) {
            (Some((count, span)), None, None) => (Load::Count(count), span),
            (None, Some((duration, span)), None) => (Load::Duration(duration), span),
            (None, None, Some((stages, span))) => (Load::Duration(stages.iter().map(|s| s.0).sum()), *span),
            _ => return None,
        };
        Some(ScenarioArgs {
            concurrency: self.concurrency,
            load,
            timeout: self.timeout,
            name: self.name,
            target: self.target,
            thresholds: self.thresholds,
            rate: self.rate,
            max_concurrency: self.max_concurrency,
            warmup: self.warmup,
            think_time: self.think_time,
            setup: self.setup,
            teardown: self.teardown,
            stages: self.stages,
            rate_stages: self.rate_stages,
            group: self.group,
        })
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

/// Sees through the invisible groups that `macro_rules!` puts around `$value:expr`.
fn strip_groups(expr: &Expr) -> &Expr {
    match expr {
        Expr::Group(group) => strip_groups(&group.expr),
        other => other,
    }
}

fn concurrency(key: Key, value: &Expr) -> syn::Result<u32> {
    let lit = int_literal(key, value, "u32")?;
    let n: u32 = lit.base10_parse().map_err(|_| error_at(lit, format!("`{key}` must be at most {}", u32::MAX)))?;
    if n == 0 {
        return Err(error_at(lit, format!("`{key}` must be at least 1")));
    }
    Ok(n)
}

fn count(value: &Expr) -> syn::Result<u64> {
    let key = Key::Count;
    let lit = int_literal(key, value, "u64")?;
    let n: u64 = lit.base10_parse().map_err(|_| error_at(lit, format!("`{key}` must be at most {}", u64::MAX)))?;
    if n == 0 {
        return Err(error_at(lit, format!("`{key}` must be at least 1")));
    }
    Ok(n)
}

/// An integer literal, unsuffixed or with the suffix of the type it ends up in.
fn int_literal<'a>(key: Key, value: &'a Expr, ty: &str) -> syn::Result<&'a LitInt> {
    match value {
        Expr::Lit(ExprLit { lit: Lit::Int(lit), .. }) if lit.suffix().is_empty() || lit.suffix() == ty => Ok(lit),
        Expr::Lit(ExprLit { lit: Lit::Int(lit), .. }) => Err(error_at(
            lit,
            format!("`{key}` is a `{ty}`: write `{}` without the `{}` suffix", lit.base10_digits(), lit.suffix()),
        )),
        // Called out on its own: "expected an integer" would be confusing for `-5`.
        Expr::Unary(ExprUnary { op: UnOp::Neg(_), expr, .. })
            if matches!(strip_groups(expr), Expr::Lit(ExprLit { lit: Lit::Int(_) | Lit::Float(_), .. })) =>
        {
            Err(syn::Error::new_spanned(value, format!("`{key}` must be at least 1")))
        }
        other => Err(syn::Error::new_spanned(other, format!("expected an integer such as `{}`", key.example()))),
    }
}

/// `stages = [("10s", 100), …]`: a list of `(length, target)` with targets up to `max`.
fn stages(key: Key, value: &Expr, max: u64) -> syn::Result<Vec<(Duration, u64)>> {
    let shape = || format!("write `{key}` as a list of (time, target), as in `{key} = {}`", key.example());
    let Expr::Array(list) = value else {
        return Err(syn::Error::new_spanned(value, shape()));
    };
    if list.elems.is_empty() {
        return Err(syn::Error::new_spanned(value, format!("`{key}` needs at least one stage: {}", key.example())));
    }
    let mut stages = Vec::with_capacity(list.elems.len());
    for stage in &list.elems {
        let Expr::Tuple(pair) = strip_groups(stage) else {
            return Err(syn::Error::new_spanned(stage, shape()));
        };
        let (Some(length), Some(target), 2) = (pair.elems.first(), pair.elems.last(), pair.elems.len()) else {
            return Err(syn::Error::new_spanned(stage, shape()));
        };
        let length = duration(key, strip_groups(length))?;
        let target = match strip_groups(target) {
            Expr::Lit(ExprLit { lit: Lit::Int(lit), .. }) if lit.suffix().is_empty() => lit
                .base10_parse::<u64>()
                .ok()
                .filter(|&n| n <= max)
                .ok_or_else(|| error_at(lit, format!("a target of `{key}` must be at most {max}")))?,
            other => return Err(syn::Error::new_spanned(other, shape())),
        };
        stages.push((length, target));
    }
    if stages.iter().all(|&(_, target)| target == 0) {
        return Err(syn::Error::new_spanned(value, format!("`{key}` never rises above 0: give a stage a target")));
    }
    let total: Duration = stages.iter().map(|s| s.0).sum();
    if u64::try_from(total.as_nanos()).is_err() {
        return Err(syn::Error::new_spanned(value, format!("`{key}` is too long: the limit is about 584 years")));
    }
    Ok(stages)
}

/// `setup = log_in`: a path naming a function, as tokens (its signature is left to rustc, which
/// points at this path when it does not fit).
fn hook(key: Key, value: &Expr) -> syn::Result<(TokenStream, Span)> {
    match value {
        Expr::Path(path) if path.qself.is_none() => Ok((path.path.to_token_stream(), path.span())),
        other => Err(syn::Error::new_spanned(
            other,
            format!(
                "`{key}` names an `async fn(&mut loadbench::Ctx) -> loadbench::Result<()>`, as in `{key} = {}`",
                key.example()
            ),
        )),
    }
}

/// `think_time = "1s"` (fixed) or `think_time = "500ms..2s"` (uniformly random in the range).
fn think_time(value: &Expr) -> syn::Result<(Duration, Duration)> {
    let key = Key::ThinkTime;
    let lit = string_literal(key, value)?;
    let text = lit.value();
    let parse = |part: &str| {
        humantime::parse_duration(part.trim()).map_err(|e| {
            error_at(lit, format!("`{key}` is not a valid time: {e}; write it like \"1s\" or \"500ms..2s\""))
        })
    };
    let (min, max) = match text.split_once("..") {
        Some((min, max)) => (parse(min)?, parse(max)?),
        None => {
            let fixed = parse(&text)?;
            (fixed, fixed)
        }
    };
    if max.is_zero() {
        return Err(error_at(lit, "`think_time` must be longer than zero; leave it out for no pause"));
    }
    if min > max {
        return Err(error_at(lit, "`think_time` goes from the shorter time to the longer, as in \"500ms..2s\""));
    }
    if u64::try_from(max.as_nanos()).is_err() {
        return Err(error_at(lit, "`think_time` is too long: the limit is about 584 years"));
    }
    Ok((min, max))
}

/// `warmup = "5s"` (a time) or `warmup = 100` (iterations).
fn warmup(value: &Expr) -> syn::Result<Load> {
    let key = Key::Warmup;
    match value {
        Expr::Lit(ExprLit { lit: Lit::Str(_), .. }) => duration(key, value).map(Load::Duration),
        Expr::Lit(ExprLit { lit: Lit::Int(_), .. }) | Expr::Unary(_) => {
            let lit = int_literal(key, value, "u64")?;
            let n: u64 =
                lit.base10_parse().map_err(|_| error_at(lit, format!("`{key}` must be at most {}", u64::MAX)))?;
            if n == 0 {
                return Err(error_at(lit, "`warmup` must be at least 1; leave it out for no warmup"));
            }
            Ok(Load::Count(n))
        }
        other => Err(syn::Error::new_spanned(
            other,
            "expected a time such as `\"5s\"` or a number of iterations such as `100`",
        )),
    }
}

/// `rate = 2000` (per second), or a string `"2000/s"`, `"120/m"` or `"10/h"`.
fn rate(value: &Expr) -> syn::Result<Rate> {
    let key = Key::Rate;
    const HOW: &str = "write it like `2000`, `\"2000/s\"` or `\"120/m\"`";
    let (iterations, lit_span) = match value {
        Expr::Lit(ExprLit { lit: Lit::Str(lit), .. }) => {
            let text = lit.value();
            let Some((number, unit)) = text.split_once('/') else {
                return Err(error_at(lit, format!("`{key}` needs a unit: {HOW}")));
            };
            let per = match unit.trim() {
                "s" => Duration::from_secs(1),
                "m" => Duration::from_secs(60),
                "h" => Duration::from_secs(3600),
                other => {
                    return Err(error_at(
                        lit,
                        format!("`{key}` has an unknown unit `{other}`: use `/s`, `/m` or `/h`; {HOW}"),
                    ));
                }
            };
            let iterations: u64 = number
                .trim()
                .replace('_', "")
                .parse()
                .map_err(|_| error_at(lit, format!("`{key}` is not a whole number of iterations: {HOW}")))?;
            if iterations == 0 {
                return Err(error_at(lit, format!("`{key}` must be at least 1")));
            }
            return Ok(Rate { iterations, per });
        }
        Expr::Lit(ExprLit { lit: Lit::Int(_), .. }) | Expr::Unary(_) => {
            let lit = int_literal(key, value, "u64")?;
            let n: u64 =
                lit.base10_parse().map_err(|_| error_at(lit, format!("`{key}` must be at most {}", u64::MAX)))?;
            (n, lit.span())
        }
        other => {
            return Err(syn::Error::new_spanned(other, "expected a rate such as `2000` or `\"120/m\"`"));
        }
    };
    if iterations == 0 {
        return Err(syn::Error::new(lit_span, format!("`{key}` must be at least 1")));
    }
    Ok(Rate { iterations, per: Duration::from_secs(1) })
}

fn string_literal(key: Key, value: &Expr) -> syn::Result<&LitStr> {
    match value {
        Expr::Lit(ExprLit { lit: Lit::Str(lit), .. }) => Ok(lit),
        other => Err(syn::Error::new_spanned(other, format!("expected a string such as {}", key.example()))),
    }
}

fn duration(key: Key, value: &Expr) -> syn::Result<Duration> {
    let lit = string_literal(key, value)?;
    let text = lit.value();
    let duration = humantime::parse_duration(&text).map_err(|e| {
        // These two already say what to write; the others ("invalid character at 2") need an example.
        let explained = matches!(e, DurationError::UnknownUnit { .. } | DurationError::NumberOverflow);
        let example = if explained { "" } else { "; write it like \"30s\", \"1m 30s\" or \"500ms\"" };
        error_at(lit, format!("`{key}` is not a valid duration: {e}{example}"))
    })?;
    if duration.is_zero() {
        return Err(error_at(lit, format!("`{key}` must be longer than zero")));
    }
    // The runtime receives nanoseconds as a `u64` (`Duration::from_nanos` is const).
    if u64::try_from(duration.as_nanos()).is_err() {
        return Err(error_at(lit, format!("`{key}` is too long: the limit is about 584 years")));
    }
    Ok(duration)
}

fn name(value: &Expr) -> syn::Result<String> {
    let lit = string_literal(Key::Name, value)?;
    let name = lit.value();
    if name.trim().is_empty() {
        return Err(error_at(lit, "`name` must not be empty"));
    }
    Ok(name)
}

fn group(value: &Expr) -> syn::Result<String> {
    let lit = string_literal(Key::Group, value)?;
    let group = lit.value();
    if group.trim().is_empty() {
        return Err(error_at(lit, "`group` must not be empty"));
    }
    Ok(group)
}

fn target(value: &Expr) -> syn::Result<String> {
    let lit = string_literal(Key::Target, value)?;
    let url = lit.value();
    if url.starts_with("https://") {
        return Err(error_at(lit, "`target` must start with `http://`: loadbench does not speak TLS yet"));
    }
    match url.strip_prefix("http://") {
        None => Err(error_at(lit, "`target` must start with `http://`, as in \"http://127.0.0.1:8080\"")),
        Some(rest) if rest.is_empty() || rest.starts_with('/') => {
            Err(error_at(lit, "`target` has no host, as in \"http://127.0.0.1:8080\""))
        }
        Some(_) => Ok(url),
    }
}

/// A figure a threshold can test. Mirrors `loadbench::threshold::Metric`; the generated code
/// names the runtime's variants, so a mismatch fails to compile in the UI tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Metric {
    P50,
    P90,
    P99,
    P999,
    Max,
    Mean,
    ErrorRate,
    Rps,
    Failed,
}

impl Metric {
    const ALL: [Metric; 9] = [
        Metric::P50,
        Metric::P90,
        Metric::P99,
        Metric::P999,
        Metric::Max,
        Metric::Mean,
        Metric::ErrorRate,
        Metric::Rps,
        Metric::Failed,
    ];

    /// The name users write.
    fn as_str(self) -> &'static str {
        match self {
            Metric::P50 => "p50",
            Metric::P90 => "p90",
            Metric::P99 => "p99",
            Metric::P999 => "p99_9",
            Metric::Max => "max",
            Metric::Mean => "mean",
            Metric::ErrorRate => "error_rate",
            Metric::Rps => "rps",
            Metric::Failed => "failed",
        }
    }

    /// The runtime's variant.
    pub(crate) fn variant(self) -> &'static str {
        match self {
            Metric::P50 => "P50",
            Metric::P90 => "P90",
            Metric::P99 => "P99",
            Metric::P999 => "P999",
            Metric::Max => "Max",
            Metric::Mean => "Mean",
            Metric::ErrorRate => "ErrorRate",
            Metric::Rps => "Rps",
            Metric::Failed => "Failed",
        }
    }
}

/// A comparison in a threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Lt,
    Le,
    Gt,
    Ge,
}

impl Op {
    /// The runtime's variant.
    pub(crate) fn variant(self) -> &'static str {
        match self {
            Op::Lt => "Lt",
            Op::Le => "Le",
            Op::Gt => "Gt",
            Op::Ge => "Ge",
        }
    }
}

/// One validated threshold; `value` is in the runtime's unit for the metric (microseconds for
/// latencies).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Threshold {
    pub(crate) metric: Metric,
    pub(crate) op: Op,
    pub(crate) value: f64,
}

/// Parses the inside of `thresholds(…)`: comma-separated `METRIC OP VALUE`. Each bad threshold
/// goes to `errors` and the others are still checked; only an `Err` (which cannot happen for
/// well-formed token trees) stops the attribute.
fn thresholds(content: ParseStream, key_span: Span, errors: &mut Errors) -> syn::Result<Vec<(Threshold, Span)>> {
    let tokens: TokenStream = content.parse()?;
    let mut chunks: Vec<Vec<TokenTree>> = vec![Vec::new()];
    for tt in tokens {
        match &tt {
            TokenTree::Punct(p) if p.as_char() == ',' => chunks.push(Vec::new()),
            _ => chunks.last_mut().map_or((), |chunk| chunk.push(tt)),
        }
    }
    // A trailing comma leaves one empty chunk at the end.
    if chunks.len() > 1 && chunks.last().is_some_and(Vec::is_empty) {
        chunks.pop();
    }
    if chunks.iter().all(Vec::is_empty) {
        errors.at(key_span, "`thresholds` is empty; write at least one, as in `thresholds(p99 < \"50ms\")`");
        return Ok(Vec::new());
    }
    let mut list = Vec::with_capacity(chunks.len());
    for chunk in chunks {
        let chunk: TokenStream = chunk.into_iter().collect();
        if chunk.is_empty() {
            errors.at(key_span, "empty threshold between two commas");
            continue;
        }
        let span = chunk.span();
        if let Some(threshold) = errors.check(threshold.parse2(chunk)) {
            list.push((threshold, span));
        }
    }
    Ok(list)
}

/// One `METRIC OP VALUE`.
fn threshold(input: ParseStream) -> syn::Result<Threshold> {
    const SHAPE: &str = "expected a threshold such as `p99 < \"50ms\"` or `error_rate < 0.01`";
    let ident: Ident = input.parse().map_err(|e| syn::Error::new(e.span(), SHAPE))?;
    let metric = Metric::ALL.into_iter().find(|m| ident == m.as_str()).ok_or_else(|| {
        let expected = Metric::ALL.map(|m| format!("`{}`", m.as_str())).join(", ");
        error_at(&ident, format!("unknown threshold metric `{ident}`; expected one of: {expected}"))
    })?;
    let op_span = input.span();
    let op = if input.peek(Token![<=]) {
        input.parse::<Token![<=]>()?;
        Op::Le
    } else if input.peek(Token![>=]) {
        input.parse::<Token![>=]>()?;
        Op::Ge
    } else if input.peek(Token![<]) {
        input.parse::<Token![<]>()?;
        Op::Lt
    } else if input.peek(Token![>]) {
        input.parse::<Token![>]>()?;
        Op::Gt
    } else if input.is_empty() {
        return Err(error_at(&ident, format!("`{ident}` needs a comparison and a limit, as in {}", example(metric))));
    } else {
        return Err(input.error("expected `<`, `<=`, `>` or `>=`"));
    };
    if input.is_empty() {
        // At the operator: at the end of input, syn would say "unexpected end of input".
        return Err(syn::Error::new(op_span, format!("expected a limit, as in {}", example(metric))));
    }
    let value: Expr = input.parse()?;
    if !input.is_empty() {
        return Err(input.error("expected `,` between thresholds"));
    }
    let value = threshold_value(metric, strip_groups(&value))?;
    Ok(Threshold { metric, op, value })
}

/// A whole threshold on `metric`, for messages.
fn example(metric: Metric) -> String {
    let limit = match metric {
        Metric::ErrorRate => "0.01",
        Metric::Rps => "1000",
        Metric::Failed => "0",
        _ => "\"50ms\"",
    };
    let op = if metric == Metric::Rps { ">" } else { "<" };
    format!("`{} {op} {limit}`", metric.as_str())
}

/// The limit of a threshold on `metric`, in the runtime's unit.
fn threshold_value(metric: Metric, value: &Expr) -> syn::Result<f64> {
    let name = metric.as_str();
    let number = |value: &Expr| -> Option<f64> {
        match value {
            Expr::Lit(ExprLit { lit: Lit::Int(lit), .. }) => lit.base10_parse::<f64>().ok(),
            Expr::Lit(ExprLit { lit: Lit::Float(lit), .. }) => lit.base10_parse::<f64>().ok(),
            Expr::Unary(ExprUnary { op: UnOp::Neg(_), expr, .. }) => match strip_groups(expr) {
                Expr::Lit(ExprLit { lit: Lit::Int(lit), .. }) => lit.base10_parse::<f64>().ok().map(|v| -v),
                Expr::Lit(ExprLit { lit: Lit::Float(lit), .. }) => lit.base10_parse::<f64>().ok().map(|v| -v),
                _ => None,
            },
            _ => None,
        }
    };
    match metric {
        Metric::P50 | Metric::P90 | Metric::P99 | Metric::P999 | Metric::Max | Metric::Mean => {
            let Expr::Lit(ExprLit { lit: Lit::Str(lit), .. }) = value else {
                return Err(syn::Error::new_spanned(
                    value,
                    format!("`{name}` takes a duration string such as \"50ms\""),
                ));
            };
            let duration = humantime::parse_duration(&lit.value()).map_err(|e| {
                error_at(lit, format!("`{name}` is not a valid duration: {e}; write it like \"50ms\" or \"1s\""))
            })?;
            if duration.is_zero() {
                return Err(error_at(lit, format!("`{name}` must be longer than zero")));
            }
            if u64::try_from(duration.as_nanos()).is_err() {
                return Err(error_at(lit, format!("`{name}` is too long: the limit is about 584 years")));
            }
            Ok(duration.as_nanos() as f64 / 1_000.0)
        }
        Metric::ErrorRate => match number(value) {
            Some(v) if (0.0..=1.0).contains(&v) => Ok(v),
            _ => Err(syn::Error::new_spanned(
                value,
                "`error_rate` is a fraction from 0 to 1, such as 0.01 for 1 % of iterations",
            )),
        },
        Metric::Rps => match number(value) {
            Some(v) if v.is_finite() && v >= 0.0 => Ok(v),
            Some(_) => Err(syn::Error::new_spanned(value, "`rps` must be a finite number, at least 0")),
            None => Err(syn::Error::new_spanned(value, "`rps` takes a number of iterations per second, such as 1000")),
        },
        Metric::Failed => match value {
            Expr::Lit(ExprLit { lit: Lit::Int(lit), .. }) => lit
                .base10_parse::<u64>()
                .map(|n| n as f64)
                .map_err(|_| error_at(lit, "`failed` takes a whole number, such as 0")),
            _ => Err(syn::Error::new_spanned(value, "`failed` takes a whole number, such as 0")),
        },
    }
}

fn error_at(lit: &impl syn::spanned::Spanned, message: impl fmt::Display) -> syn::Error {
    syn::Error::new(lit.span(), message)
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use super::*;

    fn parse(tokens: TokenStream) -> ScenarioArgs {
        match ScenarioArgs::parse(tokens) {
            Ok(args) => args,
            Err(e) => panic!("unexpected error: {e}"),
        }
    }

    /// Every message, in order.
    fn errors(tokens: TokenStream) -> Vec<String> {
        match ScenarioArgs::parse(tokens) {
            Ok(args) => panic!("expected errors, got {args:?}"),
            Err(e) => e.into_iter().map(|e| e.to_string()).collect(),
        }
    }

    #[test]
    fn minimal_count() {
        let args = parse(quote!(count = 100_000));
        assert_eq!(args.load.0, Load::Count(100_000));
        assert!(args.concurrency.is_none());
        assert!(args.timeout.is_none() && args.name.is_none() && args.target.is_none());
    }

    #[test]
    fn every_key() {
        let args = parse(quote!(
            concurrency = 1000u32,
            duration = "1m 30s",
            timeout = "500ms",
            name = "checkout",
            target = "http://127.0.0.1:8080/api",
        ));
        assert_eq!(args.concurrency.map(|c| c.0), Some(1000));
        assert_eq!(args.load.0, Load::Duration(Duration::from_secs(90)));
        assert_eq!(args.timeout.map(|t| t.0), Some(Duration::from_millis(500)));
        assert_eq!(args.name.map(|n| n.0).as_deref(), Some("checkout"));
        assert_eq!(args.target.map(|t| t.0).as_deref(), Some("http://127.0.0.1:8080/api"));
    }

    #[test]
    fn integers() {
        assert_eq!(errors(quote!(concurrency = 0, count = 1)), ["`concurrency` must be at least 1"]);
        assert_eq!(errors(quote!(concurrency = -5, count = 1)), ["`concurrency` must be at least 1"]);
        assert_eq!(errors(quote!(concurrency = "8", count = 1)), ["expected an integer such as `100`"]);
        assert_eq!(errors(quote!(concurrency = 1.5, count = 1)), ["expected an integer such as `100`"]);
        assert_eq!(
            errors(quote!(concurrency = 4_294_967_296, count = 1)),
            ["`concurrency` must be at most 4294967295"]
        );
        assert_eq!(
            errors(quote!(concurrency = 8u8, count = 1)),
            ["`concurrency` is a `u32`: write `8` without the `u8` suffix"]
        );
        assert_eq!(errors(quote!(count = 0)), ["`count` must be at least 1"]);
        assert_eq!(parse(quote!(count = 18_446_744_073_709_551_615)).load.0, Load::Count(u64::MAX));
    }

    #[test]
    fn durations() {
        assert_eq!(errors(quote!(duration = 30)), ["expected a string such as \"30s\""]);
        assert_eq!(errors(quote!(count = 1, timeout = "0s")), ["`timeout` must be longer than zero"]);
        let bad = errors(quote!(duration = "30 parsecs"));
        assert_eq!(bad.len(), 1);
        assert!(bad[0].starts_with("`duration` is not a valid duration: unknown time unit \"parsecs\""), "{bad:?}");
        assert_eq!(
            errors(quote!(duration = "30")),
            ["`duration` is not a valid duration: time unit needed, for example 30sec or 30ms"]
        );
        assert_eq!(
            errors(quote!(duration = "")),
            ["`duration` is not a valid duration: value was empty; write it like \"30s\", \"1m 30s\" or \"500ms\""]
        );
        assert!(errors(quote!(duration = "1000000 years"))[0].contains("too long"));
    }

    #[test]
    fn strings() {
        assert_eq!(errors(quote!(count = 1, name = "")), ["`name` must not be empty"]);
        assert_eq!(
            errors(quote!(count = 1, target = "localhost:8080")),
            ["`target` must start with `http://`, as in \"http://127.0.0.1:8080\""]
        );
        assert_eq!(
            errors(quote!(count = 1, target = "https://example.com")),
            ["`target` must start with `http://`: loadbench does not speak TLS yet"]
        );
        assert_eq!(
            errors(quote!(count = 1, target = "http://")),
            ["`target` has no host, as in \"http://127.0.0.1:8080\""]
        );
        assert_eq!(errors(quote!(count = 1, name = checkout)), ["expected a string such as \"checkout\""]);
    }

    #[test]
    fn combinations() {
        assert_eq!(errors(quote!()), [NO_LOAD]);
        assert_eq!(errors(quote!(concurrency = 5)), [NO_LOAD]);
        assert_eq!(
            errors(quote!(count = 1, duration = "1s")),
            [
                "`duration` cannot be combined with `count`: a scenario stops after a number of iterations or after a time, not both"
            ]
        );
        assert_eq!(errors(quote!(count = 1, count = 2)), ["`count` is set more than once"]);
        // An invalid first value still counts as given.
        assert_eq!(
            errors(quote!(count = 0, count = 2)),
            ["`count` must be at least 1", "`count` is set more than once"]
        );
    }

    #[test]
    fn unknown_keys_and_malformed_values() {
        let expected = "unknown attribute `foo`; expected one of: `concurrency`, `count`, `duration`, `timeout`, `name`, `target`, `thresholds`, `rate`, `max_concurrency`, `warmup`, `think_time`, `setup`, `teardown`, `stages`, `rate_stages`, `group`";
        assert_eq!(errors(quote!(foo = 1, count = 1)), [expected]);
        assert_eq!(errors(quote!(count = 1, foo(1, 2))), [expected]);
        assert_eq!(errors(quote!(count = 1, a::b)), [expected.replace("`foo`", "`a::b`")]);
        assert_eq!(errors(quote!(count)), ["expected a value: `count = 10_000`"]);
    }

    #[test]
    fn rates() {
        let rate = |tokens: TokenStream| parse(tokens).rate.map(|(r, _)| (r.iterations, r.per.as_secs()));
        assert_eq!(rate(quote!(rate = 2000, duration = "5s")), Some((2000, 1)));
        assert_eq!(rate(quote!(rate = "2_000/s", duration = "5s")), Some((2000, 1)));
        assert_eq!(rate(quote!(rate = "120/m", count = 10)), Some((120, 60)));
        assert_eq!(rate(quote!(rate = "10 / h", count = 10)), Some((10, 3600)));
        assert_eq!(parse(quote!(rate = 5, max_concurrency = 3, count = 1)).max_concurrency.map(|m| m.0), Some(3));

        assert_eq!(errors(quote!(rate = 0, count = 1)), ["`rate` must be at least 1"]);
        assert_eq!(errors(quote!(rate = "0/s", count = 1)), ["`rate` must be at least 1"]);
        assert_eq!(
            errors(quote!(rate = "2000", count = 1)),
            ["`rate` needs a unit: write it like `2000`, `\"2000/s\"` or `\"120/m\"`"]
        );
        assert_eq!(
            errors(quote!(rate = "5/d", count = 1)),
            [
                "`rate` has an unknown unit `d`: use `/s`, `/m` or `/h`; write it like `2000`, `\"2000/s\"` or `\"120/m\"`"
            ]
        );
        assert_eq!(
            errors(quote!(rate = "fast/s", count = 1)),
            ["`rate` is not a whole number of iterations: write it like `2000`, `\"2000/s\"` or `\"120/m\"`"]
        );
        assert_eq!(errors(quote!(rate = 1.5, count = 1)), ["expected a rate such as `2000` or `\"120/m\"`"]);
        assert_eq!(errors(quote!(rate = -3, count = 1)), ["`rate` must be at least 1"]);
        assert_eq!(errors(quote!(max_concurrency = 0, rate = 1, count = 1)), ["`max_concurrency` must be at least 1"]);
        assert_eq!(
            errors(quote!(rate = 10, concurrency = 5, count = 1)),
            [
                "`concurrency` sets the users of the closed model; with `rate`, write `max_concurrency = N` for the users that serve the rate"
            ]
        );
        assert_eq!(
            errors(quote!(max_concurrency = 5, count = 1)),
            [
                "`max_concurrency` goes with `rate = …` or `rate_stages = […]` (the open model); for a fixed number of users write `concurrency = N`"
            ]
        );
    }

    #[test]
    fn warmups() {
        let warmup = |tokens: TokenStream| parse(tokens).warmup.map(|(w, _)| w);
        assert_eq!(warmup(quote!(count = 1, warmup = "5s")), Some(Load::Duration(Duration::from_secs(5))));
        assert_eq!(warmup(quote!(count = 1, warmup = 100)), Some(Load::Count(100)));
        assert_eq!(warmup(quote!(count = 1)), None);
        assert_eq!(errors(quote!(count = 1, warmup = 0)), ["`warmup` must be at least 1; leave it out for no warmup"]);
        assert_eq!(errors(quote!(count = 1, warmup = "0s")), ["`warmup` must be longer than zero"]);
        assert_eq!(
            errors(quote!(count = 1, warmup = true)),
            ["expected a time such as `\"5s\"` or a number of iterations such as `100`"]
        );
        assert!(errors(quote!(count = 1, warmup = "soon"))[0].starts_with("`warmup` is not a valid duration"));
    }

    #[test]
    fn think_times() {
        let think = |tokens: TokenStream| parse(tokens).think_time.map(|(t, _)| t);
        let ms = Duration::from_millis;
        assert_eq!(think(quote!(count = 1, think_time = "1s")), Some((ms(1_000), ms(1_000))));
        assert_eq!(think(quote!(count = 1, think_time = "500ms..2s")), Some((ms(500), ms(2_000))));
        assert_eq!(think(quote!(count = 1, think_time = "0s .. 1s")), Some((ms(0), ms(1_000))));
        assert_eq!(
            errors(quote!(count = 1, think_time = "2s..1s")),
            ["`think_time` goes from the shorter time to the longer, as in \"500ms..2s\""]
        );
        assert_eq!(
            errors(quote!(count = 1, think_time = "0s")),
            ["`think_time` must be longer than zero; leave it out for no pause"]
        );
        assert!(errors(quote!(count = 1, think_time = "1s..soon"))[0].starts_with("`think_time` is not a valid time"));
        assert_eq!(errors(quote!(count = 1, think_time = 5)), ["expected a string such as \"500ms..2s\""]);
        assert_eq!(
            errors(quote!(rate = 5, count = 1, think_time = "1s")),
            ["`think_time` paces the users of the closed model; with `rate`, the schedule sets the pace"]
        );
    }

    #[test]
    fn hooks() {
        let args = parse(quote!(count = 1, setup = log_in, teardown = session::log_out));
        assert_eq!(args.setup.map(|p| p.0.to_string()).as_deref(), Some("log_in"));
        assert_eq!(args.teardown.map(|p| p.0.to_string()).as_deref(), Some("session :: log_out"));
        assert_eq!(
            errors(quote!(count = 1, setup = "log_in")),
            ["`setup` names an `async fn(&mut loadbench::Ctx) -> loadbench::Result<()>`, as in `setup = log_in`"]
        );
        assert_eq!(
            errors(quote!(count = 1, teardown = log_out(ctx))),
            [
                "`teardown` names an `async fn(&mut loadbench::Ctx) -> loadbench::Result<()>`, as in `teardown = log_out`"
            ]
        );
        assert_eq!(errors(quote!(count = 1, setup = a, setup = b)), ["`setup` is set more than once"]);
    }

    #[test]
    fn ramps() {
        let args = parse(quote!(stages = [("10s", 100), ("30s", 100), ("10s", 0)]));
        let s = Duration::from_secs;
        assert_eq!(args.stages.map(|s| s.0), Some(vec![(s(10), 100), (s(30), 100), (s(10), 0)]));
        assert_eq!(args.load.0, Load::Duration(s(50)));
        let args = parse(quote!(rate_stages = [("1m", 500)], max_concurrency = 20));
        assert_eq!(args.rate_stages.map(|s| s.0), Some(vec![(s(60), 500)]));
        assert_eq!(args.load.0, Load::Duration(s(60)));

        let shape = "write `stages` as a list of (time, target), as in `stages = [(\"10s\", 100), (\"30s\", 100), (\"10s\", 0)]`";
        assert_eq!(errors(quote!(stages = ("10s", 100))), [shape]);
        assert_eq!(errors(quote!(stages = [("10s", 100, 3)])), [shape]);
        assert_eq!(errors(quote!(stages = [("10s", "100")])), [shape]);
        assert_eq!(
            errors(quote!(stages = [])),
            ["`stages` needs at least one stage: [(\"10s\", 100), (\"30s\", 100), (\"10s\", 0)]"]
        );
        assert_eq!(errors(quote!(stages = [("10s", 0)])), ["`stages` never rises above 0: give a stage a target"]);
        assert_eq!(
            errors(quote!(stages = [("10s", 5_000_000_000)])),
            ["a target of `stages` must be at most 4294967295"]
        );
        assert!(errors(quote!(stages = [("soon", 10)]))[0].starts_with("`stages` is not a valid duration"));
        assert_eq!(
            errors(quote!(stages = [("10s", 10)], concurrency = 5, duration = "1s")),
            [
                "`concurrency` cannot be combined with `stages`: the stages set the users and how long the scenario runs",
                "`duration` cannot be combined with `stages`: the stages set the users and how long the scenario runs",
            ]
        );
        assert_eq!(
            errors(quote!(rate_stages = [("10s", 10)], rate = 5)),
            [
                "`rate` cannot be combined with `rate_stages`: the stages set the arrival rate and how long the scenario runs"
            ]
        );
    }

    #[test]
    fn groups() {
        assert_eq!(parse(quote!(count = 1, group = "shop")).group.map(|g| g.0).as_deref(), Some("shop"));
        assert_eq!(errors(quote!(count = 1, group = " ")), ["`group` must not be empty"]);
        assert_eq!(errors(quote!(count = 1, group = shop)), ["expected a string such as \"shop\""]);
    }

    #[test]
    fn reports_every_error_at_once() {
        let all = errors(quote!(concurrency = 0, foo = 1, duration = "soon", name = ""));
        assert_eq!(all.len(), 4, "{all:?}");
        assert_eq!(all[0], "`concurrency` must be at least 1");
        assert!(all[1].starts_with("unknown attribute `foo`"));
        assert!(all[2].starts_with("`duration` is not a valid duration"));
        assert_eq!(all[3], "`name` must not be empty");
    }

    fn thresholds_of(tokens: TokenStream) -> Vec<(Metric, Op, f64)> {
        parse(tokens).thresholds.into_iter().map(|(t, _)| (t.metric, t.op, t.value)).collect()
    }

    #[test]
    fn thresholds() {
        assert_eq!(
            thresholds_of(quote!(count = 1, thresholds(p99 < "50ms", error_rate <= 0.01, rps > 1000, failed < 1,))),
            [
                (Metric::P99, Op::Lt, 50_000.0),
                (Metric::ErrorRate, Op::Le, 0.01),
                (Metric::Rps, Op::Gt, 1000.0),
                (Metric::Failed, Op::Lt, 1.0),
            ]
        );
        assert_eq!(
            thresholds_of(quote!(
                count = 1,
                thresholds(p50 >= "1s 500ms", p99_9 < "2ms", max < "1s", mean < "1ms", p90 < "3ms", rps >= 0.5)
            )),
            [
                (Metric::P50, Op::Ge, 1_500_000.0),
                (Metric::P999, Op::Lt, 2_000.0),
                (Metric::Max, Op::Lt, 1_000_000.0),
                (Metric::Mean, Op::Lt, 1_000.0),
                (Metric::P90, Op::Lt, 3_000.0),
                (Metric::Rps, Op::Ge, 0.5),
            ]
        );
        assert!(parse(quote!(count = 1)).thresholds.is_empty());
    }

    #[test]
    fn every_bad_threshold_is_reported() {
        let all = errors(quote!(
            count = 1,
            thresholds(p98 < "5ms", p99 == "5ms", p99 < 50, error_rate < 2, rps > -1, failed < 0.5, p50 < "soon", 5)
        ));
        assert_eq!(
            all,
            [
                "unknown threshold metric `p98`; expected one of: `p50`, `p90`, `p99`, `p99_9`, `max`, `mean`, `error_rate`, `rps`, `failed`",
                "expected `<`, `<=`, `>` or `>=`",
                "`p99` takes a duration string such as \"50ms\"",
                "`error_rate` is a fraction from 0 to 1, such as 0.01 for 1 % of iterations",
                "`rps` must be a finite number, at least 0",
                "`failed` takes a whole number, such as 0",
                "`p50` is not a valid duration: expected number at 0; write it like \"50ms\" or \"1s\"",
                "expected a threshold such as `p99 < \"50ms\"` or `error_rate < 0.01`",
            ]
        );
        assert_eq!(
            errors(quote!(count = 1, thresholds(p99))),
            ["`p99` needs a comparison and a limit, as in `p99 < \"50ms\"`"]
        );
        assert_eq!(errors(quote!(count = 1, thresholds(rps >))), ["expected a limit, as in `rps > 1000`"]);
        assert_eq!(errors(quote!(count = 1, thresholds(p99 < "1ms" "2ms"))), ["expected `,` between thresholds"]);
        assert_eq!(
            errors(quote!(count = 1, thresholds())),
            ["`thresholds` is empty; write at least one, as in `thresholds(p99 < \"50ms\")`"]
        );
        assert_eq!(
            errors(quote!(count = 1, thresholds = "p99 < 50ms")),
            ["write thresholds as a list: `thresholds(p99 < \"50ms\", error_rate < 0.01)`"]
        );
        assert_eq!(errors(quote!(count = 1, thresholds(p99 < "0s"))), ["`p99` must be longer than zero"]);
        // Keys after a bad threshold list are still checked.
        assert_eq!(
            errors(quote!(thresholds(p98 < "1ms"), count = 0)),
            [
                "unknown threshold metric `p98`; expected one of: `p50`, `p90`, `p99`, `p99_9`, `max`, `mean`, `error_rate`, `rps`, `failed`",
                "`count` must be at least 1"
            ]
        );
    }

    #[test]
    fn a_syntax_error_keeps_earlier_errors_and_skips_the_missing_load_check() {
        let all = errors(quote!(concurrency = 0 name = "x"));
        assert_eq!(all, ["`concurrency` must be at least 1", "expected `,`"]);
    }
}
