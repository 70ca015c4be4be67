//! What one `key = value` may be: integers, strings, durations, the rate, the warmup, ramps and
//! hooks. Each parser takes the value's expression and returns it validated, or an error at the
//! tokens to change; none of them knows about the other keys.
//!
//! Rates and durations are loadbench-grammar's: the parsers here only check the token syntax
//! (a string, a number) and hand the text to the grammar, so that the attribute accepts and
//! refuses exactly what the command line does, with the same words.

use std::fmt;
use std::time::Duration;

use loadbench_grammar::Rate;
use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use syn::spanned::Spanned as _;
use syn::{Expr, ExprLit, ExprUnary, Lit, LitInt, LitStr, UnOp};

use super::key::Key;

/// When a scenario stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Load {
    Count(u64),
    Duration(Duration),
}

/// Sees through the invisible groups that `macro_rules!` puts around `$value:expr`.
pub(super) fn strip_groups(expr: &Expr) -> &Expr {
    match expr {
        Expr::Group(group) => strip_groups(&group.expr),
        other => other,
    }
}

pub(super) fn concurrency(key: Key, value: &Expr) -> syn::Result<u32> {
    let lit = int_literal(key, value, "u32")?;
    let n: u32 = lit.base10_parse().map_err(|_| error_at(lit, format!("`{key}` must be at most {}", u32::MAX)))?;
    if n == 0 {
        return Err(error_at(lit, format!("`{key}` must be at least 1")));
    }
    Ok(n)
}

/// `http2 = true`: a `bool` literal.
pub(super) fn boolean(key: Key, value: &Expr) -> syn::Result<bool> {
    match value {
        Expr::Lit(ExprLit { lit: Lit::Bool(b), .. }) => Ok(b.value),
        _ => Err(syn::Error::new_spanned(
            value,
            format!("`{key}` is `true` or `false`, as in `{key} = {}`", key.example()),
        )),
    }
}

/// `cookies = "…"`: what each virtual user's jar keeps (the runtime's `CookieMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cookies {
    Iteration,
    User,
    Off,
}

impl Cookies {
    /// The runtime's variant, for the generated code.
    pub(crate) fn variant(self) -> &'static str {
        match self {
            Cookies::Iteration => "Iteration",
            Cookies::User => "User",
            Cookies::Off => "Off",
        }
    }
}

/// `cookies = "iteration" | "user" | "off"`.
pub(super) fn cookies(key: Key, value: &Expr) -> syn::Result<Cookies> {
    let lit = string_literal(key, value)?;
    match lit.value().as_str() {
        "iteration" => Ok(Cookies::Iteration),
        "user" => Ok(Cookies::User),
        "off" => Ok(Cookies::Off),
        other => Err(error_at(
            lit,
            format!(
                "`{key}` is \"iteration\" (the default: setup's cookies kept, each iteration's dropped at its end), \"user\" (kept for the user's whole run) or \"off\", not \"{other}\""
            ),
        )),
    }
}

/// `follow_redirects = N`: a `u32`, 0 for none.
pub(super) fn hops(key: Key, value: &Expr) -> syn::Result<u32> {
    if let Expr::Unary(ExprUnary { op: UnOp::Neg(_), .. }) = value {
        return Err(syn::Error::new_spanned(value, format!("`{key}` is a number of redirects: 0 (none) or more")));
    }
    let lit = int_literal(key, value, "u32")?;
    lit.base10_parse().map_err(|_| error_at(lit, format!("`{key}` must be at most {}", u32::MAX)))
}

/// `count = N`, `max_body = N`: a `u64` of at least 1.
pub(super) fn positive_u64(key: Key, value: &Expr) -> syn::Result<u64> {
    let lit = int_literal(key, value, "u64")?;
    let n: u64 = lit.base10_parse().map_err(|_| error_at(lit, format!("`{key}` must be at most {}", u64::MAX)))?;
    if n == 0 {
        return Err(error_at(lit, format!("`{key}` must be at least 1")));
    }
    Ok(n)
}

/// An integer literal, unsuffixed or with the suffix of the type it ends up in.
pub(super) fn int_literal<'a>(key: Key, value: &'a Expr, ty: &str) -> syn::Result<&'a LitInt> {
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
pub(super) fn stages(key: Key, value: &Expr, max: u64) -> syn::Result<Vec<(Duration, u64)>> {
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
    // The ramp's length is the scenario's run time, so it has a duration's limit too.
    loadbench_grammar::total_duration(stages.iter().map(|s| s.0)).map_err(|e| grammar_error(key, value, e))?;
    Ok(stages)
}

