//! A remote MCP tool as a [`Tool`]: description and schema verbatim, title as
//! display name, raw annotations in metadata, approval from the entry.
//!
//! A tool of a server lousho connects holds that connection (an `Arc`), so
//! the tools keep working when the [`McpClient`](super::McpClient) handle is
//! dropped; the server stops when the handle is closed, or when the handle
//! and every tool are gone.

use super::call::{CallTarget, call_remote};
use super::output_check::OutputCheck;
use super::pinning::{PinCheck, definition_of};
use crate::policy::{PinnedTool, Trust};
use crate::tool::Approval;
use crate::tool::{
    Tool, ToolAnnotations, ToolContext, ToolError, ToolOrigin, ToolOutput, ToolSpec,
};
use async_trait::async_trait;
use serde_json::{Value, json};
use std::sync::Arc;

/// One tool of an MCP server.
pub struct McpTool {
    remote: Arc<RemoteTool>,
    target: CallTarget,
}

/// What the server's listing says about one tool, as the agent sees it;
/// shared by every [`McpTool`] made from one listing.
pub(crate) struct RemoteTool {
    spec: ToolSpec,
    server: String,
    bare_name: String,
    /// The definition as listed, with its fingerprint (what `lousho pin` writes).
    pub(crate) definition: PinnedTool,
    /// Its `outputSchema`, which results are checked against.
    output_check: OutputCheck,
}

/// How a server's tools are treated beyond their approval policy.
pub(crate) struct Listing<'a> {
    pub(crate) approval: &'a Approval,
    pub(crate) trust: Trust,
    /// The digest of the server's identity, when lousho connected it.
    pub(crate) identity: Option<&'a str>,
    /// The server's pins, when it compares with them.
    pub(crate) pins: Option<&'a PinCheck>,
    /// The entry's `defer`.
    pub(crate) defer: Option<bool>,
}

impl std::fmt::Debug for McpTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTool")
            .field("name", &self.remote.spec.name)
            .field("server", &self.remote.server)
            .field("tool", &self.remote.bare_name)
            .finish_non_exhaustive()
    }
}

impl RemoteTool {
    /// Describes a tool of the server's listing under `qualified_name`.
    pub(crate) fn new(
        qualified_name: String,
        server: &str,
        remote: &rmcp::model::Tool,
        listing: &Listing<'_>,
    ) -> Arc<Self> {
        let bare = remote.name.to_string();
        let definition = definition_of(remote);
        let raw_annotations = remote
            .annotations
            .as_ref()
            .and_then(|a| serde_json::to_value(a).ok())
            .unwrap_or_else(|| json!({}));
        let annotations: ToolAnnotations =
            serde_json::from_value(raw_annotations.clone()).unwrap_or_default();
        let mut spec = ToolSpec::new(
            qualified_name,
            remote.description.as_deref().unwrap_or_default(),
            Value::Object((*remote.input_schema).clone()),
        );
        if let Some(schema) = &remote.output_schema {
            spec = spec.output_schema(Value::Object((**schema).clone()));
        }
        if let Some(title) = remote.title.clone().or_else(|| annotations.title.clone()) {
            spec = spec.display_name(title);
        }
        spec = spec
            .annotations(annotations)
            .approval(bare_name_approval(listing.approval, &bare))
            .trust(listing.trust)
            .origin(ToolOrigin::mcp(server, bare.clone()))
            .metadata("mcp", json!({ "annotations": raw_annotations }));
        spec.fingerprint = Some(definition.fingerprint.clone());
        spec.server_identity = listing.identity.map(str::to_owned);
        spec.pin = listing.pins.map(|p| p.check(&bare, &definition));
        spec.defer = listing.defer;
        let output_check = OutputCheck::new(spec.output_schema.clone());
        Arc::new(Self {
            spec,
            server: server.to_owned(),
            bare_name: bare,
            definition,
            output_check,
        })
    }
}

impl RemoteTool {
    /// The spec the agent sees.
    pub(crate) fn spec_ref(&self) -> &ToolSpec {
        &self.spec
    }

    /// The tool's name as the server lists it.
    pub(crate) fn bare_name(&self) -> &str {
        &self.bare_name
    }
}

impl McpTool {
    /// A tool that calls `remote` through `target`.
    pub(crate) fn new(remote: Arc<RemoteTool>, target: CallTarget) -> Self {
        Self { remote, target }
    }

    /// The server's name.
    pub fn server(&self) -> &str {
        &self.remote.server
    }

    /// The tool's name as the server reports it.
    pub fn bare_name(&self) -> &str {
        &self.remote.bare_name
    }
}

/// A custom policy gets the bare tool name, not the qualified one.
pub(crate) fn bare_name_approval(approval: &Approval, bare: &str) -> Approval {
    match approval {
        Approval::Custom(f) => {
            let f = f.clone();
            let bare = bare.to_owned();
            Approval::custom(move |_qualified, annotations| f(&bare, annotations))
        }
        other => other.clone(),
    }
}

#[async_trait]
impl Tool for McpTool {
    fn spec(&self) -> &ToolSpec {
        &self.remote.spec
    }

    async fn call(&self, input: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let arguments = match input {
            Value::Object(map) => map,
            Value::Null => serde_json::Map::new(),
            other => {
                return Err(ToolError::InvalidInput {
                    tool: self.remote.spec.name.clone(),
                    message: format!("the input must be a JSON object, got {other}"),
                });
            }
        };
        let output = call_remote(
            &self.target,
            &self.remote.server,
            &self.remote.bare_name,
            arguments,
            &ctx,
        )
        .await?;
        Ok(self
            .remote
            .output_check
            .apply(&self.remote.server, &self.remote.bare_name, output))
    }
}
