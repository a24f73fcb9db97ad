//! Keeping secrets out of a cassette: every string of every entry is
//! scanned before it is written (and every request before it is compared
//! in replay, so both sides read alike).
//!
//! Three kinds of secret:
//! - values: API keys, header values, an MCP server's environment values,
//!   any value given — replaced wherever they appear inside a string
//!   (values under [`MIN_SECRET_LEN`] characters are left alone: they are
//!   too likely to be ordinary words; catch them with a pattern);
//! - patterns: globs (`sk-*`, `ghp_*`) matched against each word of a
//!   string (a run of letters, digits, `_`, `-`, `.`, `+`, `/`, `=`);
//! - keys: the value of an object key that names a secret
//!   (`authorization`, `api_key`, `token`, `password`, …).

use super::error::CassetteError;
use globset::{Glob, GlobSet, GlobSetBuilder};
use serde_json::Value;

/// What a secret is replaced with.
pub const REDACTED: &str = "[REDACTED]";

/// Secret values shorter than this are not redacted by value.
pub const MIN_SECRET_LEN: usize = 8;

/// Object keys whose string values are secrets (compared lower-cased,
/// `-` read as `_`).
const SECRET_KEYS: &[&str] = &[
    "authorization",
    "proxy_authorization",
    "api_key",
    "apikey",
    "x_api_key",
    "access_token",
    "refresh_token",
    "id_token",
    "client_secret",
    "password",
    "secret",
    "token",
    "cookie",
    "set_cookie",
];

/// Environment variable name endings whose values
/// [`Redaction::secret_env_vars`] treats as secrets.
const SECRET_VAR_ENDINGS: &[&str] = &["_KEY", "_TOKEN", "_SECRET", "_PASSWORD", "_PAT"];

/// The secrets to keep out of a cassette (see [the module](crate::cassette)).
#[derive(Clone, Default)]
#[must_use]
pub struct Redaction {
    values: Vec<String>,
    patterns: Vec<String>,
    globs: Option<GlobSet>,
}

impl std::fmt::Debug for Redaction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The values are the secrets: only their count.
        f.debug_struct("Redaction")
            .field("values", &self.values.len())
            .field("patterns", &self.patterns)
            .finish()
    }
}

impl Redaction {
    /// Nothing but the secret keys.
    pub fn new() -> Self {
        Self::default()
    }

    /// Redacts `value` wherever it appears (ignored when shorter than
    /// [`MIN_SECRET_LEN`]).
    pub fn value(mut self, value: impl Into<String>) -> Self {
        self.add_value(value.into());
        self
    }

    /// Redacts every word matching the glob `pattern` (`sk-*`).
    pub fn pattern(mut self, pattern: impl Into<String>) -> Result<Self, CassetteError> {
        let pattern = pattern.into();
        self.patterns.push(pattern);
        self.globs = Some(compile(&self.patterns)?);
        Ok(self)
    }

    /// Redacts the values of this process's environment variables whose
    /// names end in `_KEY`, `_TOKEN`, `_SECRET`, `_PASSWORD` or `_PAT`
    /// (`OPENAI_API_KEY`, `GITHUB_TOKEN`).
    pub fn secret_env_vars(mut self) -> Self {
        for (name, value) in std::env::vars_os() {
            let (Some(name), Some(value)) = (name.to_str(), value.to_str()) else {
                continue;
            };
            let upper = name.to_ascii_uppercase();
            if SECRET_VAR_ENDINGS.iter().any(|end| upper.ends_with(end)) {
                self.add_value(value.to_owned());
            }
        }
        self
    }

    pub(crate) fn add_value(&mut self, value: String) {
        if value.chars().count() >= MIN_SECRET_LEN && !self.values.contains(&value) {
            self.values.push(value);
            // Longest first, so a value containing another goes whole.
            self.values.sort_by_key(|v| std::cmp::Reverse(v.len()));
        }
    }

    /// The values a header carries: the whole value, and the credentials
    /// after an auth scheme (`Bearer <token>`).
    #[cfg_attr(not(feature = "mcp-client"), allow(dead_code))]
    pub(crate) fn add_header_value(&mut self, value: &str) {
        self.add_value(value.to_owned());
        if let Some((_, credentials)) = value.split_once(' ') {
            self.add_value(credentials.trim().to_owned());
        }
    }

    /// `value` with every secret replaced.
    pub(crate) fn apply(&self, value: &mut Value) {
        match value {
            Value::String(s) => {
                if let Some(clean) = self.clean(s) {
                    *s = clean;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.apply(v)),
            Value::Object(map) => {
                for (key, v) in map.iter_mut() {
                    if is_secret_key(key) && v.is_string() {
                        *v = Value::String(REDACTED.to_owned());
                    } else {
                        self.apply(v);
                    }
                }
            }
            _ => {}
        }
    }

    /// `s` with its secrets replaced, or `None` when it has none.
    fn clean(&self, s: &str) -> Option<String> {
        let mut out: Option<String> = None;
        for secret in &self.values {
            let current = out.as_deref().unwrap_or(s);
            if current.contains(secret.as_str()) {
                out = Some(current.replace(secret.as_str(), REDACTED));
            }
        }
        if let Some(globs) = &self.globs {
            let current = out.as_deref().unwrap_or(s);
            let mut rebuilt = String::with_capacity(current.len());
            let mut changed = false;
            let mut rest = current;
            while let Some(start) = rest.find(is_word_char) {
                rebuilt.push_str(&rest[..start]);
                let word_len = rest[start..]
                    .find(|c: char| !is_word_char(c))
                    .unwrap_or(rest.len() - start);
                let word = &rest[start..start + word_len];
                if word != REDACTED.trim_matches(['[', ']']) && globs.is_match(word) {
                    rebuilt.push_str(REDACTED);
                    changed = true;
                } else {
                    rebuilt.push_str(word);
                }
                rest = &rest[start + word_len..];
            }
            rebuilt.push_str(rest);
            if changed {
                out = Some(rebuilt);
            }
        }
        out
    }
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || "_-.+/=".contains(c)
}

fn is_secret_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase().replace('-', "_");
    SECRET_KEYS.contains(&key.as_str())
}

fn compile(patterns: &[String]) -> Result<GlobSet, CassetteError> {
    let mut builder = GlobSetBuilder::new();
    for pattern in patterns {
        let glob = Glob::new(pattern).map_err(|e| CassetteError::Pattern {
            pattern: pattern.clone(),
            reason: e.kind().to_string(),
        })?;
        builder.add(glob);
    }
    builder.build().map_err(|e| CassetteError::Pattern {
        pattern: patterns.join(", "),
        reason: e.kind().to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_patterns_and_keys_are_redacted() {
        let redaction = Redaction::new()
            .value("s3cret-value-123")
            .value("short")
            .pattern("sk-*")
            .unwrap();
        let mut v = json!({
            "text": "key s3cret-value-123 and sk-abc123, short stays",
            "headers": {"Authorization": "Bearer xyz"},
            "list": ["sk-zzz"],
        });
        redaction.apply(&mut v);
        assert_eq!(
            v,
            json!({
                "text": "key [REDACTED] and [REDACTED], short stays",
                "headers": {"Authorization": "[REDACTED]"},
                "list": ["[REDACTED]"],
            })
        );
    }

    #[test]
    fn a_bearer_header_redacts_its_token_alone_too() {
        let mut redaction = Redaction::new();
        redaction.add_header_value("Bearer tok-0123456789");
        let mut v = json!("saw tok-0123456789");
        redaction.apply(&mut v);
        assert_eq!(v, json!("saw [REDACTED]"));
    }
}