/// `setup = log_in`: a path naming a function, as tokens (its signature is left to rustc, which
/// points at this path when it does not fit).
pub(super) fn hook(key: Key, value: &Expr) -> syn::Result<(TokenStream, Span)> {
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
pub(super) fn think_time(value: &Expr) -> syn::Result<(Duration, Duration)> {
    let key = Key::ThinkTime;
    let lit = string_literal(key, value)?;
    loadbench_grammar::parse_duration_range(&lit.value()).map_err(|e| grammar_error(key, lit, e))
}

/// `warmup = "5s"` (a time) or `warmup = 100` (iterations).
pub(super) fn warmup(value: &Expr) -> syn::Result<Load> {
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

/// `rate = 2000`, `rate = "2000"`, `rate = "120/m"`: the value's text, judged by the grammar as
/// `--rate` is. Only the token syntax is checked here: a string gives its value, a number its
/// digits (or its text, for a float, so that the grammar says why it is not whole).
pub(super) fn rate(value: &Expr) -> syn::Result<Rate> {
    let key = Key::Rate;
    let text = match value {
        Expr::Lit(ExprLit { lit: Lit::Str(lit), .. }) => lit.value(),
        Expr::Lit(ExprLit { lit: Lit::Int(_) | Lit::Float(_), .. }) => number_text(key, value)?,
        Expr::Unary(ExprUnary { op: UnOp::Neg(_), expr, .. })
            if matches!(strip_groups(expr), Expr::Lit(ExprLit { lit: Lit::Int(_) | Lit::Float(_), .. })) =>
        {
            format!("-{}", number_text(key, strip_groups(expr))?)
        }
        other => return Err(syn::Error::new_spanned(other, "expected a rate such as `2000` or `\"120/m\"`")),
    };
    text.parse::<Rate>().map_err(|e| grammar_error(key, value, e))
}

/// The text of a number literal as the grammar reads it: an integer's digits (its suffix, if any,
/// must be the `u64` it ends up in), a float as written.
fn number_text(key: Key, value: &Expr) -> syn::Result<String> {
    match value {
        Expr::Lit(ExprLit { lit: Lit::Float(lit), .. }) => Ok(lit.to_string()),
        _ => int_literal(key, value, "u64").map(|lit| lit.base10_digits().to_owned()),
    }
}

pub(super) fn string_literal(key: Key, value: &Expr) -> syn::Result<&LitStr> {
    match value {
        Expr::Lit(ExprLit { lit: Lit::Str(lit), .. }) => Ok(lit),
        other => Err(syn::Error::new_spanned(other, format!("expected a string such as {}", key.example()))),
    }
}

/// `duration = "1m 30s"`, and every other time written as a string.
pub(super) fn duration(key: Key, value: &Expr) -> syn::Result<Duration> {
    let lit = string_literal(key, value)?;
    loadbench_grammar::parse_duration(&lit.value()).map_err(|e| grammar_error(key, lit, e))
}

/// `name = "checkout"`, `group = "shop"`: a string with something in it.
pub(super) fn non_empty(key: Key, value: &Expr) -> syn::Result<String> {
    let lit = string_literal(key, value)?;
    let text = lit.value();
    if text.trim().is_empty() {
        return Err(error_at(lit, format!("`{key}` must not be empty")));
    }
    Ok(text)
}

pub(super) fn target(value: &Expr) -> syn::Result<String> {
    let lit = string_literal(Key::Target, value)?;
    let url = lit.value();
    match url.strip_prefix("http://").or_else(|| url.strip_prefix("https://")) {
        None => Err(error_at(lit, "`target` must start with `http://` or `https://`, as in \"http://127.0.0.1:8080\"")),
        Some(rest) if rest.is_empty() || rest.starts_with('/') => {
            Err(error_at(lit, "`target` has no host, as in \"http://127.0.0.1:8080\""))
        }
        Some(_) => Ok(url),
    }
}

/// The grammar's refusal of `key`'s value, at `tokens`. The grammar's message is the one the
/// command line prints; the key in front says which value it is about.
pub(super) fn grammar_error(key: Key, tokens: impl ToTokens, error: impl fmt::Display) -> syn::Error {
    syn::Error::new_spanned(tokens, format!("`{key}`: {error}"))
}

pub(super) fn error_at(lit: &impl syn::spanned::Spanned, message: impl fmt::Display) -> syn::Error {
    syn::Error::new(lit.span(), message)
}
