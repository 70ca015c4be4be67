//! A scenario's return type: `loadbench::Result<()>`. Types that plainly are something else
//! (`()`, `Result<(), String>`, `Result<u32>`, `String`, a tuple) are refused here, on the
//! user's tokens and with the signature to write, rather than left to a type error about the
//! code the attribute generates. A name the macro cannot judge (an alias) is left to rustc.

use syn::{GenericArgument, PathArguments, ReturnType, Signature, Type};

use crate::errors::Errors;

/// What a scenario returns, as the message says it.
const RESULT: &str = "loadbench::Result<()>";

/// Names that are never a scenario's result, whatever is in scope.
const NOT_RESULTS: [&str; 21] = [
    "bool", "char", "str", "String", "Option", "Vec", "Box", "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16",
    "i32", "i64", "i128", "isize", "f32", "f64",
];

/// The signature to write, with the function's own name.
pub(crate) fn expected(sig: &Signature) -> String {
    format!("`async fn {}(ctx: &mut loadbench::Ctx) -> {RESULT}`", sig.ident)
}

/// Checks the return type's shape; every problem names [`expected`].
pub(crate) fn check(sig: &Signature, errors: &mut Errors) {
    let ty = match &sig.output {
        ReturnType::Default => {
            errors.spanned(sig, format!("a scenario must return `{RESULT}`: write {}", expected(sig)));
            return;
        }
        ReturnType::Type(_, ty) => strip_groups(ty),
    };
    if let Some(problem) = problem(ty) {
        errors.spanned(ty, format!("a scenario returns `{RESULT}`, not {problem}: write {}", expected(sig)));
    }
}

/// What is wrong with `ty`, if it is plainly not `loadbench::Result<()>`.
fn problem(ty: &Type) -> Option<String> {
    let Type::Path(path) = ty else {
        return Some(match ty {
            Type::Tuple(tuple) if tuple.elems.is_empty() => "`()`".to_owned(),
            _ => format!("`{}`", spelled(ty)),
        });
    };
    if path.qself.is_some() {
        return None;
    }
    let last = path.path.segments.last()?;
    let name = last.ident.to_string();
    if NOT_RESULTS.contains(&name.as_str()) {
        return Some(format!("`{}`", spelled(ty)));
    }
    if name != "Result" {
        // Perhaps an alias of `loadbench::Result<()>`: rustc judges it.
        return None;
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    let types: Vec<&Type> = args
        .args
        .iter()
        .filter_map(|arg| match arg {
            GenericArgument::Type(ty) => Some(strip_groups(ty)),
            _ => None,
        })
        .collect();
    match types.as_slice() {
        [ok, ..] if !matches!(ok, Type::Tuple(t) if t.elems.is_empty()) => {
            Some(format!("`{}`: the body's value is `()`; keep what it computes in `ctx.user_data`", spelled(ty)))
        }
        [_, error] if !is_loadbench_error(error) => Some(format!(
            "`{}`: the error type is `loadbench::Error`, which any `std::error::Error` converts into with `?` (a message: `loadbench::Error::msg(…)`)",
            spelled(ty)
        )),
        _ => None,
    }
}

/// `Error`, `loadbench::Error` or any path ending in `Error` without generics (an import under
/// another path is left to rustc).
fn is_loadbench_error(ty: &Type) -> bool {
    matches!(ty, Type::Path(p) if p.qself.is_none()
        && p.path.segments.last().is_some_and(|s| s.ident == "Error" && s.arguments.is_none())
        && (p.path.segments.len() == 1 || p.path.segments.first().is_some_and(|s| s.ident == "loadbench" || s.ident == "crate")))
}

/// The type as written, spaced as people write it.
fn spelled(ty: &Type) -> String {
    quote::quote!(#ty)
        .to_string()
        .replace(" < ", "<")
        .replace("< ", "<")
        .replace(" >", ">")
        .replace(" ,", ",")
        .replace(" :: ", "::")
        .replace("& ", "&")
}

/// Sees through the invisible groups that `macro_rules!` puts around `$ty:ty`.
fn strip_groups(ty: &Type) -> &Type {
    match ty {
        Type::Group(group) => strip_groups(&group.elem),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use quote::quote;
    use syn::ItemFn;

    use super::*;

    fn message(item: proc_macro2::TokenStream) -> Option<String> {
        let func: ItemFn = syn::parse2(item).unwrap_or_else(|e| panic!("{e}"));
        let mut errors = Errors::default();
        check(&func.sig, &mut errors);
        errors.finish().err().map(|e| e.to_string())
    }

    #[test]
    fn plainly_wrong_types_name_the_signature() {
        let write = "write `async fn hello(ctx: &mut loadbench::Ctx) -> loadbench::Result<()>`";
        assert_eq!(
            message(quote!(
                async fn hello(ctx: &mut Ctx) {}
            )),
            Some(format!("a scenario must return `loadbench::Result<()>`: {write}"))
        );
        assert_eq!(
            message(quote!(
                async fn hello(ctx: &mut Ctx) -> () {}
            )),
            Some(format!("a scenario returns `loadbench::Result<()>`, not `()`: {write}"))
        );
        let string = message(quote!(
            async fn hello(ctx: &mut Ctx) -> Result<(), String> {}
        ))
        .unwrap_or_default();
        assert!(string.starts_with("a scenario returns `loadbench::Result<()>`, not `Result<(), String>`: the error type is `loadbench::Error`"), "{string}");
        assert!(string.ends_with(write), "{string}");
        let value = message(quote!(
            async fn hello(ctx: &mut Ctx) -> loadbench::Result<u32> {}
        ))
        .unwrap_or_default();
        assert!(
            value.starts_with(
                "a scenario returns `loadbench::Result<()>`, not `loadbench::Result<u32>`: the body's value is `()`"
            ),
            "{value}"
        );
        assert!(
            message(quote!(
                async fn hello(ctx: &mut Ctx) -> String {}
            ))
            .is_some()
        );
        assert!(
            message(quote!(
                async fn hello(ctx: &mut Ctx) -> (u8, u8) {}
            ))
            .is_some()
        );
    }

    #[test]
    fn what_may_be_right_is_left_to_rustc() {
        for ret in [
            quote!(loadbench::Result<()>),
            quote!(Result<()>),
            quote!(Result<(), loadbench::Error>),
            quote!(std::result::Result<(), Error>),
            quote!(MyAlias),
        ] {
            assert_eq!(message(quote!(async fn hello(ctx: &mut Ctx) -> #ret {})), None, "{ret}");
        }
    }
}
