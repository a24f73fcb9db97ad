//! The catalog's entries as rmcp's model types (what goes on the wire).

use super::Declared;
use crate::mcp::server::prompts::{DefinedPrompt, PromptMessage, PromptRole};
use crate::mcp::server::resources::{
    DefinedResource, DefinedResourceTemplate, ResourceContent, ResourceError,
};
use crate::mcp::server::result::to_block;
use base64::Engine;
use rmcp::model::{
    ErrorData, Implementation, Prompt, PromptArgument, ResourceContents, Role, ServerCapabilities,
    ServerConfig,
};
use serde_json::json;

/// lousho's icons as MCP's (none: the field left out).
pub(crate) fn icons(icons: &[crate::tool::Icon]) -> Option<Vec<rmcp::model::Icon>> {
    use crate::tool::IconTheme;
    if icons.is_empty() {
        return None;
    }
    Some(
        icons
            .iter()
            .map(|i| {
                let mut out = rmcp::model::Icon::new(i.src.clone());
                out.mime_type.clone_from(&i.mime_type);
                if !i.sizes.is_empty() {
                    out = out.with_sizes(i.sizes.clone());
                }
                match i.theme {
                    Some(IconTheme::Light) => out.with_theme(rmcp::model::IconTheme::Light),
                    Some(IconTheme::Dark) => out.with_theme(rmcp::model::IconTheme::Dark),
                    _ => out,
                }
            })
            .collect(),
    )
}

/// The `initialize` answer: tools always (their list can change), logging,
/// and resources (with subscriptions), prompts and completions only once
/// something of the kind is served.
pub(super) fn server_config(declared: Declared, identity: &Identity) -> ServerConfig {
    let Declared { resources, prompts } = declared;
    #[allow(deprecated)] // logging: deprecated by SEP-2577, spoken by 2025-11-25 clients
    let mut caps = ServerCapabilities::builder()
        .enable_tools()
        .enable_tool_list_changed()
        .enable_logging()
        // Agent tools answer clients with the tasks extension with a task.
        .enable_tasks()
        .build();
    if resources {
        let mut r = rmcp::model::ResourcesCapability::default();
        r.subscribe = Some(true);
        r.list_changed = Some(true);
        caps.resources = Some(r);
    }
    if prompts {
        let mut p = rmcp::model::PromptsCapability::default();
        p.list_changed = Some(true);
        caps.prompts = Some(p);
    }
    if resources || prompts {
        caps.completions = Some(Default::default());
    }
    let mut info = Implementation::new(identity.name.clone(), env!("CARGO_PKG_VERSION"));
    info.title.clone_from(&identity.title);
    info.icons = icons(&identity.icons);
    ServerConfig::new(caps)
        .with_server_info(info)
        .with_instructions(identity.instructions.clone())
}

/// Who the server says it is in its `initialize` answer.
pub(crate) struct Identity {
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) icons: Vec<crate::tool::Icon>,
    pub(crate) instructions: String,
}

pub(crate) fn resource(r: &DefinedResource) -> rmcp::model::Resource {
    let l = &r.listing;
    let mut out = rmcp::model::Resource::new(r.uri.clone(), l.name.clone());
    out.title.clone_from(&l.title);
    out.description.clone_from(&l.description);
    out.mime_type.clone_from(&l.mime_type);
    out.size = l.size;
    out.icons = icons(&l.icons);
    out
}

pub(crate) fn template(t: &DefinedResourceTemplate) -> rmcp::model::ResourceTemplate {
    let l = &t.listing;
    let mut out = rmcp::model::ResourceTemplate::new(t.template.clone(), l.name.clone());
    out.title.clone_from(&l.title);
    out.description.clone_from(&l.description);
    out.mime_type.clone_from(&l.mime_type);
    out.icons = icons(&l.icons);
    out
}

pub(crate) fn prompt(p: &DefinedPrompt) -> Prompt {
    let arguments = p
        .arguments
        .iter()
        .map(|a| {
            let mut arg = PromptArgument::new(a.name.clone()).with_required(a.required);
            arg.description.clone_from(&a.description);
            arg
        })
        .collect::<Vec<_>>();
    let mut out = Prompt::new(
        p.name.clone(),
        Some(p.description.clone()),
        (!arguments.is_empty()).then_some(arguments),
    );
    out.title.clone_from(&p.title);
    out.icons = icons(&p.icons);
    out
}

pub(crate) fn prompt_message(m: PromptMessage) -> rmcp::model::PromptMessage {
    let role = match m.role {
        PromptRole::User => Role::User,
        PromptRole::Assistant => Role::Assistant,
    };
    rmcp::model::PromptMessage::new(role, to_block(m.content))
}

/// Content read at `uri`, with the resource's MIME type when it names none.
pub(crate) fn contents(
    uri: String,
    content: ResourceContent,
    listed_mime: Option<String>,
) -> ResourceContents {
    match content {
        ResourceContent::Text { text, mime_type } => ResourceContents::TextResourceContents {
            uri,
            mime_type: mime_type.or(listed_mime),
            text,
            meta: None,
        },
        ResourceContent::Bytes { data, mime_type } => ResourceContents::BlobResourceContents {
            uri,
            mime_type: mime_type.or(listed_mime),
            blob: base64::engine::general_purpose::STANDARD.encode(data),
            meta: None,
        },
    }
}

/// A read's error as MCP's: not found `-32002`, refused `-32602`, failed
/// `-32603`.
pub(crate) fn resource_error(e: &ResourceError) -> ErrorData {
    match e {
        ResourceError::NotFound { uri } => {
            ErrorData::resource_not_found(e.to_string(), Some(json!({ "uri": uri })))
        }
        ResourceError::Refused { uri, .. } => {
            ErrorData::invalid_params(e.to_string(), Some(json!({ "uri": uri })))
        }
        ResourceError::Failed(_) => ErrorData::internal_error(e.to_string(), None),
    }
}
