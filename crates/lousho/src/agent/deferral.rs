//! What one request's tool list carries when tool search is active (see
//! [`crate::tool::search`]): the loaded tools, the deferred ones found so
//! far in the conversation, and the `tool_search` tool; or, for a provider
//! with native search, every definition with the deferred ones marked.

use super::AgentInner;
use super::offer::{Offer, SearchOffer, TurnList, tokens_of};
use crate::model::{Message, Part, ToolDefinition};
use crate::tool::search::{DEFAULT_CONTEXT_WINDOW, SEARCH_TOOL_NAME, SearchTool};
use crate::tool::{Tool, ToolSet};
use serde_json::Value;
use std::collections::HashSet;
use std::sync::{Arc, OnceLock};

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
    pub(crate) deferred: Arc<[String]>,
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
pub(crate) fn budget(inner: &AgentInner, offer: &Offer) -> ToolBudget {
    let tool_tokens = offer
        .definitions
        .iter()
        .zip(&offer.tokens)
        .map(|(d, &t)| (d.name.clone(), t))
        .collect::<std::collections::BTreeMap<_, _>>();
    let turn = plan(inner, offer, &[]);
    ToolBudget {
        search: turn.search,
        total_tokens: offer.total_tokens,
        sent_tokens: turn.definition_tokens,
        deferred: turn.deferred.to_vec(),
        tool_tokens,
    }
}

/// The turn's tools, given the offer and the conversation so far.
pub(crate) fn plan(inner: &AgentInner, offer: &Offer, messages: &[Message]) -> TurnTools {
    let all = || TurnTools {
        tools: offer.tools.clone(),
        definitions: offer.definitions.clone(),
        definition_tokens: offer.total_tokens,
        search: None,
        deferred: Arc::from([]),
    };
    let config = &inner.tool_search;
    if offer.tools.contains(SEARCH_TOOL_NAME) {
        // An own tool has the name: no search of ours.
        return all();
    }
    let search = offer.search.get_or_init(|| SearchOffer {
        deferrable: offer
            .definitions
            .iter()
            .map(|d| {
                offer
                    .tools
                    .get(&d.name)
                    .is_some_and(|t| config.defers(t.spec()))
            })
            .collect(),
        native: OnceLock::new(),
        client: OnceLock::new(),
    });
    if !search.deferrable.contains(&true) {
        return all();
    }
    let window = inner
        .model
        .context_window()
        .unwrap_or(DEFAULT_CONTEXT_WINDOW);
    if !config.is_active(offer.definitions.len(), offer.total_tokens, window) {
        return all();
    }
    if config.native && inner.native_tool_search() {
        let list = search.native.get_or_init(|| native(offer, search));
        return TurnTools {
            tools: offer.tools.clone(),
            definitions: list.definitions.clone(),
            definition_tokens: list.tokens,
            search: Some(SearchPath::Native),
            deferred: list.deferred.clone(),
        };
    }
    let (tools, search_definition, search_tokens) = search.client.get_or_init(|| {
        let candidates: Arc<[Arc<dyn Tool>]> = offer
            .definitions
            .iter()
            .zip(&search.deferrable)
            .filter(|(_, deferrable)| **deferrable)
            .filter_map(|(d, _)| offer.tools.get(&d.name).cloned())
            .collect();
        let search_tool = SearchTool::new(candidates, config);
        let spec = search_tool.spec();
        let definition = ToolDefinition::new(
            spec.name.clone(),
            spec.description.clone(),
            spec.input_schema.clone(),
        );
        let tokens = tokens_of(&definition);
        let mut tools = offer.tools.clone();
        if let Err(e) = tools.insert(Arc::new(search_tool)) {
            tracing::warn!(target: "lousho::agent", error = %e, "tool search left out");
        }
        (tools, definition, tokens)
    });
    let loaded = loaded_names(messages);
    let loaded: Vec<usize> = offer
        .definitions
        .iter()
        .enumerate()
        .filter(|(i, d)| search.deferrable[*i] && loaded.contains(d.name.as_str()))
        .map(|(i, _)| i)
        .collect();
    let cached = offer.last_client_turn.lock().ok().and_then(|last| {
        last.as_ref()
            .filter(|(k, _)| *k == loaded)
            .map(|(_, t)| t.clone())
    });
    let turn = cached.unwrap_or_else(|| {
        let turn = client_turn(offer, search, &loaded, search_definition, *search_tokens);
        if let Ok(mut last) = offer.last_client_turn.lock() {
            *last = Some((loaded, turn.clone()));
        }
        turn
    });
    TurnTools {
        tools: tools.clone(),
        definitions: turn.definitions,
        definition_tokens: turn.tokens,
        search: Some(SearchPath::Client),
        deferred: turn.deferred,
    }
}

/// Every definition, the deferrable ones marked for the provider's search.
fn native(offer: &Offer, search: &SearchOffer) -> TurnList {
    let definitions: Arc<[ToolDefinition]> = offer
        .definitions
        .iter()
        .zip(&search.deferrable)
        .map(|(d, &deferrable)| ToolDefinition {
            defer_loading: deferrable,
            ..d.clone()
        })
        .collect();
    let tokens = offer
        .tokens
        .iter()
        .zip(&search.deferrable)
        .filter(|(_, deferrable)| !**deferrable)
        .map(|(t, _)| t)
        .sum();
    let deferred = definitions
        .iter()
        .filter(|d| d.defer_loading)
        .map(|d| d.name.clone())
        .collect();
    TurnList {
        definitions,
        tokens,
        deferred,
    }
}

/// The loaded tools, the deferrable ones the conversation loaded (`loaded`,
/// indices) and `tool_search`.
fn client_turn(
    offer: &Offer,
    search: &SearchOffer,
    loaded: &[usize],
    search_definition: &ToolDefinition,
    search_tokens: usize,
) -> TurnList {
    let sent = |i: usize| !search.deferrable[i] || loaded.binary_search(&i).is_ok();
    let mut definitions: Vec<ToolDefinition> = Vec::new();
    let mut tokens = search_tokens;
    let mut deferred = Vec::new();
    for (i, d) in offer.definitions.iter().enumerate() {
        if sent(i) {
            definitions.push(d.clone());
            tokens += offer.tokens[i];
        } else {
            deferred.push(d.name.clone());
        }
    }
    definitions.push(search_definition.clone());
    TurnList {
        definitions: definitions.into(),
        tokens,
        deferred: deferred.into(),
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
