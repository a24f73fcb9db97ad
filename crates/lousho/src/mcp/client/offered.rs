//! lousho's own types for what a server offers besides tools (rmcp's stay
//! behind [`lousho::mcp::rmcp`](crate::mcp::rmcp)): a resource, a resource
//! template, a prompt and its arguments, and a resource's contents.

use serde::{Deserialize, Serialize};

/// A resource a server lists (`resources/list`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct McpResource {
    /// Its URI (what [`read_resource`](super::McpClient::read_resource) takes).
    pub uri: String,
    /// Its programmatic name.
    pub name: String,
    /// A display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its MIME type, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Its size in bytes, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

/// A resource template a server lists (`resources/templates/list`): an RFC
/// 6570 URI template whose variables make resource URIs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct McpResourceTemplate {
    /// The URI template, e.g. `file:///{path}`.
    pub uri_template: String,
    /// Its programmatic name.
    pub name: String,
    /// A display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The MIME type of its resources, when uniform.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
}

/// A prompt a server lists (`prompts/list`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct McpPrompt {
    /// Its name (what [`get_prompt`](super::McpClient::get_prompt) takes).
    pub name: String,
    /// A display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its arguments, in the server's order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arguments: Vec<McpPromptArgument>,
}

/// One argument of a prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct McpPromptArgument {
    /// Its name.
    pub name: String,
    /// What it means.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether the prompt needs it.
    #[serde(default)]
    pub required: bool,
}

/// One part of a resource's contents (`resources/read`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ResourceContents {
    /// Text contents.
    Text {
        /// The URI they are of.
        uri: String,
        /// Their MIME type, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// The text.
        text: String,
    },
    /// Binary contents, base64-encoded.
    Blob {
        /// The URI they are of.
        uri: String,
        /// Their MIME type, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// The base64 data.
        blob: String,
    },
}

impl From<&rmcp::model::Resource> for McpResource {
    fn from(r: &rmcp::model::Resource) -> Self {
        Self {
            uri: r.uri.clone(),
            name: r.name.clone(),
            title: r.title.clone(),
            description: r.description.clone(),
            mime_type: r.mime_type.clone(),
            size: r.size,
        }
    }
}

impl From<&rmcp::model::ResourceTemplate> for McpResourceTemplate {
    fn from(t: &rmcp::model::ResourceTemplate) -> Self {
        Self {
            uri_template: t.uri_template.clone(),
            name: t.name.clone(),
            title: t.title.clone(),
            description: t.description.clone(),
            mime_type: t.mime_type.clone(),
        }
    }
}

impl From<&rmcp::model::Prompt> for McpPrompt {
    fn from(p: &rmcp::model::Prompt) -> Self {
        Self {
            name: p.name.clone(),
            title: p.title.clone(),
            description: p.description.clone(),
            arguments: p
                .arguments
                .iter()
                .flatten()
                .map(|a| McpPromptArgument {
                    name: a.name.clone(),
                    description: a.description.clone(),
                    required: a.required == Some(true),
                })
                .collect(),
        }
    }
}

impl From<rmcp::model::ResourceContents> for ResourceContents {
    fn from(c: rmcp::model::ResourceContents) -> Self {
        match c {
            rmcp::model::ResourceContents::TextResourceContents {
                uri,
                mime_type,
                text,
                ..
            } => Self::Text {
                uri,
                mime_type,
                text,
            },
            rmcp::model::ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => Self::Blob {
                uri,
                mime_type,
                blob,
            },
            // A kind newer than this lousho: its JSON as text.
            other => {
                let value = serde_json::to_value(&other).unwrap_or_default();
                Self::Text {
                    uri: value
                        .get("uri")
                        .and_then(serde_json::Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                    mime_type: None,
                    text: value.to_string(),
                }
            }
        }
    }
}
