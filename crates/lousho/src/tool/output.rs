use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One piece of a tool's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Content {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// A JSON value (sent to the model as JSON text).
    Json {
        /// The value.
        value: Value,
    },
    /// An image, base64-encoded.
    Image {
        /// Base64 data.
        data: String,
        /// MIME type, e.g. `image/png`.
        mime_type: String,
    },
    /// Audio, base64-encoded.
    Audio {
        /// Base64 data.
        data: String,
        /// MIME type, e.g. `audio/wav`.
        mime_type: String,
    },
    /// An embedded resource (MCP): text or base64 blob at a URI.
    Resource {
        /// The resource URI.
        uri: String,
        /// MIME type when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// Text contents.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        /// Base64 contents.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        blob: Option<String>,
    },
    /// A link to a resource the client may read (MCP `resource_link`), not
    /// its content.
    ResourceLink {
        /// The resource URI.
        uri: String,
        /// Its name.
        name: String,
        /// What it is.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        /// MIME type when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
    },
}

impl Content {
    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text { text: text.into() }
    }

    /// A JSON part.
    pub fn json(value: Value) -> Self {
        Content::Json { value }
    }

    /// An image part from base64 data.
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Content::Image {
            data: data.into(),
            mime_type: mime_type.into(),
        }
    }

    /// A link to the resource at `uri` named `name` (MCP `resource_link`):
    /// a served tool points its client at a resource instead of embedding it.
    pub fn resource_link(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Content::ResourceLink {
            uri: uri.into(),
            name: name.into(),
            description: None,
            mime_type: None,
        }
    }

    /// The base64 data and MIME type when this part is an image: an image,
    /// or an embedded resource with an `image/*` blob (what providers send as
    /// image parts).
    pub(crate) fn as_image(&self) -> Option<(&str, &str)> {
        match self {
            Content::Image { data, mime_type } => Some((data, mime_type)),
            Content::Resource {
                blob: Some(data),
                mime_type: Some(mime_type),
                ..
            } if mime_type.starts_with("image/") => Some((data, mime_type)),
            _ => None,
        }
    }

    /// How this part reads as text for a model that takes text only.
    pub fn to_model_text(&self) -> String {
        match self {
            Content::Text { text } => text.clone(),
            Content::Json { value } => value.to_string(),
            Content::Image { mime_type, data } => {
                format!("[image {mime_type}, {} bytes base64]", data.len())
            }
            Content::Audio { mime_type, data } => {
                format!("[audio {mime_type}, {} bytes base64]", data.len())
            }
            Content::Resource {
                uri,
                mime_type,
                text,
                blob,
            } => match (text, blob) {
                (Some(t), _) => format!("[resource {uri}]\n{t}"),
                (None, Some(b)) => format!(
                    "[resource {uri} {}, {} bytes base64]",
                    mime_type.as_deref().unwrap_or("application/octet-stream"),
                    b.len()
                ),
                (None, None) => format!("[resource {uri}]"),
            },
            Content::ResourceLink {
                uri,
                name,
                description,
                mime_type,
            } => {
                let mut out = format!("[resource link {uri}: {name}");
                if let Some(m) = mime_type {
                    out.push_str(&format!(", {m}"));
                }
                if let Some(d) = description {
                    out.push_str(&format!(" — {d}"));
                }
                out.push(']');
                out
            }
        }
    }
}

/// What a tool returns: content parts, optional structured content, and
/// whether it is an error the model should see.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolOutput {
    /// The content parts.
    pub content: Vec<Content>,
    /// Structured content (an MCP tool's `structuredContent`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured: Option<Value>,
    /// True when the call failed; the model sees the content as an error.
    #[serde(default)]
    pub is_error: bool,
}

impl ToolOutput {
    /// A successful text result.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            content: vec![Content::text(text)],
            structured: None,
            is_error: false,
        }
    }

    /// A successful JSON result (also kept as structured content).
    pub fn json(value: Value) -> Self {
        Self {
            content: vec![Content::json(value.clone())],
            structured: Some(value),
            is_error: false,
        }
    }

    /// An error result with a message for the model.
    pub fn error(message: impl Into<String>) -> Self {
        Self {
            content: vec![Content::text(message)],
            structured: None,
            is_error: true,
        }
    }

    /// A result from content parts.
    pub fn from_content(content: Vec<Content>) -> Self {
        Self {
            content,
            structured: None,
            is_error: false,
        }
    }

    /// Sets structured content.
    #[must_use]
    pub fn with_structured(mut self, value: Value) -> Self {
        self.structured = Some(value);
        self
    }

    /// All parts as text, joined by newlines (what a text-only model sees).
    pub fn to_model_text(&self) -> String {
        let mut parts: Vec<String> = self.content.iter().map(Content::to_model_text).collect();
        if let (true, Some(s)) = (parts.is_empty(), &self.structured) {
            parts.push(s.to_string());
        }
        parts.join("\n")
    }
}
