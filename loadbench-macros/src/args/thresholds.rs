//! `thresholds(p99 < "50ms", error_rate < 0.01)`: the list, and each `METRIC OP VALUE` in it.

use proc_macro2::{Span, TokenStream, TokenTree};
use syn::parse::{ParseStream, Parser as _};
use syn::spanned::Spanned as _;
use syn::{Expr, ExprLit, ExprUnary, Ident, Lit, Token, UnOp};

use super::value::{error_at, strip_groups};
use crate::errors::Errors;
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
pub(super) fn list(content: ParseStream, key_span: Span, errors: &mut Errors) -> syn::Result<Vec<(Threshold, Span)>> {
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
