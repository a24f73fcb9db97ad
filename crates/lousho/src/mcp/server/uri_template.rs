//! URI templates (RFC 6570) for resource templates: the two forms a
//! resource URI needs, matched against a URI a client reads.
//!
//! * `{name}` (level 1, simple expansion): one path segment; the value is
//!   percent-decoded and holds no `/`, `?` or `#`.
//! * `{+name}` (level 2, reserved expansion): any run of characters,
//!   `/` included (`file:///{+path}`).
//!
//! Other operators (`{?q}`, `{#f}`, `{/p}`, …), several variables in one
//! expression and modifiers (`{name*}`, `{name:3}`) are refused when the
//! template is defined. The crates on crates.io expand templates; none
//! matches a URI against one, which is what a server does, hence this.

use std::collections::BTreeMap;

/// A parsed URI template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UriTemplate {
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    /// A variable: its name, and whether it may hold `/` (`{+name}`).
    Var {
        name: String,
        reserved: bool,
    },
}

/// Why a URI template was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "URI template `{template}`: {reason} (lousho supports `{{name}}` for one segment and `{{+name}}` for a path)"
)]
pub struct UriTemplateError {
    /// The template as written.
    pub template: String,
    /// What is wrong with it.
    pub reason: String,
}

impl UriTemplate {
    /// Parses `template`.
    pub(crate) fn parse(template: &str) -> Result<Self, UriTemplateError> {
        let refuse = |reason: String| UriTemplateError {
            template: template.to_owned(),
            reason,
        };
        let mut parts = Vec::new();
        let mut rest = template;
        while let Some(open) = rest.find(['{', '}']) {
            if rest[open..].starts_with('}') {
                return Err(refuse("a `}` without its `{`".to_owned()));
            }
            if open > 0 {
                parts.push(Part::Literal(rest[..open].to_owned()));
            }
            let after = &rest[open + 1..];
            let close = after
                .find('}')
                .ok_or_else(|| refuse("a `{` without its `}`".to_owned()))?;
            let expr = &after[..close];
            let (reserved, name) = match expr.strip_prefix('+') {
                Some(name) => (true, name),
                None => (false, expr),
            };
            let valid = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
            if !valid {
                return Err(refuse(format!(
                    "`{{{expr}}}` is not a supported expression"
                )));
            }
            if matches!(parts.last(), Some(Part::Var { .. })) {
                return Err(refuse(format!(
                    "`{{{expr}}}` follows another variable with nothing between them"
                )));
            }
            if parts
                .iter()
                .any(|p| matches!(p, Part::Var { name: n, .. } if n == name))
            {
                return Err(refuse(format!("`{name}` appears twice")));
            }
            parts.push(Part::Var {
                name: name.to_owned(),
                reserved,
            });
            rest = &after[close + 1..];
        }
        if !rest.is_empty() {
            parts.push(Part::Literal(rest.to_owned()));
        }
        Ok(Self { parts })
    }

    /// The variables' names, in order.
    pub(crate) fn variables(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|p| match p {
            Part::Var { name, .. } => Some(name.as_str()),
            Part::Literal(_) => None,
        })
    }

    /// The variables' values when `uri` fits the template (percent-decoded);
    /// `None` when it does not.
    pub(crate) fn matches(&self, uri: &str) -> Option<BTreeMap<String, String>> {
        let mut values = BTreeMap::new();
        match_from(&self.parts, uri, &mut values).then_some(values)
    }
}

/// Whether `uri` fits `parts`, filling `values`; variables match as little
/// as they can, backtracking when what follows does not fit.
fn match_from(parts: &[Part], uri: &str, values: &mut BTreeMap<String, String>) -> bool {
    let Some((first, rest)) = parts.split_first() else {
        return uri.is_empty();
    };
    match first {
        Part::Literal(lit) => uri
            .strip_prefix(lit.as_str())
            .is_some_and(|tail| match_from(rest, tail, values)),
        Part::Var { name, reserved } => {
            let stop = |c: char| !reserved && matches!(c, '/' | '?' | '#');
            let mut ends: Vec<usize> = uri
                .char_indices()
                .take_while(|&(_, c)| !stop(c))
                .map(|(i, c)| i + c.len_utf8())
                .collect();
            ends.insert(0, 0);
            for end in ends {
                // An empty value is a value ("the variable is defined as the
                // empty string"), but a whole-URI template would otherwise
                // match anything: keep it only when something follows.
                if end == 0 && rest.is_empty() {
                    continue;
                }
                let Some(value) = decode(&uri[..end]) else {
                    continue;
                };
                if match_from(rest, &uri[end..], values) {
                    values.insert(name.clone(), value);
                    return true;
                }
            }
            false
        }
    }
}

/// Percent-decodes `s`; `None` when the bytes are not UTF-8.
fn decode(s: &str) -> Option<String> {
    percent_encoding::percent_decode_str(s)
        .decode_utf8()
        .ok()
        .map(|c| c.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vals(pairs: &[(&str, &str)]) -> Option<BTreeMap<String, String>> {
        Some(
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        )
    }

    #[test]
    fn matches_segments_and_paths() {
        let t = UriTemplate::parse("test://template/{id}/data").unwrap();
        assert_eq!(
            t.matches("test://template/123/data"),
            vals(&[("id", "123")])
        );
        assert_eq!(t.matches("test://template/1/2/data"), None);
        assert_eq!(t.matches("test://template/123/other"), None);
        assert_eq!(
            t.matches("test://template/a%20b/data"),
            vals(&[("id", "a b")])
        );

        let t = UriTemplate::parse("file:///{+path}").unwrap();
        assert_eq!(
            t.matches("file:///docs/a.md"),
            vals(&[("path", "docs/a.md")])
        );
        assert_eq!(t.matches("file:///"), None);

        let t = UriTemplate::parse("db://{table}/rows/{+key}.json").unwrap();
        assert_eq!(
            t.matches("db://users/rows/a/b.json"),
            vals(&[("table", "users"), ("key", "a/b")])
        );
        assert_eq!(t.variables().collect::<Vec<_>>(), ["table", "key"]);
    }

    #[test]
    fn refuses_what_it_cannot_match() {
        for bad in [
            "x://{?q}",
            "x://{a,b}",
            "x://{a*}",
            "x://{a}{b}",
            "x://{a}/{a}",
            "x://{a",
            "x://a}",
            "x://{}",
        ] {
            assert!(UriTemplate::parse(bad).is_err(), "{bad}");
        }
    }
}
