//! The tools offered to the model at one moment, with what every request
//! derives from them — the definitions, their estimated tokens, what tool
//! search may hold back and the per-turn lists it sends — computed once per
//! distinct tool set instead of once per request.
//!
//! An agent keeps its latest [`Offer`]. The tool sources (MCP servers) are
//! read at every turn, but while they return the same tools (the same
//! `Arc`s, as a connected server does between `list_changed` notifications)
//! the offer, and the `Arc<[ToolDefinition]>` each request carries, are
//! reused; a provider can then reuse what it built from that `Arc` too
//! (its normalised, serialised tool list).

use super::{AgentError, AgentInner};
use crate::model::ToolDefinition;
use crate::tool::search::estimate_definition_tokens;
use crate::tool::{Tool, ToolSet};
use std::sync::{Arc, Mutex, OnceLock};

/// The tools of one tool set and what is derived from them.
pub(crate) struct Offer {
    /// The identity of the sources' tools this offer was built from (their
    /// `Arc` addresses, in the order the sources returned them).
    key: Vec<usize>,
    /// Every tool calls may use.
    pub(crate) tools: ToolSet,
    /// What the model is offered (held-back and denied tools left out).
    pub(crate) definitions: Arc<[ToolDefinition]>,
    /// The estimated tokens of each of `definitions`, in order.
    pub(crate) tokens: Vec<usize>,
    /// Their sum.
    pub(crate) total_tokens: usize,
    /// What tool search derives from this offer ([`super::deferral`]),
    /// filled on first use.
    pub(crate) search: OnceLock<SearchOffer>,
    /// The client-side search's last per-turn list, by the deferred tools
    /// the conversation had loaded.
    pub(crate) last_client_turn: Mutex<Option<(Vec<usize>, TurnList)>>,
}

/// What tool search derives from one offer, once (see [`super::deferral`]).
pub(crate) struct SearchOffer {
    /// Which definitions (by index) may be held back.
    pub(super) deferrable: Vec<bool>,
    /// The native path's list (every definition, the deferrable ones
    /// marked), its loaded tokens and the deferred names; built on first use.
    pub(super) native: OnceLock<TurnList>,
    /// The client path's tools (the offer's plus `tool_search`) and the
    /// search tool's definition with its tokens; built on first use.
    pub(super) client: OnceLock<(ToolSet, ToolDefinition, usize)>,
}

/// What a request sends with search active: the definitions, their loaded
/// tokens and the names held back (the native path's one list; the client
/// path's list for one set of loaded tools).
#[derive(Clone)]
pub(crate) struct TurnList {
    pub(super) definitions: Arc<[ToolDefinition]>,
    pub(super) tokens: usize,
    pub(super) deferred: Arc<[String]>,
}

impl Offer {
    fn new(key: Vec<usize>, tools: ToolSet, definitions: Arc<[ToolDefinition]>) -> Self {
        let tokens: Vec<usize> = definitions.iter().map(tokens_of).collect();
        let total_tokens = tokens.iter().sum();
        Self {
            key,
            tools,
            definitions,
            tokens,
            total_tokens,
            search: OnceLock::new(),
            last_client_turn: Mutex::new(None),
        }
    }
}

/// The estimated tokens of one definition.
pub(crate) fn tokens_of(def: &ToolDefinition) -> usize {
    estimate_definition_tokens(&def.name, &def.description, &def.input_schema)
}

/// An agent's latest offer.
#[derive(Default)]
pub(crate) struct OfferCache(Mutex<Option<Arc<Offer>>>);

/// The tools of this turn: the agent's own plus its sources' — the cached
/// offer while the sources return the same tools.
pub(crate) fn current(inner: &AgentInner) -> Result<Arc<Offer>, AgentError> {
    let mut from_sources: Vec<(usize, Arc<dyn Tool>)> = Vec::new();
    for (i, source) in inner.sources.iter().enumerate() {
        from_sources.extend(source.tools().into_iter().map(|t| (i, t)));
    }
    let key: Vec<usize> = from_sources
        .iter()
        .map(|(_, t)| Arc::as_ptr(t).cast::<()>() as usize)
        .collect();
    if let Ok(cached) = inner.offer.0.lock()
        && let Some(offer) = cached.as_ref()
        && offer.key == key
    {
        return Ok(offer.clone());
    }
    let offer = if from_sources.is_empty() {
        Offer::new(key, inner.tools.clone(), inner.tool_definitions.clone())
    } else {
        let mut set = inner.tools.clone();
        for (i, tool) in from_sources {
            if let Err(e) = super::builder::validate_tool(tool.as_ref()) {
                tracing::warn!(source = inner.sources[i].name(), error = %e, "skipping a tool");
                continue;
            }
            set.insert(tool)?;
        }
        let definitions = super::builder::definitions(&set, &inner.permissions);
        Offer::new(key, set, definitions)
    };
    let offer = Arc::new(offer);
    if let Ok(mut cached) = inner.offer.0.lock() {
        *cached = Some(offer.clone());
    }
    Ok(offer)
}
