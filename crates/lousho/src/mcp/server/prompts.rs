//! Prompts a server offers (`prompts/list`, `prompts/get`): named message
//! templates with typed arguments ([`define_prompt`]), built like tools.

use super::completion::{Completer, CompletionRequest, completer};
use crate::tool::{Content, ToolContext, schema_for};
use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::fmt;
use std::future::Future;
use std::sync::Arc;

/// Who a prompt message is from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptRole {
    /// The user.
    User,
    /// The assistant (the model).
    Assistant,
}

/// One message of a prompt.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PromptMessage {
    /// Who it is from.
    pub role: PromptRole,
    /// What it holds (text, an image, audio, an embedded resource).
    pub content: Content,
}

impl PromptMessage {
    /// A message from `role`.
    pub fn new(role: PromptRole, content: Content) -> Self {
        Self { role, content }
    }

    /// A text message from the user.
    pub fn user(text: impl Into<String>) -> Self {
        Self::new(PromptRole::User, Content::text(text))
    }

    /// A text message from the assistant.
    pub fn assistant(text: impl Into<String>) -> Self {
        Self::new(PromptRole::Assistant, Content::text(text))
    }
}

/// Why a prompt could not be got.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PromptError {
    /// The arguments do not fit the prompt's (MCP's `-32602`).
    #[error(
        "the arguments of prompt `{prompt}` do not fit: {message}; prompts/list shows its arguments"
    )]
    InvalidArguments {
        /// The prompt's name.
        prompt: String,
        /// What is wrong, naming the argument.
        message: String,
    },
    /// Making the messages failed (the prompt's own error).
    #[error("{0}")]
    Failed(String),
}

/// What a prompt closure may return: `String` or `&'static str` (one user
/// message), a [`PromptMessage`], a `Vec` of them, or `Result<T, E>` of those
/// with any error (a [`PromptError`] passes through, any other becomes
/// [`PromptError::Failed`]).
pub trait IntoPromptMessages: Send {
    /// Converts into the prompt's messages.
    fn into_prompt_messages(self) -> Result<Vec<PromptMessage>, PromptError>;
}

impl IntoPromptMessages for String {
    fn into_prompt_messages(self) -> Result<Vec<PromptMessage>, PromptError> {
        Ok(vec![PromptMessage::user(self)])
    }
}

impl IntoPromptMessages for &'static str {
    fn into_prompt_messages(self) -> Result<Vec<PromptMessage>, PromptError> {
        Ok(vec![PromptMessage::user(self)])
    }
}

impl IntoPromptMessages for PromptMessage {
    fn into_prompt_messages(self) -> Result<Vec<PromptMessage>, PromptError> {
        Ok(vec![self])
    }
}

impl IntoPromptMessages for Vec<PromptMessage> {
    fn into_prompt_messages(self) -> Result<Vec<PromptMessage>, PromptError> {
        Ok(self)
    }
}

impl<T, E> IntoPromptMessages for Result<T, E>
where
    T: IntoPromptMessages,
    E: Into<Box<dyn std::error::Error + Send + Sync>> + Send,
{
    fn into_prompt_messages(self) -> Result<Vec<PromptMessage>, PromptError> {
        match self {
            Ok(v) => v.into_prompt_messages(),
            Err(e) => match e.into().downcast::<PromptError>() {
                Ok(own) => Err(*own),
                Err(other) => Err(PromptError::Failed(other.to_string())),
            },
        }
    }
}

/// One argument as `prompts/list` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PromptArgument {
    pub(crate) name: String,
    pub(crate) description: Option<String>,
    pub(crate) required: bool,
}

/// The code behind a prompt: the arguments (strings by name) and the
/// request's context in, messages out.
pub(crate) type PromptHandler = Arc<
    dyn Fn(
            Map<String, Value>,
            ToolContext,
        ) -> BoxFuture<'static, Result<Vec<PromptMessage>, PromptError>>
        + Send
        + Sync,
>;

/// A prompt: [`define_prompt`] or [`define_prompt_with_context`].
#[derive(Clone)]
#[must_use]
pub struct DefinedPrompt {
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) icons: Vec<crate::tool::Icon>,
    pub(crate) description: String,
    pub(crate) arguments: Vec<PromptArgument>,
    pub(crate) handler: PromptHandler,
    pub(crate) completer: Option<Completer>,
}

