//! `${VAR}` and `${VAR:-default}` in strings: the one implementation, for
//! spec files (`lousho::spec`) and MCP server configs
//! (`lousho::mcp::parse_mcp_servers`).

use std::fmt;

/// How deeply `${A:-${B:-…}}` defaults may nest.
pub(crate) const MAX_NESTING: usize = 8;

/// Why a string's `${VAR}` reference could not be expanded.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
#[cfg_attr(not(feature = "mcp-client"), allow(unreachable_pub))] // public through `lousho::mcp` only
pub enum VariableError {
    /// `${NAME}` names a variable that is not set (and has no default).
    Unset(String),
    /// A `${` without its `}`, or a name that is not `[A-Za-z_][A-Za-z0-9_]*`.
    Malformed(String),
    /// Defaults nested more than `MAX_NESTING` (8) levels deep.
    TooDeep(String),
}

impl std::error::Error for VariableError {}

impl fmt::Display for VariableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VariableError::Unset(name) => write!(
                f,
                "environment variable `{name}` is not set; set it, or give a default with `${{{name}:-default}}`"
            ),
            VariableError::Malformed(text) => write!(
                f,
                "`{text}` is not a valid variable reference; use `${{NAME}}` or `${{NAME:-default}}` (write `$${{` for a literal `${{`)"
            ),
            VariableError::TooDeep(text) => write!(
                f,
                "`{text}` nests defaults more than {MAX_NESTING} levels deep; \
                 `${{A:-${{B:-x}}}}` may nest up to {MAX_NESTING} levels"
            ),
        }
    }
}

