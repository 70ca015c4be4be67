//! Placeholder: being written.
use proc_macro::TokenStream;

/// Turns an `async fn(&mut loadbench::Ctx) -> loadbench::Result<()>` into a registered scenario.
#[proc_macro_attribute]
pub fn scenario(_args: TokenStream, item: TokenStream) -> TokenStream {
    item
}
