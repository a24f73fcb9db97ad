//! lousho tool outputs as MCP `tools/call` results.

use crate::tool::{Content, ToolOutput};
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

/// Converts a tool's output; `is_error` carries over as `isError: true`.
pub(crate) fn to_call_result(output: ToolOutput) -> CallToolResult {
    let content: Vec<ContentBlock> = output.content.into_iter().map(to_block).collect();
    let mut result = if output.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    result.structured_content = output.structured;
    result
}

/// An `isError: true` result with one text part.
pub(crate) fn error_result(message: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}

/// One lousho content part as an MCP content block.
pub(crate) fn to_block(content: Content) -> ContentBlock {
    match content {
        Content::Text { text } => ContentBlock::text(text),
        Content::Json { value } => ContentBlock::text(value.to_string()),
        Content::Image { data, mime_type } => ContentBlock::image(data, mime_type),
        Content::Audio { data, mime_type } => ContentBlock::audio(data, mime_type),
        Content::Resource {
            uri,
            mime_type,
            text,
            blob,
        } => {
            let contents = match (text, blob) {
                (None, Some(blob)) => ResourceContents::BlobResourceContents {
                    uri,
                    mime_type,
                    blob,
                    meta: None,
                },
                (text, _) => ResourceContents::TextResourceContents {
                    uri,
                    mime_type,
                    text: text.unwrap_or_default(),
                    meta: None,
                },
            };
            ContentBlock::resource(contents)
        }
        Content::ResourceLink {
            uri,
            name,
            description,
            mime_type,
        } => {
            let mut link = rmcp::model::Resource::new(uri, name);
            link.description = description;
            link.mime_type = mime_type;
            ContentBlock::resource_link(link)
        }
    }
}
