//! `#[scenario]` on a function: checks its signature and registers it with the runtime.

use std::fmt;

use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::ext::IdentExt as _;
use syn::{FnArg, ItemFn, Safety, Signature, Type};

use crate::args::{Load, ScenarioArgs};
use crate::errors::Errors;

const ONE_PARAMETER: &str = "a scenario takes one parameter, `ctx: &mut loadbench::Ctx`";

/// Expands `#[scenario(args)] item`.
///
/// Never fails: on error the item is still emitted unchanged, followed by `compile_error!`s, so
/// that the function keeps resolving in the IDE and rustc reports nothing but our errors
/// (tokio-macros' `token_stream_with_error`).
pub(crate) fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let args = errors.check(ScenarioArgs::parse(args));

    let func = match syn::parse2::<ItemFn>(item.clone()) {
        Ok(func) => func,
        Err(e) => {
            errors.at(e.span(), "`#[loadbench::scenario]` goes on an `async fn`");
            return with_errors(item, errors);
        }
    };

    let signature_errors = check_signature(&func.sig);
    let signature_ok = signature_errors.is_empty();
    errors.append(signature_errors);
    if !signature_ok {
        // Registering the function would only add type errors about generated code.
        return with_errors(item, errors);
    }
    // Past this point the signature is fine; bad arguments still get a full expansion (with
    // placeholder settings) so that the function is used and the IDE sees the real shape.
    let args = args.unwrap_or_else(ScenarioArgs::fallback);
    let mut tokens = register(&item, &func, &args);
    tokens.extend(errors.into_compile_errors());
    tokens
}

fn with_errors(mut item: TokenStream, errors: Errors) -> TokenStream {
    item.extend(errors.into_compile_errors());
    item
}

/// Checks what the runtime's `vu_future` needs to see: an `async fn(&mut Ctx) -> Result<()>`.
///
/// The parameter's and return type's *names* are left to rustc (they may be aliases or
/// imported under other names); we only catch the shapes that would otherwise produce a
/// confusing trait-bound error in generated code.
fn check_signature(sig: &Signature) -> Errors {
    let mut errors = Errors::default();
    if let Some(constness) = &sig.constness {
        errors.spanned(constness, "a scenario cannot be a `const fn`");
    }
    if sig.asyncness.is_none() {
        errors.spanned(sig.fn_token, "a scenario must be an `async fn`");
    }
    if let Safety::Unsafe(unsafe_token) = &sig.safety {
        errors.spanned(unsafe_token, "a scenario cannot be an `unsafe fn`");
    }
    if let Some(abi) = &sig.abi {
        errors.spanned(abi, "a scenario cannot be an `extern` function");
    }
    if !sig.generics.params.is_empty() {
        errors.spanned(&sig.generics, "a scenario cannot have generic parameters");
    }
    if let Some(where_clause) = &sig.generics.where_clause {
        errors.spanned(where_clause, "a scenario cannot have a `where` clause");
    }
    if let Some(variadic) = &sig.variadic {
        errors.spanned(variadic, "a scenario cannot be variadic");
    }
    check_parameters(sig, &mut errors);
    crate::output::check(sig, &mut errors);
    errors
}

