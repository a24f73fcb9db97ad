//! Resource contents as what a conversation holds: in a tool result, text
//! stays a text resource, `image/*` and `audio/*` blobs become image and
//! audio parts, other blobs stay an attachment with their MIME type; in a
//! user message, text and images are parts, and other blobs are described
//! (a message has no attachment part).

use crate::mcp::client::offered::ResourceContents;
use crate::model::Part;
use crate::tool::Content;

/// One resource contents as a tool-result part.
pub fn resource_content(contents: &ResourceContents) -> Content {
    match contents {
        ResourceContents::Text {
            uri,
            mime_type,
            text,
        } => Content::Resource {
            uri: uri.clone(),
            mime_type: mime_type.clone(),
            text: Some(text.clone()),
            blob: None,
        },
        ResourceContents::Blob {
            uri,
            mime_type,
            blob,
        } => match mime_type.as_deref() {
            Some(m) if m.starts_with("image/") => Content::image(blob.clone(), m),
            Some(m) if m.starts_with("audio/") => Content::Audio {
                data: blob.clone(),
                mime_type: m.to_owned(),
            },
            _ => Content::Resource {
                uri: uri.clone(),
                mime_type: Some(
                    mime_type
                        .clone()
                        .unwrap_or_else(|| "application/octet-stream".to_owned()),
                ),
                text: None,
                blob: Some(blob.clone()),
            },
        },
    }
}

/// Contents of a resource of `server` as parts of a user message: a text
/// part per text contents (headed by the server and URI), an image part per
/// image, and a text part describing any other blob.
pub fn resource_parts(server: &str, contents: &[ResourceContents]) -> Vec<Part> {
    contents
        .iter()
        .map(|c| match resource_content(c) {
            Content::Image { data, mime_type } => Part::Image { data, mime_type },
            Content::Resource {
                uri,
                text: Some(text),
                ..
            } => Part::Text {
                text: format!("[resource {server}:{uri}]\n{text}"),
            },
            other => Part::Text {
                text: format!(
                    "[resource of MCP server `{server}`] {}",
                    other.to_model_text()
                ),
            },
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn contents(v: serde_json::Value) -> ResourceContents {
        serde_json::from_value::<rmcp::model::ResourceContents>(v)
            .unwrap()
            .into()
    }

    #[test]
    fn text_image_and_other_blobs_get_their_parts() {
        let text = contents(json!({"uri": "file:///a.txt", "mimeType": "text/plain", "text": "A"}));
        let image =
            contents(json!({"uri": "file:///p.png", "mimeType": "image/png", "blob": "aW1n"}));
        let pdf = contents(
            json!({"uri": "file:///d.pdf", "mimeType": "application/pdf", "blob": "cGRm"}),
        );
        assert!(
            matches!(resource_content(&text), Content::Resource { text: Some(t), .. } if t == "A")
        );
        assert_eq!(
            resource_content(&image),
            Content::image("aW1n", "image/png")
        );
        assert!(matches!(
            resource_content(&pdf),
            Content::Resource { mime_type: Some(m), blob: Some(_), .. } if m == "application/pdf"
        ));
        let parts = resource_parts("docs", &[text, image, pdf]);
        assert!(
            matches!(&parts[0], Part::Text { text } if text == "[resource docs:file:///a.txt]\nA")
        );
        assert!(matches!(&parts[1], Part::Image { mime_type, .. } if mime_type == "image/png"));
        assert!(matches!(&parts[2], Part::Text { text } if text.contains("application/pdf")));
    }
}
