//! Context compaction: when a conversation passes its context budget, older
//! messages are summarised by a model instead of being left out.
//!
//! Before each model turn of an agent with a [`Compaction`] (and a context
//! budget), the conversation as it would be sent is estimated
//! ([`super::context`]); when it is over the budget:
//!
//! 1. **Tool results are trimmed first**: every tool result before the
//!    latest assistant message longer than
//!    [`tool_result_tokens`](Compaction::tool_result_tokens) is sent
//!    shortened, with a marker ([`TRIM_MARKER`](super::TRIM_MARKER)). If that fits, nothing is
//!    summarised.
//! 2. Otherwise the older messages are **summarised**: the first message
//!    (the task, when it is a user message) is pinned and never summarised;
//!    the newest messages up to [`keep_tokens`](Compaction::keep_tokens)
//!    stay as they are; the messages between go to the summarising model
//!    (tool results trimmed, an earlier summary included) with
//!    [`COMPACTION_PROMPT`]. The cut is never between an assistant's tool
//!    calls and their results. The summary is added to the conversation as a
//!    [`Message::summary`] naming the range it replaces; the replaced
//!    messages stay (in the reply, the session and its store), and requests
//!    carry the summary in their place. [`AgentEvent::Compacted`](crate::AgentEvent::Compacted)
//!    announces it; a stored session's run commits it to its step journal,
//!    so a run resumed after a crash does not ask for it again.
//! 3. If the summarising model fails, the run goes on as without compaction
//!    (the oldest turns are left out), with a `tracing` warning.
//!
//! The summary request's usage counts in the run's usage, cost and budget
//! (it is not a model turn).

use crate::model::Role;
use crate::model::{
    Message, Model, ModelEvent, ModelRef, ModelRequest, ModelSettings, Part, Usage,
};
use crate::tool::search::BYTES_PER_TOKEN;
use futures::StreamExt;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// The system prompt of the summary request (replace it with
/// [`Compaction::prompt`]). The request's one user message is the
/// transcript of the messages to summarise, an earlier summary first.
pub const COMPACTION_PROMPT: &str = "You summarise the earlier part of a conversation between a user and an AI agent that uses tools, so that the agent can continue the work from your summary alone: the messages you summarise will no longer be shown to it.

Keep:
- the user's goals, requests, constraints and preferences, in their words where it matters;
- what was done, decided or found, and why; facts from tool results that later work may need (names, numbers, paths, identifiers, URLs, error messages), exactly;
- what is still open or was about to be done next.

Leave out greetings, repetition and tool output that no longer matters. When the transcript starts with an earlier summary, merge it into yours. Write in the conversation's language, as short paragraphs or bullet points, with no preamble.";

/// The default [`Compaction::tool_result_tokens`].
pub const DEFAULT_TOOL_RESULT_TOKENS: usize = 500;

/// The default [`Compaction::summary_tokens`].
pub const DEFAULT_SUMMARY_TOKENS: u32 = 1_024;

/// Summarise older turns instead of leaving them out when a conversation
/// passes the agent's context budget
/// ([`AgentBuilder::compaction`](crate::AgentBuilder::compaction); spec
/// files: `compaction:`). Needs a
/// [`context_budget`](crate::AgentBuilder::context_budget).
///
/// ```
/// use lousho::Agent;
/// use lousho::agent::Compaction;
/// # fn main() -> Result<(), lousho::agent::BuildError> {
/// let agent = Agent::builder()
///     .model("test")
///     .context_budget(100_000)
///     // Summaries by the agent's own model; `.model("openai/gpt-4o-mini")`
///     // names a cheaper one.
///     .compaction(Compaction::new().keep_tokens(20_000))
///     .build()?;
/// # let _ = agent; Ok(()) }
/// ```
#[derive(Debug, Clone, Default)]
#[must_use]
pub struct Compaction {
    model: Option<ModelRef>,
    keep_tokens: Option<usize>,
    tool_result_tokens: Option<usize>,
    summary_tokens: Option<u32>,
    prompt: Option<String>,
}