/// Defines a prompt from an async closure over typed arguments.
///
/// The arguments type derives `Deserialize` and `JsonSchema` like a tool's
/// input (through [`#[lousho::tool_input]`](macro@crate::tool_input)); its
/// fields are the prompt's arguments (MCP sends them as strings, so fields
/// are `String`, `Option<String>` for optional ones), their doc comments
/// the arguments' descriptions. Arguments that do not fit are the client's
/// error (`-32602`) naming the field.
///
/// ```
/// use lousho::mcp::{PromptMessage, define_prompt};
/// use serde::Deserialize;
///
/// #[lousho::tool_input]
/// #[derive(Deserialize)]
/// struct Review {
///     /// The language of the code.
///     language: String,
///     /// What to focus on.
///     focus: Option<String>,
/// }
///
/// let review = define_prompt("review", "Review code", |args: Review| async move {
///     vec![PromptMessage::user(format!(
///         "Review this {} code, focusing on {}.",
///         args.language,
///         args.focus.as_deref().unwrap_or("correctness")
///     ))]
/// });
/// ```
pub fn define_prompt<A, F, Fut, R>(
    name: impl Into<String>,
    description: impl Into<String>,
    f: F,
) -> DefinedPrompt
where
    A: DeserializeOwned + JsonSchema + Send + 'static,
    F: Fn(A) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
    R: IntoPromptMessages,
{
    define_prompt_with_context(name, description, move |args: A, _ctx| f(args))
}

/// Like [`define_prompt`], for closures that also take the request's
/// [`ToolContext`].
pub fn define_prompt_with_context<A, F, Fut, R>(
    name: impl Into<String>,
    description: impl Into<String>,
    f: F,
) -> DefinedPrompt
where
    A: DeserializeOwned + JsonSchema + Send + 'static,
    F: Fn(A, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
    R: IntoPromptMessages,
{
    let name = name.into();
    let prompt = name.clone();
    let f = Arc::new(f);
    let handler: PromptHandler =
        Arc::new(move |args, ctx| {
            match serde_path_to_error::deserialize::<_, A>(Value::Object(args)) {
                Ok(args) => {
                    let fut = f(args, ctx);
                    Box::pin(async move { fut.await.into_prompt_messages() })
                }
                Err(e) => {
                    let message = match e.path().to_string().as_str() {
                        "." | "" => e.inner().to_string(),
                        path => format!("`{path}`: {}", e.inner()),
                    };
                    let prompt = prompt.clone();
                    Box::pin(async move { Err(PromptError::InvalidArguments { prompt, message }) })
                }
            }
        });
    DefinedPrompt {
        name,
        title: None,
        icons: Vec::new(),
        description: description.into(),
        arguments: arguments_of(&schema_for::<A>()),
        handler,
        completer: None,
    }
}

impl DefinedPrompt {
    /// A prompt whose arguments are known only at run time (a spec file's
    /// `serve.prompts`): each argument's name, description and whether it
    /// is required, and the code that makes the messages (it checks the
    /// arguments itself).
    #[cfg_attr(not(feature = "spec"), allow(dead_code))]
    pub(crate) fn from_parts(
        name: String,
        description: String,
        arguments: impl IntoIterator<Item = (String, Option<String>, bool)>,
        handler: PromptHandler,
    ) -> Self {
        Self {
            name,
            title: None,
            icons: Vec::new(),
            description,
            arguments: arguments
                .into_iter()
                .map(|(name, description, required)| PromptArgument {
                    name,
                    description,
                    required,
                })
                .collect(),
            handler,
            completer: None,
        }
    }
}

/// A prompt's arguments from its arguments type's schema: each property,
/// its description, whether it is required.
fn arguments_of(schema: &Value) -> Vec<PromptArgument> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    properties
        .iter()
        .map(|(name, property)| PromptArgument {
            name: name.clone(),
            description: property
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_owned),
            required: required.contains(&name.as_str()),
        })
        .collect()
}

impl DefinedPrompt {
    /// The prompt's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Sets the display title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Adds an icon clients may show next to it.
    pub fn icon(mut self, icon: crate::tool::Icon) -> Self {
        self.icons.push(icon);
        self
    }

    /// Suggests values for an argument while a client's user types it
    /// (`completion/complete` with a `ref/prompt`).
    pub fn complete<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(CompletionRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Vec<String>> + Send + 'static,
    {
        self.completer = Some(completer(f));
        self
    }
}

impl fmt::Debug for DefinedPrompt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DefinedPrompt")
            .field("name", &self.name)
            .field("arguments", &self.arguments)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Args {
        /// The first.
        arg1: String,
        arg2: Option<String>,
    }

    #[tokio::test]
    async fn arguments_come_from_the_schema_and_are_checked() {
        let p = define_prompt("p", "d", |a: Args| async move {
            format!("{} {}", a.arg1, a.arg2.unwrap_or_default())
        });
        assert_eq!(
            p.arguments,
            [
                PromptArgument {
                    name: "arg1".into(),
                    description: Some("The first.".into()),
                    required: true
                },
                PromptArgument {
                    name: "arg2".into(),
                    description: None,
                    required: false
                },
            ]
        );
        let mut args = Map::new();
        args.insert("arg1".into(), "x".into());
        let out = (p.handler)(args, ToolContext::new("1")).await.unwrap();
        assert_eq!(out, [PromptMessage::user("x ")]);
        let err = (p.handler)(Map::new(), ToolContext::new("2"))
            .await
            .unwrap_err();
        assert!(
            matches!(&err, PromptError::InvalidArguments { message, .. } if message.contains("arg1")),
            "{err}"
        );
    }
}
