//! The model's way to a server's resources: a server that offers resources
//! (or templates) gives the agent two tools of its own,
//! `<server>__list_resources` and `<server>__read_resource`.
//!
//! Per server, not one tool taking a server argument: each then carries its
//! server's entry — `approval` (read with the bare names `list_resources` /
//! `read_resource`), `trust`, the `tools` allow/deny filter, `defer` under
//! tool search, the remembered-approval identity — so "the same rules as the
//! server's tools" needs no special case, and a server that is not connected
//! offers them from its manifest. They are read-only (`readOnlyHint: true`),
//! so under the default `annotations` policy they run without asking. A
//! server whose own listing has a tool of the same name keeps its tool.

use super::Connection;
use crate::mcp::client::naming::qualified_name;
use crate::mcp::client::offers::Offers;
use crate::mcp::client::resources::resource_content;
use crate::mcp::client::tool::bare_name_approval;
use crate::tool::{
    Tool, ToolAnnotations, ToolContext, ToolError, ToolOrigin, ToolOutput, ToolSpec,
};
use async_trait::async_trait;
use serde_json::{Value, json};
use std::sync::{Arc, Weak};

/// The bare name of the listing tool.
pub(crate) const LIST_RESOURCES: &str = "list_resources";
/// The bare name of the reading tool.
pub(crate) const READ_RESOURCE: &str = "read_resource";

/// Which of the two.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    List,
    Read,
}

/// One resource tool of one server; holds the connection like an MCP tool.
pub(crate) struct ResourceTool {
    spec: ToolSpec,
    kind: Kind,
    conn: Arc<Connection>,
}

impl std::fmt::Debug for ResourceTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceTool")
            .field("name", &self.spec.name)
            .finish_non_exhaustive()
    }
}

/// The resource tools last made from an offers listing, held weakly (as
/// the connection's MCP tools are), so an unchanged listing gives the same
/// `Arc`s.
#[derive(Default)]
pub(crate) struct MadeResourceTools {
    from: Option<Arc<Offers>>,
    tools: Vec<Weak<dyn Tool>>,
}

impl MadeResourceTools {
    /// The tools for `offers`: the last ones while they are alive and made
    /// from the same listing, else new ones.
    pub(crate) fn get(
        &mut self,
        conn: &Arc<Connection>,
        offers: &Arc<Offers>,
    ) -> Vec<Arc<dyn Tool>> {
        if let Some(from) = &self.from
            && Arc::ptr_eq(from, offers)
            && let Some(tools) = self
                .tools
                .iter()
                .map(Weak::upgrade)
                .collect::<Option<Vec<_>>>()
        {
            return tools;
        }
        let tools = make(conn, offers);
        self.tools = tools.iter().map(Arc::downgrade).collect();
        self.from = Some(offers.clone());
        tools
    }
}

/// The two tools when the server has resources or templates, without the
/// ones its entry filters out or its own listing shadows.
fn make(conn: &Arc<Connection>, offers: &Offers) -> Vec<Arc<dyn Tool>> {
    if offers.resources.is_none() && offers.templates.is_none() {
        return Vec::new();
    }
    let entry = conn.entry();
    let allows = entry.tools.matcher();
    let server = conn.name();
    [Kind::List, Kind::Read]
        .into_iter()
        .filter_map(|kind| {
            let bare = match kind {
                Kind::List => LIST_RESOURCES,
                Kind::Read => READ_RESOURCE,
            };
            if !allows(bare) || conn.lists(bare) {
                return None;
            }
            let name = qualified_name(conn.naming(), server, bare);
            let (description, schema) = match kind {
                Kind::List => (
                    format!(
                        "Lists the resources (documents, files, records) of MCP server `{server}`: each resource's URI, name, description and MIME type, and the URI templates whose variables make more URIs. Read one with `{}`.",
                        qualified_name(conn.naming(), server, READ_RESOURCE)
                    ),
                    json!({"type": "object", "properties": {}}),
                ),
                Kind::Read => (
                    format!(
                        "Reads a resource of MCP server `{server}` by its URI: one from its resource list, a URI template with its variables filled in, or a resource link in one of its tool results."
                    ),
                    json!({
                        "type": "object",
                        "properties": {"uri": {"type": "string", "description": "The resource's URI"}},
                        "required": ["uri"]
                    }),
                ),
            };
            let annotations = ToolAnnotations::read_only_tool().open_world(false);
            let mut spec = ToolSpec::new(name, description, schema)
                .annotations(annotations.clone())
                .approval(bare_name_approval(&entry.approval, bare))
                .trust(entry.trust)
                .origin(ToolOrigin::mcp(server, bare))
                .metadata(
                    "mcp",
                    json!({"annotations": serde_json::to_value(&annotations).unwrap_or_default(), "resourceTool": true}),
                );
            spec.server_identity = Some(conn.identity().to_owned());
            spec.defer = entry.defer;
            Some(Arc::new(ResourceTool {
                spec,
                kind,
                conn: conn.clone(),
            }) as Arc<dyn Tool>)
        })
        .collect()
}

#[async_trait]
impl Tool for ResourceTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, input: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let work = async {
            match self.kind {
                Kind::List => self.list().await,
                Kind::Read => {
                    let Some(uri) = input.get("uri").and_then(Value::as_str) else {
                        return Err(ToolError::InvalidInput {
                            tool: self.spec.name.clone(),
                            message: "`uri` (a string) is required".to_owned(),
                        });
                    };
                    Ok(match self.conn.read_resource(uri).await {
                        Ok(contents) => ToolOutput::from_content(
                            contents.iter().map(resource_content).collect(),
                        ),
                        Err(e) => ToolOutput::error(e.to_string()),
                    })
                }
            }
        };
        tokio::select! {
            out = work => out,
            () = ctx.cancel.cancelled() => Err(ToolError::Cancelled),
        }
    }
}

impl ResourceTool {
    /// The resources and templates as one JSON result.
    async fn list(&self) -> Result<ToolOutput, ToolError> {
        let offers = match self.conn.current_offers().await {
            Ok(offers) => offers,
            Err(e) => return Ok(ToolOutput::error(e.to_string())),
        };
        let resources: Vec<Value> = offers
            .resources
            .iter()
            .flatten()
            .map(|r| {
                serde_json::to_value(crate::mcp::client::offered::McpResource::from(r))
                    .unwrap_or_default()
            })
            .collect();
        let templates: Vec<Value> = offers
            .templates
            .iter()
            .flatten()
            .map(|t| {
                serde_json::to_value(crate::mcp::client::offered::McpResourceTemplate::from(t))
                    .unwrap_or_default()
            })
            .collect();
        Ok(ToolOutput::json(
            json!({"resources": resources, "resourceTemplates": templates}),
        ))
    }
}