fn check_parameters(sig: &Signature, errors: &mut Errors) {
    let mut inputs = sig.inputs.iter();
    let Some(first) = inputs.next() else {
        errors.at(sig.paren_token.span.join(), ONE_PARAMETER);
        return;
    };
    match first {
        FnArg::Receiver(receiver) => {
            errors.spanned(receiver, "a scenario cannot take `self`: it must be a free function");
        }
        FnArg::Typed(param) => {
            if !matches!(strip_groups(&param.ty), Type::Reference(r) if r.mutability.is_some()) {
                errors.spanned(&param.ty, ONE_PARAMETER);
            }
        }
    }
    // Point at what to delete rather than at the whole list.
    let extra: Vec<&FnArg> = inputs.collect();
    if !extra.is_empty() {
        errors.spanned(quote!(#(#extra),*), ONE_PARAMETER);
    }
}

/// Sees through the invisible groups that `macro_rules!` puts around `$ty:ty`.
fn strip_groups(ty: &Type) -> &Type {
    match ty {
        Type::Group(group) => strip_groups(&group.elem),
        other => other,
    }
}

/// The item, unchanged, followed by its registration (the contract with
/// `loadbench::__private`).
fn register(item: &TokenStream, func: &ItemFn, args: &ScenarioArgs) -> TokenStream {
    let private = quote!(::loadbench::__private);
    let ident = &func.sig.ident;
    // A `#[cfg]` below our attribute is still on the item: the registration must follow it, or
    // it would name a function that was compiled out.
    let cfgs = func.attrs.iter().filter(|attr| attr.path().is_ident("cfg"));

    let name = match &args.name {
        Some((name, span)) => literal(Literal::string(name), *span),
        // `r#match` is listed as `match`.
        None => literal(Literal::string(&ident.unraw().to_string()), ident.span()),
    };
    let config = config(args, &private);
    let (setup_fn, setup) = hook(&args.setup, "__loadbench_setup", &private);
    let (teardown_fn, teardown) = hook(&args.teardown, "__loadbench_teardown", &private);

    // Mixed-site: a scenario called `user` must not be shadowed by this parameter.
    let user = Ident::new("user", Span::mixed_site());
    // Spanned on the function's name so that a type error (wrong parameter or return type)
    // points at the user's function rather than at the attribute.
    let call = quote_spanned!(ident.span()=> ::loadbench::__private::vu_future(#user, #ident));

    quote! {
        #item

        #(#cfgs)*
        const _: () = {
            fn __loadbench_virtual_user(#user: #private::VirtualUser) -> #private::VuFuture {
                #call
            }
            #setup_fn
            #teardown_fn

            #private::inventory::submit! {
                #private::ScenarioEntry {
                    name: #name,
                    module_path: ::core::module_path!(),
                    file: ::core::file!(),
                    line: ::core::line!(),
                    config: #config,
                    run: __loadbench_virtual_user,
                    setup: #setup,
                    teardown: #teardown,
                }
            }
        };
    }
}

/// The scenario's `ScenarioConfig`: the keys the author wrote, the rest from
/// `ScenarioConfig::DEFAULT`, so that the runtime alone decides a default.
fn config(args: &ScenarioArgs, private: &TokenStream) -> TokenStream {
    let mut fields: Vec<TokenStream> = Vec::new();
    let mut field = |name: &str, value: TokenStream| {
        let name = Ident::new(name, Span::call_site());
        fields.push(quote!(#name: #value));
    };
    if let Some(concurrency) = users(args) {
        field("concurrency", concurrency);
    }
    if let Some((rate, span)) = args.rate {
        let iterations = literal(Literal::u64_unsuffixed(rate.iterations), span);
        let per = duration_expr(rate.per, span);
        field("rate", some(quote!(#private::Rate { iterations: #iterations, per: #per })));
    }
    if let Some((warmup, span)) = args.warmup {
        field("warmup", some(load_expr(warmup, span)));
    }
    if let Some(((min, max), span)) = args.think_time {
        let (min, max) = (duration_expr(min, span), duration_expr(max, span));
        field("think_time", some(quote!(#private::ThinkTime { min: #min, max: #max })));
    }
    if let Some((stages, span)) = &args.stages {
        let stages = stages.iter().map(|&(length, target)| {
            let length = duration_expr(length, *span);
            let target = literal(Literal::u32_unsuffixed(u32::try_from(target).unwrap_or(u32::MAX)), *span);
            quote!(#private::Stage { duration: #length, target: #target })
        });
        field("stages", quote!(&[#(#stages),*]));
    }
    if let Some((stages, span)) = &args.rate_stages {
        let stages = stages.iter().map(|&(length, rate)| {
            let length = duration_expr(length, *span);
            let rate = literal(Literal::u64_unsuffixed(rate), *span);
            quote!(#private::RateStage { duration: #length, rate: #rate })
        });
        field("rate_stages", quote!(&[#(#stages),*]));
    }
    if let Some((group, span)) = &args.group {
        field("group", some(literal(Literal::string(group), *span)));
    }
    field("load", load_expr(args.load.0, args.load.1));
    if let Some((duration, span)) = args.timeout {
        field("timeout", some(duration_expr(duration, span)));
    }
    if let Some((bytes, span)) = args.max_body {
        field("max_body", some(literal(Literal::u64_unsuffixed(bytes), span)));
    }
    if let Some((duration, span)) = args.grace {
        field("grace", some(duration_expr(duration, span)));
    }
    if let Some((url, span)) = &args.target {
        field("target", some(literal(Literal::string(url), *span)));
    }
    if !args.thresholds.is_empty() {
        let thresholds = args.thresholds.iter().map(|(threshold, span)| threshold_expr(threshold, *span, private));
        field("thresholds", quote!(&[#(#thresholds),*]));
    }
    if !args.row_thresholds.is_empty() {
        let rows = args.row_thresholds.iter().map(|(row, span)| {
            let name = literal(Literal::string(&row.row), *span);
            let threshold = threshold_expr(&row.threshold, *span, private);
            quote_spanned!(*span=> #private::RowThreshold {
                row: ::std::borrow::Cow::Borrowed(#name),
                threshold: #threshold,
            })
        });
        field("row_thresholds", quote!(&[#(#rows),*]));
    }
    if let Some((mode, span)) = args.cookies {
        let variant = Ident::new(mode.variant(), span);
        field("cookies", quote!(#private::CookieMode::#variant));
    }
    if let Some((hops, span)) = args.follow_redirects {
        field("follow_redirects", literal(Literal::u32_unsuffixed(hops), span));
    }
    if args.feed.is_some() {
        field("feed", crate::args::feed_tokens(args.feed.as_ref()));
    }
    if let Some(transport) = transport(args, private) {
        field("transport", transport);
    }
    quote!(#private::ScenarioConfig { #(#fields,)* ..#private::ScenarioConfig::DEFAULT })
}

/// `concurrency`, or `max_concurrency` with `rate` (`ScenarioArgs` has refused the other
/// combinations): one field holds both models' users. Neither written, the runtime derives them
/// (`ScenarioConfig::users`: a ramp's highest target, else the model's default).
fn users(args: &ScenarioArgs) -> Option<TokenStream> {
    let (n, span) = args.concurrency.or(args.max_concurrency)?;
    Some(some(literal(Literal::u32_unsuffixed(n), span)))
}

/// `connections`, `pipeline`, `http2` and `http3` as a `Transport`, when any of them is written.
/// `http3 = true` decides the protocol whatever `http2` says: both asking is a compile error
/// already, and one `protocol` field keeps it the only one.
fn transport(args: &ScenarioArgs, private: &TokenStream) -> Option<TokenStream> {
    let mut fields: Vec<TokenStream> = Vec::new();
    if let Some((n, span)) = args.connections {
        let n = some(literal(Literal::u32_unsuffixed(n), span));
        fields.push(quote!(connections: #n));
    }
    if let Some((n, span)) = args.pipeline {
        let n = some(literal(Literal::u32_unsuffixed(n), span));
        fields.push(quote!(pipeline: #n));
    }
    match (args.http2, args.http3) {
        (_, Some((true, span))) => {
            let http3 = Ident::new("Http3", span);
            fields.push(quote!(protocol: #private::Protocol::#http3));
        }
        (Some((on, span)), _) => {
            let on = Ident::new(if on { "true" } else { "false" }, span);
            fields.push(quote!(protocol: #private::Protocol::from_http2(#on)));
        }
        (None, _) => {}
    }
    (!fields.is_empty()).then(|| quote!(#private::Transport { #(#fields,)* ..#private::Transport::DEFAULT }))
}

/// A `thresholds(…)` entry as a runtime `Threshold`.
fn threshold_expr(threshold: &loadbench_grammar::Threshold, span: Span, private: &TokenStream) -> TokenStream {
    let metric = metric(threshold.metric, span, private);
    let op = variant(threshold.op, span);
    if !threshold.value.is_finite() {
        // The grammar only returns finite limits; `f64_unsuffixed` would panic on another.
        return syn::Error::new(span, "a threshold's limit must be a finite number").into_compile_error();
    }
    let value = literal(Literal::f64_unsuffixed(threshold.value), span);
    quote_spanned!(span=> #private::Threshold { metric: #metric, op: #private::Op::#op, value: #value })
}

/// A hook (`setup`, `teardown`) as a function of the registry's `Hook` type, and the
/// `Option` naming it; the call is spanned on the user's path, so a function of the wrong
/// shape is reported there.
fn hook(path: &Option<(TokenStream, Span)>, name: &str, private: &TokenStream) -> (TokenStream, TokenStream) {
    match path {
        Some((path, span)) => {
            let ident = Ident::new(name, Span::mixed_site());
            let ctx = Ident::new("ctx", Span::mixed_site());
            let call = quote_spanned!(*span=> #private::hook_future(#ctx, #path));
            let item = quote! {
                fn #ident(#ctx: &mut #private::Ctx) -> #private::HookFuture<'_> {
                    #call
                }
            };
            (item, some(quote!(#ident)))
        }
        None => (TokenStream::new(), quote!(::core::option::Option::None)),
    }
}

fn some(value: TokenStream) -> TokenStream {
    quote!(::core::option::Option::Some(#value))
}

/// A `const` expression for a count or a time (`Load`).
fn load_expr(load: Load, span: Span) -> TokenStream {
    let private = quote!(::loadbench::__private);
    match load {
        Load::Count(n) => {
            let n = literal(Literal::u64_unsuffixed(n), span);
            quote!(#private::Load::Count(#n))
        }
        Load::Duration(duration) => {
            let duration = duration_expr(duration, span);
            quote!(#private::Load::Duration(#duration))
        }
    }
}

/// A `const` expression for `duration`. `ScenarioArgs` has checked that it fits in a `u64` of
/// nanoseconds; saturating keeps this total anyway.
fn duration_expr(duration: std::time::Duration, span: Span) -> TokenStream {
    let nanos = u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX);
    let nanos = literal(Literal::u64_unsuffixed(nanos), span);
    quote!(::core::time::Duration::from_nanos(#nanos))
}

/// The runtime's value of `metric`: `Metric::P99` for a metric with a name of its own, else
/// `Metric::Percentile(…)` of the exact percentile, built in the `const` (the grammar already
/// judged it, so the `None` arm is never taken; were it, the `const` would not compile).
fn metric(metric: loadbench_grammar::Metric, span: Span, private: &TokenStream) -> TokenStream {
    if let Some(percentile) = metric.percentile().filter(|_| !loadbench_grammar::Metric::ALL.contains(&metric)) {
        let n = literal(Literal::u32_unsuffixed(percentile.hundred_thousandths()), span);
        return quote_spanned!(span=> #private::Metric::Percentile(
            match #private::Percentile::from_hundred_thousandths(#n) {
                ::core::option::Option::Some(p) => p,
                ::core::option::Option::None => ::core::panic!("not a percentile"),
            }
        ));
    }
    let name = match metric {
        loadbench_grammar::Metric::P50 => Ident::new("P50", span).into_token_stream(),
        loadbench_grammar::Metric::P90 => Ident::new("P90", span).into_token_stream(),
        loadbench_grammar::Metric::P95 => Ident::new("P95", span).into_token_stream(),
        loadbench_grammar::Metric::P99 => Ident::new("P99", span).into_token_stream(),
        loadbench_grammar::Metric::P999 => Ident::new("P999", span).into_token_stream(),
        other => variant(other, span),
    };
    quote_spanned!(span=> #private::Metric::#name)
}

/// The runtime's variant for a value of one of the grammar's enums (`Metric::P99`, `Op::Lt`): the
/// derived `Debug` of a unit variant is its name, and the runtime's variants are named alike, so
/// a metric added to the grammar needs no change here. Were a variant ever to carry data, its
/// `Debug` would not be a name: that becomes a compile error rather than a panic.
fn variant(value: impl fmt::Debug, span: Span) -> TokenStream {
    let name = format!("{value:?}");
    match syn::parse_str::<Ident>(&name) {
        Ok(mut ident) => {
            ident.set_span(span);
            ident.into_token_stream()
        }
        Err(_) => {
            syn::Error::new(span, format!("loadbench-macros cannot name the runtime's `{name}`")).into_compile_error()
        }
    }
}

fn literal(mut literal: Literal, span: Span) -> TokenStream {
    literal.set_span(span);
    literal.into_token_stream()
}

#[cfg(test)]
mod tests;
