//! What one request's tool list carries when tool search is active (see
//! [`crate::tool::search`]): the loaded tools, the deferred ones found so
//! far in the conversation, and the `tool_search` tool; or, for a provider
//! with native search, every definition with the deferred ones marked.

use super::AgentInner;
use crate::model::{Message, Part, ToolDefinition};
use crate::tool::search::{
    DEFAULT_CONTEXT_WINDOW, SEARCH_TOOL_NAME, SearchTool, estimate_definition_tokens,
};
use crate::tool::{Tool, ToolSet};
use serde_json::Value;
use std::collections::HashSet;
use std::sync::Arc;

/// The tools of one turn.
pub(crate) struct TurnTools {
    /// What calls may use: every tool, plus `tool_search` when it is offered.
    pub(crate) tools: ToolSet,
    /// What the request carries.
    pub(crate) definitions: Arc<[ToolDefinition]>,
    /// The estimated tokens of the definitions loaded into the model's
    /// context (a natively deferred definition does not count).
    pub(crate) definition_tokens: usize,
    /// Whether tool search is active, and whether the provider's own.
    pub(crate) search: Option<SearchPath>,
    /// The tools held back from the model's context.
    pub(crate) deferred: Vec<String>,
}

/// Which tool search a request uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SearchPath {
    /// lousho's `tool_search` tool; deferred definitions are not sent.
    Client,
    /// The provider's own (Anthropic's `tool_search_tool_bm25`); every
    /// definition is sent, the deferred ones with `defer_loading`.
    Native,
}

/// What a fresh run's first request would carry, with estimated tokens
/// ([`Agent::tool_budget`](crate::Agent::tool_budget)).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolBudget {
    /// The tool search in use, if active.
    pub search: Option<SearchPath>,
    /// The estimated tokens of every definition offered.
    pub total_tokens: usize,
    /// The estimated tokens the first request loads into the model's
    /// context (the search tool included, deferred tools not).
    pub sent_tokens: usize,
    /// The tools held back, by name.
    pub deferred: Vec<String>,
    /// Each offered tool's estimated tokens, by name.
    pub tool_tokens: std::collections::BTreeMap<String, usize>,
}

/// The budget of a first request.
pub(crate) fn budget(
    inner: &AgentInner,
    tools: ToolSet,
    offered: Arc<[ToolDefinition]>,
) -> ToolBudget {
    let tool_tokens = offered
        .iter()
        .map(|d| (d.name.clone(), tokens_of(d)))
        .collect::<std::collections::BTreeMap<_, _>>();
    let total_tokens = tool_tokens.values().sum();
    let turn = plan(inner, tools, offered, &[]);
    ToolBudget {
        search: turn.search,
        total_tokens,
        sent_tokens: turn.definition_tokens,
        deferred: turn.deferred,
        tool_tokens,
    }
}

fn tokens_of(def: &ToolDefinition) -> usize {
    estimate_definition_tokens(&def.name, &def.description, &def.input_schema)
}

/// The turn's tools, given everything offered and the conversation so far.
pub(crate) fn plan(
    inner: &AgentInner,
    tools: ToolSet,
    offered: Arc<[ToolDefinition]>,
    messages: &[Message],
) -> TurnTools {
    let all = |tools, definitions: Arc<[ToolDefinition]>| {
        let definition_tokens = definitions.iter().map(tokens_of).sum();
        TurnTools {
            tools,
            definitions,
            definition_tokens,
            search: None,
            deferred: Vec::new(),
        }
    };
    let search = &inner.tool_search;
    if tools.contains(SEARCH_TOOL_NAME) {
        // An own tool has the name: no search of ours.
        return all(tools, offered);
    }
    let deferrable: HashSet<&str> = offered
        .iter()
        .filter(|d| tools.get(&d.name).is_some_and(|t| search.defers(t.spec())))
        .map(|d| d.name.as_str())
        .collect();
    if deferrable.is_empty() {
        return all(tools, offered);
    }
    let tokens: usize = offered.iter().map(tokens_of).sum();
    let window = inner
        .model
        .context_window()
        .unwrap_or(DEFAULT_CONTEXT_WINDOW);
    if !search.is_active(offered.len(), tokens, window) {
        return TurnTools {
            tools,
            definitions: offered,
            definition_tokens: tokens,
            search: None,
            deferred: Vec::new(),
        };
    }
    if search.native && inner.model.native_tool_search() {
        let definitions: Arc<[ToolDefinition]> = offered
            .iter()
            .map(|d| ToolDefinition {
                defer_loading: deferrable.contains(d.name.as_str()),
                ..d.clone()
            })
            .collect();
        let definition_tokens = definitions
            .iter()
            .filter(|d| !d.defer_loading)
            .map(tokens_of)
            .sum();
        let deferred = definitions
            .iter()
            .filter(|d| d.defer_loading)
            .map(|d| d.name.clone())
            .collect();
        return TurnTools {
            tools,
            definitions,
            definition_tokens,
            search: Some(SearchPath::Native),
            deferred,
        };
    }
    let loaded = loaded_names(messages);
    let candidates: Arc<[Arc<dyn Tool>]> = offered
        .iter()
        .filter(|d| deferrable.contains(d.name.as_str()))
        .filter_map(|d| tools.get(&d.name).cloned())
        .collect();
    let search_tool = SearchTool::new(candidates, search);
    let spec = search_tool.spec();
    let mut definitions: Vec<ToolDefinition> = offered
        .iter()
        .filter(|d| !deferrable.contains(d.name.as_str()) || loaded.contains(d.name.as_str()))
        .cloned()
        .collect();
    definitions.push(ToolDefinition::new(
        spec.name.clone(),
        spec.description.clone(),
        spec.input_schema.clone(),
    ));
    let mut tools = tools;
    if let Err(e) = tools.insert(Arc::new(search_tool)) {
        tracing::warn!(target: "lousho::agent", error = %e, "tool search left out");
    }
    let deferred = offered
        .iter()
        .filter(|d| deferrable.contains(d.name.as_str()) && !loaded.contains(d.name.as_str()))
        .map(|d| d.name.clone())
        .collect();
    let definitions: Arc<[ToolDefinition]> = definitions.into();
    let definition_tokens = definitions.iter().map(tokens_of).sum();
    TurnTools {
        tools,
        definitions,
        definition_tokens,
        search: Some(SearchPath::Client),
        deferred,
    }
}

/// The tools the conversation has loaded: those a `tool_search` result
/// listed (its structured `tools[].name`) and those called by name.
fn loaded_names(messages: &[Message]) -> HashSet<&str> {
    let mut names = HashSet::new();
    for part in messages.iter().flat_map(|m| &m.parts) {
        match part {
            Part::ToolCall(call) => {
                names.insert(call.name.as_str());
            }
            Part::ToolResult(result) if result.name == SEARCH_TOOL_NAME => {
                let found = result
                    .output
                    .structured
                    .as_ref()
                    .and_then(|s| s.get("tools"))
                    .and_then(Value::as_array);
                for entry in found.into_iter().flatten() {
                    if let Some(name) = entry.get("name").and_then(Value::as_str) {
                        names.insert(name);
                    }
                }
            }
            _ => {}
        }
    }
    names
}