/// Expands `${NAME}` and `${NAME:-default}` (the default is used when the
/// variable is unset or empty, as in the shell); `$${` is a literal `${`.
/// A default may hold references itself (`${A:-${B:-x}}`, up to
/// [`MAX_NESTING`] levels); it is expanded only when it is used, but its
/// syntax is always checked.
pub(crate) fn interpolate(
    text: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<String, VariableError> {
    expand(text, lookup, 0)
}

fn expand(
    text: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
    depth: usize,
) -> Result<String, VariableError> {
    if !text.contains('$') {
        return Ok(text.to_owned());
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(tail) = after.strip_prefix("${") {
            out.push_str("${");
            rest = tail;
        } else if let Some(body_start) = after.strip_prefix('{') {
            let reference = &rest[i..];
            let Some(end) = closing_brace(body_start) else {
                return Err(VariableError::Malformed(reference.to_owned()));
            };
            let body = &body_start[..end];
            let (name, default) = match body.split_once(":-") {
                Some((name, default)) => (name, Some(default)),
                None => (body, None),
            };
            if !is_var_name(name) {
                return Err(VariableError::Malformed(format!("${{{body}}}")));
            }
            let value = lookup(name);
            match (value.as_deref().filter(|v| !v.is_empty()), default) {
                (Some(value), default) => {
                    if let Some(default) = default {
                        check_unused(default, lookup, depth + 1, body)?;
                    }
                    out.push_str(value);
                }
                (None, Some(default)) => {
                    if depth + 1 > MAX_NESTING {
                        return Err(VariableError::TooDeep(format!("${{{body}}}")));
                    }
                    out.push_str(&expand(default, lookup, depth + 1)?);
                }
                (None, None) if value.is_some() => {}
                (None, None) => return Err(VariableError::Unset(name.to_owned())),
            }
            rest = &body_start[end + 1..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    Ok(out)
}

/// Checks the syntax of a default that is not used: a malformed or too deep
/// reference is an error wherever it is, an unset variable only when used.
fn check_unused(
    default: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
    depth: usize,
    body: &str,
) -> Result<(), VariableError> {
    if !default.contains("${") {
        return Ok(());
    }
    if depth > MAX_NESTING {
        return Err(VariableError::TooDeep(format!("${{{body}}}")));
    }
    match expand(default, lookup, depth) {
        Err(e @ (VariableError::Malformed(_) | VariableError::TooDeep(_))) => Err(e),
        Ok(_) | Err(VariableError::Unset(_)) => Ok(()),
    }
}

/// The index in `body` of the `}` closing a `${` whose body starts `body`:
/// nested `${…}` are skipped whole, `$${` is a literal.
fn closing_brace(body: &str) -> Option<usize> {
    let bytes = body.as_bytes();
    let mut open = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'$' if bytes[i + 1..].starts_with(b"${") => i += 2,
            b'$' if bytes[i + 1..].starts_with(b"{") => {
                open += 1;
                i += 1;
            }
            b'}' if open == 0 => return Some(i),
            b'}' => open -= 1,
            _ => {}
        }
        i += 1;
    }
    None
}

fn is_var_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The first variable `text` references, for locating an error.
#[cfg_attr(not(feature = "spec"), allow(dead_code))]
pub(crate) fn first_reference(text: &str, name: &str) -> Option<usize> {
    [format!("${{{name}}}"), format!("${{{name}:-")]
        .iter()
        .filter_map(|needle| text.find(needle.as_str()))
        .min()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "TOKEN" => Some("s3cret".into()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    #[test]
    fn expands_variables_defaults_and_escapes() {
        let x = |s| interpolate(s, &env);
        assert_eq!(x("Bearer ${TOKEN}").unwrap(), "Bearer s3cret");
        assert_eq!(x("${MISSING:-fallback}/x").unwrap(), "fallback/x");
        assert_eq!(x("${EMPTY:-d}").unwrap(), "d");
        assert_eq!(x("${EMPTY}").unwrap(), "");
        assert_eq!(x("cost: $5, $${TOKEN}").unwrap(), "cost: $5, ${TOKEN}");
        assert_eq!(
            x("${MISSING}").unwrap_err(),
            VariableError::Unset("MISSING".into())
        );
        assert!(matches!(
            x("${TOKEN").unwrap_err(),
            VariableError::Malformed(_)
        ));
        assert!(matches!(
            x("${1X}").unwrap_err(),
            VariableError::Malformed(_)
        ));
    }

    #[test]
    fn nested_defaults_expand_only_when_used() {
        let x = |s| interpolate(s, &env);
        assert_eq!(x("${MISSING:-${TOKEN:-x}}").unwrap(), "s3cret");
        assert_eq!(x("${MISSING:-${NOPE:-x}}/y").unwrap(), "x/y");
        assert_eq!(x("${A:-${B:-${C:-deep}}}").unwrap(), "deep");
        assert_eq!(x("${EMPTY:-${MISSING:-a}-${TOKEN}}").unwrap(), "a-s3cret");
        assert_eq!(x("${MISSING:-$${TOKEN}}").unwrap(), "${TOKEN}");
        // An unused default may name unset variables, as in the shell.
        assert_eq!(x("${TOKEN:-${NOPE}}").unwrap(), "s3cret");
        assert_eq!(
            x("${MISSING:-${NOPE}}").unwrap_err(),
            VariableError::Unset("NOPE".into())
        );
        // Its syntax is checked even when it is not used.
        assert!(matches!(
            x("${TOKEN:-${1X}}").unwrap_err(),
            VariableError::Malformed(_)
        ));
        assert!(matches!(
            x("${MISSING:-${B:-x}").unwrap_err(),
            VariableError::Malformed(_)
        ));
    }

    #[test]
    fn nesting_is_capped() {
        let nested = |levels: usize| "${MISSING:-".repeat(levels) + "x" + &"}".repeat(levels);
        assert_eq!(interpolate(&nested(MAX_NESTING), &env).unwrap(), "x");
        let too_deep = interpolate(&nested(MAX_NESTING + 1), &env).unwrap_err();
        assert!(matches!(too_deep, VariableError::TooDeep(_)));
        assert!(too_deep.to_string().contains("levels deep"), "{too_deep}");
        // A hostile depth fails fast instead of overflowing the stack.
        assert!(matches!(
            interpolate(&nested(100_000), &env).unwrap_err(),
            VariableError::TooDeep(_)
        ));
        assert!(matches!(
            interpolate(&format!("${{TOKEN:-{}}}", nested(100_000)), &env).unwrap_err(),
            VariableError::TooDeep(_)
        ));
    }
}
