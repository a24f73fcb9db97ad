use crate::tool::ToolOutput;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Who said it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The user (or the application speaking for them).
    User,
    /// The model.
    Assistant,
    /// Tool results going back to the model.
    Tool,
}

/// A model's request to call a tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The call's id (the provider's, or one the agent made up).
    pub id: String,
    /// The tool's name as the model sees it.
    pub name: String,
    /// The arguments (a JSON object for well-behaved models).
    pub arguments: Value,
}

/// A tool's result, for the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    /// The id of the call this answers.
    pub call_id: String,
    /// The tool's name.
    pub name: String,
    /// What the tool returned.
    pub output: ToolOutput,
}

/// A block only one provider understands, kept in the conversation so it
/// goes back to that provider verbatim in later requests (Anthropic's
/// `server_tool_use` and `tool_search_tool_result` of its native tool
/// search); other providers leave it out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProviderBlock {
    /// The provider it came from (`anthropic`).
    pub provider: String,
    /// The block as the provider sent it.
    pub block: Value,
}

/// One part of a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Part {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64-encoded.
    Image {
        /// Base64 data.
        data: String,
        /// MIME type.
        mime_type: String,
    },
    /// A tool call (assistant messages).
    ToolCall(ToolCall),
    /// A tool result (tool messages).
    ToolResult(ToolResult),
    /// A provider's own block (assistant messages).
    Provider(ProviderBlock),
    /// A summary of earlier messages, written by the agent's context
    /// compaction (see [`Compaction`](crate::agent::Compaction)): kept in
    /// the conversation after the messages it was made from, which stay
    /// too; requests carry the summary in their place.
    Summary(Summary),
}

/// A summary of a range of a conversation's messages, made when the
/// conversation outgrew its context budget. The messages it replaces stay
/// in the conversation (and the session store); requests to the model
/// carry this summary instead of them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// The summary.
    pub text: String,
    /// The first message it replaces: its position in the conversation
    /// (the session's history), from 0.
    pub from: u64,
    /// The position after the last message it replaces (`from..to`, the
    /// end excluded). A summary made on top of an earlier one replaces
    /// that one's range too (`from` stays).
    pub to: u64,
    /// The model that wrote it (`"vendor/model"`).
    pub model: String,
}

impl Summary {
    /// The messages it replaces as people count them (from 1):
    /// `"messages 2–7"`, or `"message 2"` for one.
    ///
    /// ```
    /// use lousho::model::Summary;
    /// let s = Summary { text: "…".into(), from: 1, to: 7, model: "test".into() };
    /// assert_eq!(s.replaced(), "messages 2–7");
    /// ```
    pub fn replaced(&self) -> String {
        let first = self.from.saturating_add(1);
        if self.to > first {
            format!("messages {first}–{}", self.to)
        } else {
            format!("message {first}")
        }
    }
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who said it.
    pub role: Role,
    /// What was said.
    pub parts: Vec<Part>,
}

impl Message {
    /// A user message with text.
    pub fn user(text: impl Into<String>) -> Self {
        Self {
            role: Role::User,
            parts: vec![Part::Text { text: text.into() }],
        }
    }

    /// An assistant message with text.
    pub fn assistant(text: impl Into<String>) -> Self {
        Self {
            role: Role::Assistant,
            parts: vec![Part::Text { text: text.into() }],
        }
    }

    /// A tool message carrying results.
    pub fn tool_results(results: impl IntoIterator<Item = ToolResult>) -> Self {
        Self {
            role: Role::Tool,
            parts: results.into_iter().map(Part::ToolResult).collect(),
        }
    }

    /// A summary message (role user, one [`Part::Summary`]), as context
    /// compaction keeps it in the conversation.
    pub fn summary(summary: Summary) -> Self {
        Self {
            role: Role::User,
            parts: vec![Part::Summary(summary)],
        }
    }

    /// The summary this message holds, if it is a summary message.
    pub fn as_summary(&self) -> Option<&Summary> {
        self.parts.iter().find_map(|p| match p {
            Part::Summary(s) => Some(s),
            _ => None,
        })
    }

    /// The text parts, concatenated.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for part in &self.parts {
            if let Part::Text { text } = part {
                out.push_str(text);
            }
        }
        out
    }

    /// The tool calls in this message.
    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCall> {
        self.parts.iter().filter_map(|p| match p {
            Part::ToolCall(c) => Some(c),
            _ => None,
        })
    }

    /// The tool results in this message.
    pub fn tool_results_iter(&self) -> impl Iterator<Item = &ToolResult> {
        self.parts.iter().filter_map(|p| match p {
            Part::ToolResult(r) => Some(r),
            _ => None,
        })
    }
}

impl From<&str> for Message {
    fn from(text: &str) -> Self {
        Message::user(text)
    }
}

impl From<String> for Message {
    fn from(text: String) -> Self {
        Message::user(text)
    }
}

impl From<&String> for Message {
    fn from(text: &String) -> Self {
        Message::user(text.as_str())
    }
}