impl Compaction {
    /// Compaction by the agent's own model, with the defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// The model that writes the summaries (a `"vendor/model"` string or a
    /// model value, as [`AgentBuilder::model`](crate::AgentBuilder::model)
    /// takes), e.g. a cheaper one than the agent's. Default: the agent's.
    pub fn model(mut self, model: impl Into<ModelRef>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// How many tokens (estimated) of the newest messages stay as they are
    /// when older ones are summarised (default: a quarter of the context
    /// budget). The newest assistant message and what follows it always
    /// stay.
    pub fn keep_tokens(mut self, tokens: usize) -> Self {
        self.keep_tokens = Some(tokens);
        self
    }

    /// Tool results longer than this many tokens (estimated: 4 bytes each)
    /// are trimmed to it before anything is summarised (default
    /// [`DEFAULT_TOOL_RESULT_TOKENS`]).
    pub fn tool_result_tokens(mut self, tokens: usize) -> Self {
        self.tool_result_tokens = Some(tokens);
        self
    }

    /// The most tokens a summary may take (the summary request's
    /// `max_tokens`; default [`DEFAULT_SUMMARY_TOKENS`]).
    pub fn summary_tokens(mut self, tokens: u32) -> Self {
        self.summary_tokens = Some(tokens);
        self
    }

    /// Replaces [`COMPACTION_PROMPT`], the summary request's system prompt.
    pub fn prompt(mut self, prompt: impl Into<String>) -> Self {
        self.prompt = Some(prompt.into());
        self
    }

    /// Checks the settings and builds the summarising model (`None`: the
    /// agent's own), through `model` (the agent builder's resolver, which
    /// records or replays a cassette).
    pub(crate) fn build(
        self,
        model: impl FnOnce(ModelRef) -> Result<Arc<dyn Model>, super::BuildError>,
    ) -> Result<Compactor, super::BuildError> {
        let invalid = |what: &str| super::BuildError::InvalidSetting(what.into());
        if self.keep_tokens == Some(0) {
            return Err(invalid("compaction keep_tokens must be at least 1"));
        }
        if self.tool_result_tokens == Some(0) {
            return Err(invalid("compaction tool_result_tokens must be at least 1"));
        }
        if self.summary_tokens == Some(0) {
            return Err(invalid("compaction summary_tokens must be at least 1"));
        }
        Ok(Compactor {
            model: self.model.map(model).transpose()?,
            keep_tokens: self.keep_tokens,
            tool_result_bytes: self
                .tool_result_tokens
                .unwrap_or(DEFAULT_TOOL_RESULT_TOKENS)
                .saturating_mul(BYTES_PER_TOKEN),
            summary_tokens: self.summary_tokens.unwrap_or(DEFAULT_SUMMARY_TOKENS),
            prompt: self.prompt.unwrap_or_else(|| COMPACTION_PROMPT.to_owned()),
        })
    }
}

/// An agent's compaction, built.
pub(crate) struct Compactor {
    /// The summarising model; `None`: the agent's.
    pub(crate) model: Option<Arc<dyn Model>>,
    keep_tokens: Option<usize>,
    /// Tool results longer than this are trimmed.
    pub(crate) tool_result_bytes: usize,
    summary_tokens: u32,
    prompt: String,
}

/// What to summarise: positions in the conversation.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Plan {
    /// The summary's `from`: after the pinned first message.
    pub(crate) from: usize,
    /// The first message summarised now (after an earlier summary's range).
    pub(crate) start: usize,
    /// The first message kept (the summary's `to`).
    pub(crate) cut: usize,
}

/// Why a summary was not made.
pub(crate) enum SummaryError {
    /// The run was cancelled.
    Cancelled,
    /// The model failed (or wrote nothing); the partial usage.
    Failed(String, Usage),
}

