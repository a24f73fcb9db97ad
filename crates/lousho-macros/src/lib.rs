//! Attribute macros for [lousho](https://docs.rs/lousho). Use them through
//! the `lousho` crate (`#[lousho::tool_input]`), not directly: the code they
//! write names `::lousho`.
//!
//! No `syn`, no `quote`: the attribute only puts two attributes in front of
//! the item, so this crate builds in a moment.

use proc_macro::{Delimiter, Group, Ident, Literal, Punct, Spacing, Span, TokenStream, TokenTree};

/// Derives `JsonSchema` for a tool's input type through lousho's own
/// `schemars` (`lousho::schemars`), so a crate that uses lousho needs no
/// `schemars` dependency of its own:
///
/// ```ignore
/// #[lousho::tool_input]
/// #[derive(serde::Deserialize)]
/// struct Search {
///     /// What to look for.
///     query: String,
/// }
/// ```
///
/// It expands to `#[derive(::lousho::JsonSchema)]` with
/// `#[schemars(crate = "::lousho::schemars")]`; every other `#[schemars(..)]`
/// and `#[serde(..)]` attribute works as usual. It takes no arguments.
#[proc_macro_attribute]
pub fn tool_input(args: TokenStream, item: TokenStream) -> TokenStream {
    if let Some(first) = args.into_iter().next() {
        return compile_error(
            first.span(),
            "`#[lousho::tool_input]` takes no arguments; put schemars options in `#[schemars(..)]`",
        );
    }
    let mut out = TokenStream::new();
    out.extend(attribute(path_call(
        &["derive"],
        TokenStream::from_iter(path(&["", "lousho", "JsonSchema"])),
    )));
    let mut crate_arg = TokenStream::from_iter([
        TokenTree::Ident(Ident::new("crate", Span::call_site())),
        TokenTree::Punct(Punct::new('=', Spacing::Alone)),
    ]);
    crate_arg.extend([TokenTree::Literal(Literal::string("::lousho::schemars"))]);
    out.extend(attribute(path_call(&["schemars"], crate_arg)));
    out.extend(item);
    out
}

/// `#[<inner>]`.
fn attribute(inner: TokenStream) -> TokenStream {
    TokenStream::from_iter([
        TokenTree::Punct(Punct::new('#', Spacing::Alone)),
        TokenTree::Group(Group::new(Delimiter::Bracket, inner)),
    ])
}

/// `<path>(<args>)`.
fn path_call(segments: &[&str], args: TokenStream) -> TokenStream {
    let mut out = TokenStream::from_iter(path(segments));
    out.extend([TokenTree::Group(Group::new(Delimiter::Parenthesis, args))]);
    out
}

/// A path; a leading `""` makes it absolute (`::a::b`).
fn path(segments: &[&str]) -> Vec<TokenTree> {
    let mut out = Vec::new();
    for (i, segment) in segments.iter().enumerate() {
        if i > 0 {
            out.push(TokenTree::Punct(Punct::new(':', Spacing::Joint)));
            out.push(TokenTree::Punct(Punct::new(':', Spacing::Alone)));
        }
        if !segment.is_empty() {
            out.push(TokenTree::Ident(Ident::new(segment, Span::call_site())));
        }
    }
    out
}

/// `compile_error!("<message>")` at `span`.
fn compile_error(span: Span, message: &str) -> TokenStream {
    let mut literal = Literal::string(message);
    literal.set_span(span);
    let mut bang = Punct::new('!', Spacing::Alone);
    bang.set_span(span);
    TokenStream::from_iter([
        TokenTree::Ident(Ident::new("compile_error", span)),
        TokenTree::Punct(bang),
        TokenTree::Group(Group::new(
            Delimiter::Parenthesis,
            TokenStream::from_iter([TokenTree::Literal(literal)]),
        )),
    ])
}
