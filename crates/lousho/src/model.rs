//! Models: the [`Model`] trait, messages, and the models that ship with lousho.
//!
//! A model is streaming-first: [`Model::stream`] yields [`ModelEvent`]s (text
//! deltas, complete tool calls, usage, the finish reason) and the agent loop
//! collects them. Dropping the stream cancels the request.
//!
//! Providers over HTTP: [`OpenAi`] (OpenAI Chat Completions, and through it
//! OpenRouter, Ollama and any OpenAI-compatible server) and [`Anthropic`]
//! (Messages API). [`resolve_model`] picks one from a `"vendor/model"` string.
//!
//! [`testing::TestModel`] and [`testing::ScriptedModel`] are deterministic models for testing
//! your own agents without a network or an API key.

mod anthropic;
mod error;
mod event;
mod message;
mod openai;
mod output;
mod price;
mod provider;
mod request;
mod resolve;
/// Public as `lousho::agent::{RequestUsage, ToolCallRecord}`.
pub(crate) mod run_record;
mod sampling;
pub mod testing;

pub use anthropic::{
    ANTHROPIC_BASE_URL, ANTHROPIC_VERSION, Anthropic, AnthropicBuilder, DEFAULT_MAX_TOKENS,
};
pub use error::ModelError;
pub use event::{FinishReason, ModelEvent, Usage};
pub use message::{Message, Part, ProviderBlock, Role, Summary, ToolCall, ToolResult};
pub use openai::{OLLAMA_BASE_URL, OPENAI_BASE_URL, OPENROUTER_BASE_URL, OpenAi, OpenAiBuilder};
pub use output::OutputSchema;
pub(crate) use output::answer_json;
pub use price::{Price, PriceTable};
#[cfg(feature = "spec")]
pub(crate) use provider::process_env;
pub use provider::{ApiKey, RateLimits, RetryNotice, RetryPolicy, SchemaProfile};
pub use request::{
    ModelRequest, ModelSettings, PromptCache, ReasoningEffort, Thinking, ToolDefinition,
};
#[cfg(feature = "spec")]
pub(crate) use resolve::resolve_model_at;
pub use resolve::{ModelFactory, ModelRef, resolve_model, resolve_model_with_env};
pub(crate) use sampling::with_client as with_sampling_client;
pub use sampling::{SAMPLING_MODEL, SamplingModel};

use futures::stream::BoxStream;

/// The stream a model returns.
pub type ModelStream = BoxStream<'static, Result<ModelEvent, ModelError>>;

/// A language model the agent loop can drive.
///
/// `stream` must not block: do the request's synchronous preparation (building
/// the body) up front and the I/O inside the returned stream. Errors are items
/// of the stream. Dropping the stream must cancel the request.
pub trait Model: Send + Sync + 'static {
    /// `"vendor/model"`, for logs and errors.
    fn name(&self) -> &str;

    /// Starts one model turn.
    fn stream(&self, request: &ModelRequest) -> ModelStream;

    /// Starts one model turn for a model list in which another model
    /// follows this one ([`AgentBuilder::models`](crate::AgentBuilder::models)):
    /// an error that [fails over at once](ModelError::fails_over_at_once)
    /// (a rate limit, an overload, a too-long conversation) is returned
    /// without the retry policy's retries, so the next model is asked at
    /// once. The default is [`stream`](Self::stream).
    fn stream_with_fallback(&self, request: &ModelRequest) -> ModelStream {
        self.stream(request)
    }

    /// The model's context window in tokens, when known (tool search's
    /// `auto` mode compares the tool definitions with it; unknown counts as
    /// [`DEFAULT_CONTEXT_WINDOW`](crate::tool::search::DEFAULT_CONTEXT_WINDOW)).
    fn context_window(&self) -> Option<usize> {
        None
    }

    /// Whether the provider searches deferred tools itself: the agent then
    /// sends every definition, the deferred ones with
    /// [`ToolDefinition::defer_loading`], and no `tool_search` tool of its
    /// own. Default false (client-side search).
    fn native_tool_search(&self) -> bool {
        false
    }
}
