//! MCP `CallToolResult` → [`ToolOutput`]: text, images, audio, embedded
//! resources, resource links and `structuredContent` all reach the model;
//! `isError: true` becomes an error result.

use crate::tool::{Content, ToolOutput};
use rmcp::model::ContentBlock;
use serde_json::Value;

/// Maps a result to a tool output: text moves over as it is, other blocks
/// go through their JSON (the wire shape).
pub(crate) fn to_output(result: rmcp::model::CallToolResult) -> ToolOutput {
    let content = result
        .content
        .into_iter()
        .filter_map(|block| match block {
            ContentBlock::Text(t) => Some(Content::Text { text: t.text }),
            other => serde_json::to_value(&other).ok().map(content_from_wire),
        })
        .collect();
    ToolOutput {
        content,
        structured: result.structured_content,
        is_error: result.is_error == Some(true),
    }
}

fn str_field(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// One content block in MCP's wire shape → a content part.
pub(crate) fn content_from_wire(block: Value) -> Content {
    match block.get("type").and_then(Value::as_str) {
        Some("text") => Content::Text {
            text: str_field(&block, "text").unwrap_or_default(),
        },
        Some("image") => Content::Image {
            data: str_field(&block, "data").unwrap_or_default(),
            mime_type: str_field(&block, "mimeType").unwrap_or_else(|| "image/png".into()),
        },
        Some("audio") => Content::Audio {
            data: str_field(&block, "data").unwrap_or_default(),
            mime_type: str_field(&block, "mimeType").unwrap_or_else(|| "audio/wav".into()),
        },
        Some("resource") => {
            let r = block.get("resource").cloned().unwrap_or(Value::Null);
            Content::Resource {
                uri: str_field(&r, "uri").unwrap_or_default(),
                mime_type: str_field(&r, "mimeType"),
                text: str_field(&r, "text"),
                blob: str_field(&r, "blob"),
            }
        }
        Some("resource_link") => {
            let mut text = str_field(&block, "name").unwrap_or_default();
            if let Some(d) = str_field(&block, "description") {
                text = format!("{text}: {d}");
            }
            Content::Resource {
                uri: str_field(&block, "uri").unwrap_or_default(),
                mime_type: str_field(&block, "mimeType"),
                text: Some(format!(
                    "(resource link: read it with the `read_resource` tool of the MCP server whose tool returned it) {text}"
                )),
                blob: None,
            }
        }
        _ => Content::Json { value: block },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn maps_every_content_kind() {
        let r: rmcp::model::CallToolResult = serde_json::from_value(json!({
            "content": [
                {"type": "text", "text": "hi"},
                {"type": "image", "data": "aW1n", "mimeType": "image/png"},
                {"type": "audio", "data": "YXVk", "mimeType": "audio/wav"},
                {"type": "resource", "resource": {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "A"}},
                {"type": "resource", "resource": {"uri": "file:///b.bin", "blob": "Ynl0ZXM="}},
                {"type": "resource_link", "uri": "file:///c", "name": "c"}
            ],
            "structuredContent": {"n": 1},
            "isError": true
        }))
        .unwrap();
        let out = to_output(r);
        assert!(out.is_error);
        assert_eq!(out.structured, Some(json!({"n": 1})));
        assert_eq!(out.content[0], Content::text("hi"));
        assert_eq!(out.content[1], Content::image("aW1n", "image/png"));
        assert!(
            matches!(&out.content[2], Content::Audio { mime_type, .. } if mime_type == "audio/wav")
        );
        assert!(matches!(&out.content[3], Content::Resource { text: Some(t), .. } if t == "A"));
        assert!(
            matches!(&out.content[4], Content::Resource { blob: Some(b), .. } if b == "Ynl0ZXM=")
        );
        assert!(matches!(&out.content[5], Content::Resource { uri, .. } if uri == "file:///c"));
    }
}
