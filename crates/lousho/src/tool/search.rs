//! Tool search: with many tools, the model is not sent every definition.
//!
//! When tool search is active, *deferred* tools are left out of the model's
//! requests. The model gets a `tool_search` tool instead (a query and an
//! optional server → the best matches by BM25 over name, title, server,
//! description and parameter names, as names with one-line descriptions);
//! the full definitions of what it found join the following requests of
//! that run and of its session. A deferred tool called by name without a
//! search still runs.
//!
//! Which tools are deferred: an entry of [`ToolSearch::always_loaded`] never
//! is; else the tool's own [`ToolSpec::defer`] (set from an MCP server's
//! `defer: true|false`) decides; else MCP tools are deferred and your own and
//! built-in tools are not.
//!
//! When it is active ([`ToolSearchMode`]): `off` never, `on` whenever a tool
//! is deferred, `auto` (the default) when the tools offered are more than
//! [`ToolSearch::auto_max_tools`] (30) or their definitions take more than
//! [`ToolSearch::auto_context_share`] (10 %) of the model's context window by
//! [estimated tokens](estimate_tool_tokens).
//!
//! Providers with native tool search (Anthropic's `tool_search_tool_bm25`)
//! are sent every definition with `defer_loading` instead, and search on
//! their side; see `docs/mcp-client.md`.

mod bm25;
mod search_tool;
mod tokens;

pub(crate) use search_tool::SearchTool;
pub(crate) use tokens::json_len;
pub use tokens::{BYTES_PER_TOKEN, estimate_definition_tokens, estimate_tool_tokens};

use super::ToolSpec;
use serde::{Deserialize, Serialize};

/// The name of the search tool the model is given.
pub const SEARCH_TOOL_NAME: &str = "tool_search";

/// The context window assumed for a model that does not say its own
/// (128k tokens).
pub const DEFAULT_CONTEXT_WINDOW: usize = 128_000;

/// When tool search is active.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[derive(schemars::JsonSchema)]
#[non_exhaustive]
pub enum ToolSearchMode {
    /// Active when the tools are many or large (see [`ToolSearch`]).
    #[default]
    Auto,
    /// Active whenever a tool is deferred.
    On,
    /// Never: every tool is sent with every request.
    Off,
}

impl std::str::FromStr for ToolSearchMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(Self::Auto),
            "on" => Ok(Self::On),
            "off" => Ok(Self::Off),
            other => Err(format!(
                "`{other}` is not a tool search mode; use auto, on or off"
            )),
        }
    }
}

/// How an agent holds back tool definitions (see the [module](self)).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
#[must_use]
pub struct ToolSearch {
    /// When it is active.
    pub mode: ToolSearchMode,
    /// Tools (by the name the model calls them) that are always sent.
    pub always_loaded: Vec<String>,
    /// How many matches one search returns unless the model asks (default 5).
    pub max_results: usize,
    /// `auto`: active above this many tools (default 30).
    pub auto_max_tools: usize,
    /// `auto`: active when the definitions take more than this share of the
    /// model's context window (default 0.10).
    pub auto_context_share: f64,
    /// Whether a provider's own tool search is used when it has one
    /// (default true).
    pub native: bool,
}

impl Default for ToolSearch {
    fn default() -> Self {
        Self {
            mode: ToolSearchMode::Auto,
            always_loaded: Vec::new(),
            max_results: 5,
            auto_max_tools: 30,
            auto_context_share: 0.10,
            native: true,
        }
    }
}

impl ToolSearch {
    /// The defaults with `mode`.
    pub fn new(mode: ToolSearchMode) -> Self {
        Self {
            mode,
            ..Self::default()
        }
    }

    /// Sets the mode.
    pub fn mode(mut self, mode: ToolSearchMode) -> Self {
        self.mode = mode;
        self
    }

    /// Adds tools that are always sent.
    pub fn always_loaded<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.always_loaded.extend(names.into_iter().map(Into::into));
        self
    }

    /// Sets how many matches a search returns by default (1 to 20).
    pub fn max_results(mut self, n: usize) -> Self {
        self.max_results = n.clamp(1, 20);
        self
    }

    /// Sets `auto`'s tool count threshold.
    pub fn auto_max_tools(mut self, n: usize) -> Self {
        self.auto_max_tools = n;
        self
    }

    /// Sets `auto`'s share of the context window (0 to 1).
    pub fn auto_context_share(mut self, share: f64) -> Self {
        self.auto_context_share = share.clamp(0.0, 1.0);
        self
    }

    /// Whether a provider's own tool search is used when it has one.
    pub fn native(mut self, native: bool) -> Self {
        self.native = native;
        self
    }

    /// Whether `spec`'s tool would be deferred while search is active.
    pub fn defers(&self, spec: &ToolSpec) -> bool {
        if spec.name == SEARCH_TOOL_NAME || self.always_loaded.contains(&spec.name) {
            return false;
        }
        spec.defer
            .unwrap_or(matches!(spec.origin, super::ToolOrigin::Mcp { .. }))
    }

    /// Whether search is active for tools of `count` definitions taking
    /// `tokens` (estimated), with a model of `context_window` tokens.
    pub fn is_active(&self, count: usize, tokens: usize, context_window: usize) -> bool {
        match self.mode {
            ToolSearchMode::Off => false,
            ToolSearchMode::On => true,
            ToolSearchMode::Auto => {
                count > self.auto_max_tools
                    || (tokens as f64) > self.auto_context_share * context_window as f64
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::ToolOrigin;
    use serde_json::json;

    #[test]
    fn mcp_tools_defer_by_default_and_own_tools_do_not() {
        let search = ToolSearch::default().always_loaded(["files__read"]);
        let schema = json!({"type": "object"});
        let own = ToolSpec::new("mine", "d", schema.clone());
        let mcp = ToolSpec::new("files__list", "d", schema.clone())
            .origin(ToolOrigin::mcp("files", "list"));
        let pinned = ToolSpec::new("files__read", "d", schema.clone())
            .origin(ToolOrigin::mcp("files", "read"));
        let kept = ToolSpec::new("files__stat", "d", schema)
            .origin(ToolOrigin::mcp("files", "stat"))
            .defer(false);
        assert!(!search.defers(&own));
        assert!(search.defers(&mcp));
        assert!(!search.defers(&pinned));
        assert!(!search.defers(&kept));
        assert!(search.defers(&own.defer(true)));
    }

    #[test]
    fn auto_turns_on_above_thirty_tools_or_a_tenth_of_the_context() {
        let s = ToolSearch::default();
        assert!(!s.is_active(30, 1_000, 100_000));
        assert!(s.is_active(31, 1_000, 100_000));
        assert!(s.is_active(5, 10_001, 100_000));
        assert!(!ToolSearch::new(ToolSearchMode::Off).is_active(500, 1_000_000, 1));
        assert!(ToolSearch::new(ToolSearchMode::On).is_active(1, 1, 1_000_000));
    }
}
