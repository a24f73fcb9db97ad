//! The `tool_search` tool the model is given when tools are deferred.

use super::super::{
    Approval, Tool, ToolAnnotations, ToolContext, ToolError, ToolOrigin, ToolOutput, ToolSpec,
};
use super::bm25::Bm25Index;
use super::{SEARCH_TOOL_NAME, ToolSearch};
use async_trait::async_trait;
use serde_json::{Value, json};
use std::sync::Arc;

/// The most matches one search may ask for.
const MAX_LIMIT: usize = 20;
/// A description line is cut after this many characters.
const LINE_CHARS: usize = 160;

/// Searches the deferred tools of one turn.
pub(crate) struct SearchTool {
    spec: ToolSpec,
    candidates: Arc<[Arc<dyn Tool>]>,
    default_limit: usize,
}

impl std::fmt::Debug for SearchTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchTool")
            .field("candidates", &self.candidates.len())
            .finish_non_exhaustive()
    }
}

impl SearchTool {
    /// A search over `candidates` (the deferred tools).
    pub(crate) fn new(candidates: Arc<[Arc<dyn Tool>]>, config: &ToolSearch) -> Self {
        let mut servers: Vec<&str> = candidates
            .iter()
            .filter_map(|t| t.spec().origin.server())
            .collect();
        servers.sort_unstable();
        servers.dedup();
        Self {
            spec: search_spec(&servers),
            candidates,
            default_limit: config.max_results.clamp(1, MAX_LIMIT),
        }
    }

    /// The best matches for `query` among the candidates (of `server` only,
    /// when given).
    pub(crate) fn matches(
        &self,
        query: &str,
        server: Option<&str>,
        limit: usize,
    ) -> Vec<Arc<dyn Tool>> {
        let pool: Vec<&Arc<dyn Tool>> = self
            .candidates
            .iter()
            .filter(|t| server.is_none_or(|s| t.spec().origin.server() == Some(s)))
            .collect();
        let index = Bm25Index::new(pool.iter().map(|t| t.spec()));
        index
            .search(query, limit)
            .into_iter()
            .map(|(i, _)| pool[i].clone())
            .collect()
    }
}

fn search_spec(servers: &[&str]) -> ToolSpec {
    let mut description = String::from(
        "Finds tools that are available but not loaded yet. Give a few words of what you need \
         to do (e.g. \"create a pull request\", \"send a slack message\"); the best matches are \
         returned as names with a one-line description, and their full definitions are loaded \
         so you can call them from your next step. Search again with other words if nothing fits.",
    );
    if !servers.is_empty() {
        description.push_str(" Servers with deferred tools: ");
        description.push_str(&servers.join(", "));
        description.push('.');
    }
    ToolSpec::new(
        SEARCH_TOOL_NAME,
        description,
        json!({
            "type": "object",
            "properties": {
                "query": { "type": "string", "description": "What the tool should do, in a few words." },
                "server": { "type": "string", "description": "Only tools of this MCP server." },
                "limit": { "type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "description": "How many matches (default 5)." }
            },
            "required": ["query"],
            "additionalProperties": false
        }),
    )
    .annotations(ToolAnnotations::read_only_tool())
    .approval(Approval::Never)
    .origin(ToolOrigin::Builtin)
}

/// The first line of a description, cut to [`LINE_CHARS`].
fn one_line(description: &str) -> String {
    let line = description
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    if line.chars().count() <= LINE_CHARS {
        return line.to_owned();
    }
    let cut: String = line.chars().take(LINE_CHARS - 1).collect();
    format!("{}…", cut.trim_end())
}

#[async_trait]
impl Tool for SearchTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, input: Value, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let Some(query) = input
            .get("query")
            .and_then(Value::as_str)
            .filter(|q| !q.trim().is_empty())
        else {
            return Ok(ToolOutput::error(
                "`query` is required: a few words saying what the tool should do",
            ));
        };
        let server = input
            .get("server")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty());
        let limit = input
            .get("limit")
            .and_then(Value::as_u64)
            .map_or(self.default_limit, |n| {
                usize::try_from(n).unwrap_or(MAX_LIMIT)
            })
            .clamp(1, MAX_LIMIT);
        let found = self.matches(query, server, limit);
        if found.is_empty() {
            let scope = server.map_or(String::new(), |s| format!(" of server `{s}`"));
            return Ok(ToolOutput::text(format!(
                "No deferred tool{scope} matches \"{query}\". Try other words, or another server."
            ))
            .with_structured(json!({ "tools": [] })));
        }
        let mut text = String::from("Loaded these tools (call them directly):\n");
        let mut list = Vec::with_capacity(found.len());
        for tool in &found {
            let spec = tool.spec();
            let line = one_line(&spec.description);
            text.push_str(&format!("- {}: {line}\n", spec.name));
            let mut entry = json!({ "name": spec.name, "description": line });
            if let Some(server) = spec.origin.server() {
                entry["server"] = json!(server);
            }
            list.push(entry);
        }
        Ok(ToolOutput::text(text.trim_end().to_owned()).with_structured(json!({ "tools": list })))
    }
}