impl Compactor {
    /// What to summarise before the next request, or `None`: the
    /// conversation fits `budget` (tool results trimmed if need be), or
    /// nothing can be summarised. `fixed`: the system prompt's and the
    /// tool definitions' estimated tokens.
    pub(crate) fn plan(&self, messages: &[Message], fixed: usize, budget: usize) -> Option<Plan> {
        let view = super::context::view(messages);
        let sent = view.as_deref().unwrap_or(messages);
        if fixed + estimate(sent) <= budget {
            return None;
        }
        let mut trimmed = sent.to_vec();
        super::context::trim_older_tool_results(&mut trimmed, self.tool_result_bytes);
        if fixed + estimate(&trimmed) <= budget {
            return None;
        }
        let previous = super::context::latest_summary(messages);
        let pinned = usize::from(
            messages
                .first()
                .is_some_and(|m| m.role == Role::User && m.as_summary().is_none()),
        );
        let (from, start) = match previous {
            Some((_, s)) => {
                let to = usize::try_from(s.to).unwrap_or(usize::MAX);
                let from = usize::try_from(s.from).unwrap_or(0).min(pinned);
                (from, to.clamp(pinned, messages.len()))
            }
            None => (pinned, pinned),
        };
        let keep = self.keep_tokens.unwrap_or(budget / 4);
        // The newest messages' estimate from each position to the end.
        let mut tail = 0;
        let mut cut = None;
        for i in (start + 1..messages.len()).rev() {
            let m = &messages[i];
            if m.as_summary().is_some() {
                continue;
            }
            tail += super::context::estimate_message(m);
            // A tool message answers the assistant message before it: the
            // cut goes before that one, never between them.
            if m.role == Role::Tool {
                continue;
            }
            if cut.is_some() && tail > keep {
                break;
            }
            cut = Some(i);
        }
        let cut = cut?;
        // Only earlier summaries between: nothing new to summarise.
        messages[start..cut]
            .iter()
            .any(|m| m.as_summary().is_none())
            .then_some(Plan { from, start, cut })
    }

    /// The summary request for `plan`: the prompt, and the transcript of
    /// the messages (tool results trimmed) after the earlier summary.
    pub(crate) fn request(&self, messages: &[Message], plan: &Plan) -> ModelRequest {
        let previous = super::context::latest_summary(messages).map(|(_, s)| s.text.as_str());
        let mut part: Vec<Message> = messages[plan.start..plan.cut]
            .iter()
            .filter(|m| m.as_summary().is_none())
            .cloned()
            .collect();
        super::context::trim_tool_results(&mut part, self.tool_result_bytes);
        let settings = ModelSettings {
            max_tokens: Some(self.summary_tokens),
            ..ModelSettings::default()
        };
        ModelRequest::new(vec![Message::user(transcript(previous, &part))])
            .system(self.prompt.clone())
            .settings(settings)
    }

    /// Asks `model` for the summary: its text and usage.
    pub(crate) async fn summarise(
        model: &dyn Model,
        request: &ModelRequest,
        record_content: bool,
        price: Option<crate::model::Price>,
        cancel: &CancellationToken,
    ) -> Result<(String, Usage), SummaryError> {
        let mut stream = crate::telemetry::traced_stream(
            model.name(),
            request,
            record_content,
            price,
            model.stream(request),
        );
        let mut text = String::new();
        let mut usage = Usage::default();
        loop {
            let event = tokio::select! {
                biased;
                _ = cancel.cancelled() => return Err(SummaryError::Cancelled),
                e = stream.next() => e,
            };
            match event {
                None => break,
                Some(Err(e)) => return Err(SummaryError::Failed(e.to_string(), usage)),
                Some(Ok(ModelEvent::TextDelta(t))) => text.push_str(&t),
                Some(Ok(ModelEvent::Usage(u))) => usage += u,
                Some(Ok(_)) => {}
            }
        }
        let text = text.trim();
        if text.is_empty() {
            return Err(SummaryError::Failed(
                "the model answered with no text".into(),
                usage,
            ));
        }
        Ok((text.to_owned(), usage))
    }
}

