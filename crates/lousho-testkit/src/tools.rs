//! Small fixture tools with observable behaviour.

use lousho::tool::DefinedTool;
use lousho::{ToolContext, ToolOutput};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A tool that counts its calls and echoes its input as JSON.
pub fn counting_echo(name: &str, calls: Arc<AtomicUsize>) -> DefinedTool {
    DefinedTool::from_json(
        name,
        "Echoes its input and counts calls",
        json!({"type": "object", "properties": {"text": {"type": "string"}}}),
        move |input: Value, _ctx: ToolContext| {
            calls.fetch_add(1, Ordering::SeqCst);
            async move { ToolOutput::json(json!({"echo": input})) }
        },
    )
}

/// One tool of the tool-search fixture catalog.
#[derive(Debug, Clone)]
pub struct CatalogTool {
    /// The server it belongs to.
    pub server: String,
    /// Its MCP definition (`name`, `title`, `description`, `inputSchema`).
    pub definition: Value,
}

impl CatalogTool {
    /// The name the model calls it by: `<server>__<tool>`.
    pub fn qualified_name(&self) -> String {
        format!(
            "{}__{}",
            self.server,
            self.definition["name"].as_str().unwrap_or_default()
        )
    }
}

/// The tool-search fixture: 200 tools of 10 servers (GitHub, Slack, Jira,
/// Postgres, files, Gmail, calendar, Sentry, Stripe, Notion) with realistic
/// names, descriptions and schemas (`fixtures/tool_search/tools.json`).
pub fn catalog_tools() -> Vec<CatalogTool> {
    let text = include_str!("../fixtures/tool_search/tools.json");
    let file: Value = serde_json::from_str(text).expect("the fixture catalog parses");
    let mut out = Vec::new();
    for (server, tools) in file["servers"].as_object().expect("servers").iter() {
        for t in tools.as_array().expect("tools") {
            out.push(CatalogTool {
                server: server.clone(),
                definition: t.clone(),
            });
        }
    }
    out
}

/// The fixture catalog's queries: `(query, expected tool)`, written from the
/// tools' descriptions (`fixtures/tool_search/queries.json`).
pub fn catalog_queries() -> Vec<(String, String)> {
    let text = include_str!("../fixtures/tool_search/queries.json");
    let file: Value = serde_json::from_str(text).expect("the fixture queries parse");
    file["queries"]
        .as_array()
        .expect("queries")
        .iter()
        .map(|q| {
            (
                q["query"].as_str().unwrap_or_default().to_owned(),
                q["expect"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// The fixture catalog as tools of the agent: each an MCP-origin tool
/// (`<server>__<tool>`, deferred under tool search) that counts its calls
/// in `calls` and answers `{"tool": name, "input": …}`.
pub fn catalog_agent_tools(
    calls: Arc<std::sync::Mutex<Vec<String>>>,
) -> Vec<Arc<dyn lousho::Tool>> {
    catalog_tools()
        .into_iter()
        .map(|t| {
            let name = t.qualified_name();
            let bare = t.definition["name"].as_str().unwrap_or_default().to_owned();
            let description = t.definition["description"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            let calls = calls.clone();
            let called = name.clone();
            let mut tool = DefinedTool::from_json(
                name,
                description,
                t.definition["inputSchema"].clone(),
                move |input: Value, _ctx: ToolContext| {
                    calls.lock().expect("calls").push(called.clone());
                    let called = called.clone();
                    async move { ToolOutput::json(json!({"tool": called, "input": input})) }
                },
            )
            .origin(lousho::tool::ToolOrigin::mcp(t.server.clone(), bare));
            if let Some(title) = t.definition["title"].as_str() {
                tool = tool.display_name(title);
            }
            Arc::new(tool) as Arc<dyn lousho::Tool>
        })
        .collect()
}
