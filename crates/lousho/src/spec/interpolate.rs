//! `${VAR}` and `${VAR:-default}` in a spec file's strings.

use std::fmt;

/// Why a string could not be expanded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum InterpolateError {
    /// `${NAME}` names a variable that is not set (and has no default).
    Unset(String),
    /// A `${` without its `}`, or a name that is not `[A-Za-z_][A-Za-z0-9_]*`.
    Malformed(String),
}

impl fmt::Display for InterpolateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InterpolateError::Unset(name) => write!(
                f,
                "environment variable `{name}` is not set; set it, or give a default with `${{{name}:-default}}`"
            ),
            InterpolateError::Malformed(text) => write!(
                f,
                "`{text}` is not a valid variable reference; use `${{NAME}}` or `${{NAME:-default}}` (write `$${{` for a literal `${{`)"
            ),
        }
    }
}

/// Expands `${NAME}` and `${NAME:-default}` (the default is used when the
/// variable is unset or empty, as in the shell); `$${` is a literal `${`.
pub(crate) fn interpolate(
    text: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<String, InterpolateError> {
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
            let Some(end) = body_start.find('}') else {
                return Err(InterpolateError::Malformed(rest[i..].to_owned()));
            };
            let body = &body_start[..end];
            let (name, default) = match body.split_once(":-") {
                Some((name, default)) => (name, Some(default)),
                None => (body, None),
            };
            if !is_var_name(name) {
                return Err(InterpolateError::Malformed(format!("${{{body}}}")));
            }
            match (lookup(name).filter(|v| !v.is_empty()), default) {
                (Some(value), _) => out.push_str(&value),
                (None, Some(default)) => out.push_str(default),
                (None, None) if lookup(name).is_some() => {}
                (None, None) => return Err(InterpolateError::Unset(name.to_owned())),
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

fn is_var_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The first variable `text` references, for locating an error.
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
            InterpolateError::Unset("MISSING".into())
        );
        assert!(matches!(
            x("${TOKEN").unwrap_err(),
            InterpolateError::Malformed(_)
        ));
        assert!(matches!(
            x("${1X}").unwrap_err(),
            InterpolateError::Malformed(_)
        ));
    }
}
