//! A server's prompts (ready-made conversations): list them, get one with
//! arguments as lousho [`Message`]s that start or continue a run, and
//! complete prompt and resource-template arguments (`completion/complete`).

use super::connect::McpClient;
use super::error::McpError;
use super::offered::McpPrompt;
use super::request;
use super::result::content_from_wire;
use crate::model::{Message, Part, Role};
use crate::tool::Content;
use rmcp::model::{
    ArgumentInfo, ClientRequest, CompleteRequest, CompleteRequestParams, CompletionContext,
    GetPromptRequest, GetPromptRequestParams, PromptMessage, Reference, ServerResult,
};
use std::collections::{BTreeMap, HashMap};

/// What an argument completion is for.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CompletionTarget {
    /// An argument of the prompt with this name.
    Prompt(String),
    /// A variable of the resource template with this URI template.
    ResourceTemplate(String),
}

/// A prompt got with its arguments.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PromptConversation {
    /// The prompt's description, when the server gave one.
    pub description: Option<String>,
    /// Its messages, in order (user and assistant).
    pub messages: Vec<Message>,
}

impl McpClient {
    /// `server`'s prompts (`prompts/list`, every page): live when it is
    /// connected, else from its manifest (the server is not started), else
    /// after connecting. [`McpError::NotOffered`] when it has no prompts.
    pub async fn list_prompts(&self, server: &str) -> Result<Vec<McpPrompt>, McpError> {
        let offers = self.connection(server)?.current_offers().await?;
        let prompts = offers.prompts.as_ref();
        prompts
            .map(|p| p.iter().map(Into::into).collect())
            .ok_or_else(|| McpError::NotOffered {
                server: server.to_owned(),
                feature: "prompts",
            })
    }

    /// Gets the prompt `name` of `server` with `arguments` (`prompts/get`):
    /// its messages, to start a run
    /// ([`Agent::send_messages`](crate::Agent::send_messages)) or continue a
    /// session. A required argument that is missing (as the listing says) is
    /// [`McpError::MissingArgument`]; a prompt the listing lacks is
    /// [`McpError::NotListed`].
    pub async fn get_prompt<I, K, V>(
        &self,
        server: &str,
        name: &str,
        arguments: I,
    ) -> Result<PromptConversation, McpError>
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        const METHOD: &str = "prompts/get";
        let arguments: BTreeMap<String, String> = arguments
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        let prompts = self.list_prompts(server).await?;
        let Some(prompt) = prompts.iter().find(|p| p.name == name) else {
            return Err(McpError::NotListed {
                server: server.to_owned(),
                kind: "prompt",
                name: name.to_owned(),
            });
        };
        for arg in &prompt.arguments {
            if arg.required && !arguments.contains_key(&arg.name) {
                return Err(McpError::MissingArgument {
                    server: server.to_owned(),
                    prompt: name.to_owned(),
                    argument: arg.name.clone(),
                });
            }
        }
        let conn = self.connection(server)?;
        let live = conn.live_for_call().await?;
        let timeout = conn.call_timeout();
        let mut params = GetPromptRequestParams::new(name);
        if !arguments.is_empty() {
            params = params.with_arguments(
                arguments
                    .into_iter()
                    .map(|(k, v)| (k, serde_json::Value::String(v)))
                    .collect(),
            );
        }
        let request = ClientRequest::GetPromptRequest(GetPromptRequest::new(params));
        match request::send(server, &live, METHOD, request, timeout).await? {
            ServerResult::GetPromptResult(result) => Ok(PromptConversation {
                description: result.description,
                messages: result.messages.into_iter().map(message_of).collect(),
            }),
            _ => Err(request::unexpected(server, METHOD, timeout)),
        }
    }

    /// Completions for `argument` of `target` with what is typed so far
    /// (`value`), given the arguments already chosen (`context`):
    /// `completion/complete` (at most 100 values, the server's order).
    /// [`McpError::NotOffered`] when the server has no completions.
    pub async fn complete(
        &self,
        server: &str,
        target: CompletionTarget,
        argument: &str,
        value: &str,
        context: BTreeMap<String, String>,
    ) -> Result<Vec<String>, McpError> {
        const METHOD: &str = "completion/complete";
        let conn = self.connection(server)?;
        let live = conn.live_for_call().await?;
        let offered = live
            .peer()
            .peer_info()
            .is_some_and(|i| i.capabilities.completions.is_some());
        if !offered {
            return Err(McpError::NotOffered {
                server: server.to_owned(),
                feature: "completions",
            });
        }
        let reference = match target {
            CompletionTarget::Prompt(name) => Reference::for_prompt(name),
            CompletionTarget::ResourceTemplate(uri) => Reference::for_resource(uri),
        };
        let mut params = CompleteRequestParams::new(reference, ArgumentInfo::new(argument, value));
        if !context.is_empty() {
            let mut c = CompletionContext::default();
            c.arguments = Some(context.into_iter().collect::<HashMap<_, _>>());
            params.context = Some(c);
        }
        let timeout = conn.call_timeout();
        let request = ClientRequest::CompleteRequest(CompleteRequest::new(params));
        match request::send(server, &live, METHOD, request, timeout).await? {
            ServerResult::CompleteResult(result) => Ok(result.completion.values),
            _ => Err(request::unexpected(server, METHOD, timeout)),
        }
    }
}

/// A prompt message as a conversation message: text and images as parts,
/// an embedded resource or link as text.
fn message_of(message: PromptMessage) -> Message {
    let role = match message.role {
        rmcp::model::Role::User => Role::User,
        rmcp::model::Role::Assistant => Role::Assistant,
    };
    let content = serde_json::to_value(&message.content)
        .map(content_from_wire)
        .unwrap_or_else(|e| Content::text(format!("[unreadable prompt content: {e}]")));
    let part = match content {
        Content::Text { text } => Part::Text { text },
        Content::Image { data, mime_type } => Part::Image { data, mime_type },
        other => Part::Text {
            text: other.to_model_text(),
        },
    };
    Message {
        role,
        parts: vec![part],
    }
}
