use super::Message;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;

/// A tool as the model sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    /// The name to call it by.
    pub name: String,
    /// What it does.
    pub description: String,
    /// JSON Schema of its input.
    pub input_schema: Value,
    /// Sent for a provider's native tool search to find (Anthropic's
    /// `defer_loading: true`), not loaded into the model's context; only
    /// set for models whose [`Model::native_tool_search`](crate::Model::native_tool_search)
    /// is true.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub defer_loading: bool,
}

impl ToolDefinition {
    /// A definition (not deferred).
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
    ) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            input_schema,
            defer_loading: false,
        }
    }
}

/// Sampling settings for one request.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ModelSettings {
    /// Most tokens to generate (providers that require it use their default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// Whether the request marks its stable prefix for the provider's
    /// prompt cache (default [`PromptCache::Auto`]).
    #[serde(default, skip_serializing_if = "PromptCache::is_auto")]
    pub prompt_cache: PromptCache,
    /// How the model reasons before it answers (default
    /// [`Thinking::Default`]: nothing is sent).
    #[serde(default, skip_serializing_if = "Thinking::is_default")]
    pub thinking: Thinking,
    /// A JSON Schema the final answer must match, sent as the provider's
    /// native structured output (OpenAI `response_format` with a strict
    /// `json_schema`; Anthropic `output_config.format`); tools stay
    /// callable before the answer. Usually set through
    /// [`RunRequest::output`](crate::agent::RunRequest::output), which also
    /// checks the answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<super::OutputSchema>,
}

/// Reasoning before the answer, for models that do it. See
/// docs/providers.md ("Thinking and reasoning").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Thinking {
    /// The provider's default: no thinking or reasoning parameter is sent.
    #[default]
    Default,
    /// Anthropic extended thinking with this budget of tokens (at least
    /// 1024; `thinking: {type: "enabled", budget_tokens}`). Not sent to
    /// Chat Completions servers, which take an effort instead.
    Budget(u32),
    /// A reasoning effort: `reasoning_effort` for Chat Completions (OpenAI's
    /// reasoning models, and compatible servers that take it); for Anthropic,
    /// adaptive thinking (`thinking: {type: "adaptive"}`) with
    /// `output_config.effort` (Claude 4.6 and later).
    Effort(ReasoningEffort),
}

impl Thinking {
    /// Whether this is [`Thinking::Default`].
    pub fn is_default(&self) -> bool {
        matches!(self, Thinking::Default)
    }
}

/// How hard a model reasons.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ReasoningEffort {
    /// As little as possible (OpenAI `minimal`; Anthropic `low`).
    Minimal,
    /// Little.
    Low,
    /// Some.
    Medium,
    /// Much.
    High,
}

impl ReasoningEffort {
    /// The value as OpenAI spells it.
    pub fn as_str(&self) -> &'static str {
        match self {
            ReasoningEffort::Minimal => "minimal",
            ReasoningEffort::Low => "low",
            ReasoningEffort::Medium => "medium",
            ReasoningEffort::High => "high",
        }
    }
}

/// Prompt caching, for providers that cache only what the request marks
/// (Anthropic's `cache_control` breakpoints). Providers that cache on their
/// own (OpenAI) report cache reads either way. See docs/providers.md.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum PromptCache {
    /// Marks where it pays: on Anthropic, the tool definitions, the system
    /// prompt and the growing conversation (the default).
    #[default]
    Auto,
    /// Marks nothing: every request is billed at the full input price.
    Off,
}

impl PromptCache {
    /// Whether this is [`PromptCache::Auto`].
    pub fn is_auto(&self) -> bool {
        matches!(self, PromptCache::Auto)
    }
}

impl ModelSettings {
    /// Sets `max_tokens`.
    #[must_use]
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// Sets the temperature.
    #[must_use]
    pub fn temperature(mut self, temperature: f32) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// Sets thinking: a budget (`Thinking::Budget(8000)`) or an effort
    /// (`Thinking::Effort(ReasoningEffort::High)`).
    #[must_use]
    pub fn thinking(mut self, thinking: Thinking) -> Self {
        self.thinking = thinking;
        self
    }

    /// Sets the schema the final answer must match.
    #[must_use]
    pub fn output(mut self, schema: super::OutputSchema) -> Self {
        self.output = Some(schema);
        self
    }

    /// Sets prompt caching ([`PromptCache::Off`] turns it off).
    #[must_use]
    pub fn prompt_cache(mut self, cache: PromptCache) -> Self {
        self.prompt_cache = cache;
        self
    }
}

/// One model turn's input.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ModelRequest {
    /// The system prompt.
    pub system: Option<String>,
    /// The conversation so far.
    pub messages: Vec<Message>,
    /// The tools the model may call.
    pub tools: Arc<[ToolDefinition]>,
    /// Sampling settings.
    pub settings: ModelSettings,
}

impl ModelRequest {
    /// A request with messages only.
    pub fn new(messages: Vec<Message>) -> Self {
        Self {
            system: None,
            messages,
            tools: Arc::from(Vec::new()),
            settings: ModelSettings::default(),
        }
    }

    /// Sets the system prompt.
    #[must_use]
    pub fn system(mut self, system: impl Into<String>) -> Self {
        self.system = Some(system.into());
        self
    }

    /// Sets the tools.
    #[must_use]
    pub fn tools(mut self, tools: impl Into<Arc<[ToolDefinition]>>) -> Self {
        self.tools = tools.into();
        self
    }

    /// Sets the settings.
    #[must_use]
    pub fn settings(mut self, settings: ModelSettings) -> Self {
        self.settings = settings;
        self
    }
}
