//! API keys: a secret type that never prints, and where keys come from.

use std::fmt;
use std::sync::Arc;

/// An API key. Its `Debug` prints `[redacted]`, it has no `Display`, and
/// lousho scrubs it from every error message it builds from a response.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(Arc<str>);

impl ApiKey {
    /// Wraps a key.
    pub fn new(key: impl Into<String>) -> Self {
        Self(Arc::from(key.into()))
    }

    /// The key itself, for the `Authorization` / `x-api-key` header only.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }

    /// Replaces every occurrence of the key in `text` with `[redacted]`
    /// (allocating only when the key is there).
    pub(crate) fn scrub_in_place(&self, text: &mut String) {
        // Very short "keys" (a local server's dummy) would mangle ordinary text.
        if self.0.len() >= 8 && text.contains(&*self.0) {
            *text = text.replace(&*self.0, "[redacted]");
        }
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

impl From<&str> for ApiKey {
    fn from(key: &str) -> Self {
        Self::new(key)
    }
}

impl From<String> for ApiKey {
    fn from(key: String) -> Self {
        Self::new(key)
    }
}

impl From<&String> for ApiKey {
    fn from(key: &String) -> Self {
        Self::new(key.as_str())
    }
}

/// Reads environment variables; a function so tests and spec files can supply
/// their own environment.
pub(crate) type EnvLookup<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The process environment (empty values count as unset).
pub(crate) fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// Where a provider's key comes from.
#[derive(Debug, Clone)]
pub(crate) enum KeySource {
    /// Given to the builder.
    Explicit(ApiKey),
    /// Read from this variable at `build()`; missing is an error.
    Env(String),
    /// No key at all.
    None,
}

impl KeySource {
    /// The key, or `MissingApiKey` naming the variable.
    pub(crate) fn resolve(
        &self,
        provider: &str,
        env: EnvLookup<'_>,
    ) -> Result<Option<ApiKey>, crate::model::ModelError> {
        match self {
            KeySource::Explicit(key) => Ok(Some(key.clone())),
            KeySource::Env(var) => match env(var) {
                Some(v) => Ok(Some(ApiKey::new(v.trim()))),
                None => Err(crate::model::ModelError::MissingApiKey {
                    provider: provider.to_owned(),
                    env_var: var.clone(),
                }),
            },
            KeySource::None => Ok(None),
        }
    }
}
