//! Collects every error the macro finds so that one build shows them all (serde's `Ctxt`).

use std::fmt::Display;

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;

/// The errors found so far, merged with [`syn::Error::combine`].
///
/// Unlike serde's `Ctxt` this has no drop bomb: a proc macro must never panic, and forgetting to
/// report would already show up in the UI tests.
#[derive(Debug, Default)]
pub(crate) struct Errors(Option<syn::Error>);

impl Errors {
    pub(crate) fn push(&mut self, error: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(error),
            None => self.0 = Some(error),
        }
    }

    pub(crate) fn append(&mut self, other: Errors) {
        if let Some(error) = other.0 {
            self.push(error);
        }
    }

    pub(crate) fn at(&mut self, span: Span, message: impl Display) {
        self.push(syn::Error::new(span, message));
    }

    pub(crate) fn spanned(&mut self, tokens: impl ToTokens, message: impl Display) {
        self.push(syn::Error::new_spanned(tokens, message));
    }

    /// Keeps the error of `result`, if any, and returns its value.
    pub(crate) fn check<T>(&mut self, result: syn::Result<T>) -> Option<T> {
        result.map_err(|e| self.push(e)).ok()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    pub(crate) fn finish(self) -> syn::Result<()> {
        self.0.map_or(Ok(()), Err)
    }

    /// The errors as `compile_error!` invocations (nothing when there are none).
    pub(crate) fn into_compile_errors(self) -> TokenStream {
        self.0.map(syn::Error::into_compile_error).unwrap_or_default()
    }
}