fn estimate(messages: &[Message]) -> usize {
    messages.iter().map(super::context::estimate_message).sum()
}

/// The messages as a plain-text transcript for the summarising model (no
/// tool calls to pair up: the request has no tools).
fn transcript(previous: Option<&str>, messages: &[Message]) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    if let Some(previous) = previous {
        let _ = writeln!(out, "Earlier summary:\n{previous}\n");
    }
    out.push_str("Transcript:\n");
    for message in messages {
        let who = match message.role {
            Role::User => "User",
            Role::Assistant => "Assistant",
            Role::Tool => "Tool",
        };
        for part in &message.parts {
            let _ = match part {
                Part::Text { text } if text.is_empty() => Ok(()),
                Part::Text { text } => writeln!(out, "{who}: {text}"),
                Part::Image { mime_type, .. } => writeln!(out, "{who}: [an image, {mime_type}]"),
                Part::ToolCall(call) => writeln!(
                    out,
                    "Assistant called the tool `{}` with {}",
                    call.name, call.arguments
                ),
                Part::ToolResult(result) => writeln!(
                    out,
                    "Tool `{}` {}: {}",
                    result.name,
                    if result.output.is_error {
                        "failed"
                    } else {
                        "returned"
                    },
                    result.output.to_model_text()
                ),
                _ => Ok(()),
            };
        }
    }
    out.push_str("\nWrite the summary of the conversation above.");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::context::{TRIM_MARKER, trimmed};
    use crate::model::{ToolCall, ToolResult};
    use crate::tool::ToolOutput;
    use serde_json::json;

    fn compactor(keep: usize) -> Compactor {
        Compaction::new()
            .keep_tokens(keep)
            .tool_result_tokens(10)
            .build(|_| unreachable!())
            .unwrap()
    }

    fn call(id: &str) -> Message {
        Message {
            role: Role::Assistant,
            parts: vec![Part::ToolCall(ToolCall {
                id: id.into(),
                name: "t".into(),
                arguments: json!({}),
            })],
        }
    }

    fn result(id: &str, text: &str) -> Message {
        Message::tool_results([ToolResult {
            call_id: id.into(),
            name: "t".into(),
            output: ToolOutput::text(text),
        }])
    }

    #[test]
    fn the_cut_never_separates_a_call_from_its_result() {
        let big = "x".repeat(2000);
        let messages = vec![
            Message::user("task"),
            call("1"),
            result("1", &big),
            Message::assistant(big.clone()),
            call("2"),
            result("2", &big),
        ];
        let plan = compactor(10).plan(&messages, 0, 100).unwrap();
        assert_eq!(
            plan,
            Plan {
                from: 1,
                start: 1,
                cut: 4
            },
            "before call 2, the newest"
        );
    }

    #[test]
    fn a_conversation_that_fits_once_tool_results_are_trimmed_is_not_summarised() {
        let messages = vec![
            Message::user("task"),
            call("1"),
            result("1", &"x".repeat(4000)),
            Message::assistant("done"),
        ];
        assert!(compactor(10).plan(&messages, 0, 200).is_none());
        assert!(compactor(10).plan(&messages, 0, 50).is_some());
    }

    #[test]
    fn a_trimmed_result_keeps_its_head_and_says_how_much_went() {
        let out = trimmed(&ToolOutput::text("héllo world"), 2).unwrap();
        assert_eq!(
            out.to_model_text(),
            format!("h\n{}", TRIM_MARKER.replace("{}", "11"))
        );
        assert!(trimmed(&ToolOutput::text("short"), 10).is_none());
    }
}
