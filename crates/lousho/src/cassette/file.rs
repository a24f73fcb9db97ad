//! The cassette file: JSON Lines, one entry a line, a header first. Entries
//! are in the order they completed: the run's input, each model request
//! (normalised) with its streamed events, each MCP exchange of each server,
//! the outcome last.

use super::error::CassetteError;
use crate::model::{FinishReason, Message, ModelEvent, ProviderBlock, ToolCall, Usage};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::io::Write;
use std::path::Path;

/// The cassette format this lousho writes and reads.
pub const CASSETTE_FORMAT: u32 = 1;

/// One line of a cassette.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum Entry {
    /// The first line.
    Header(Header),
    /// The messages the run was sent.
    Input(Input),
    /// One model request and its streamed answer.
    Model(ModelExchange),
    /// One MCP request of one server and its answer.
    Mcp(McpExchange),
    /// A notification a server sent outside any request.
    McpNotification(McpNotice),
    /// What the run ended with.
    Outcome(Outcome),
}

/// The header line.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Header {
    pub(crate) format: u32,
    /// The lousho version that wrote it.
    pub(crate) lousho: String,
}

/// The run's input.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Input {
    pub(crate) messages: Vec<Message>,
}

/// One model request (normalised: system prompt, messages, tools,
/// settings) and the events its stream yielded.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ModelExchange {
    /// The model's name (`openai/gpt-4o-mini`).
    pub(crate) model: String,
    pub(crate) request: Value,
    pub(crate) events: Vec<RecordedEvent>,
    /// How long the stream took (kept, not replayed).
    pub(crate) ms: u64,
}

/// A model event as the cassette keeps it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum RecordedEvent {
    Text(String),
    Thinking(String),
    ToolCall(ToolCall),
    Usage(Usage),
    Finished(FinishReason),
    Provider(ProviderBlock),
}

impl RecordedEvent {
    /// The event to keep, if it is one (every kind but a rate limiter's
    /// wait, which a replay does not have).
    pub(crate) fn of(event: &ModelEvent) -> Option<Self> {
        Some(match event {
            ModelEvent::Throttled(_) => return None,
            ModelEvent::TextDelta(t) => RecordedEvent::Text(t.clone()),
            ModelEvent::ThinkingDelta(t) => RecordedEvent::Thinking(t.clone()),
            ModelEvent::ToolCall(c) => RecordedEvent::ToolCall(c.clone()),
            ModelEvent::Usage(u) => RecordedEvent::Usage(*u),
            ModelEvent::Finished(f) => RecordedEvent::Finished(f.clone()),
            ModelEvent::Provider(p) => RecordedEvent::Provider(p.clone()),
        })
    }

    /// The event to replay.
    pub(crate) fn to_event(&self) -> ModelEvent {
        match self {
            RecordedEvent::Text(t) => ModelEvent::TextDelta(t.clone()),
            RecordedEvent::Thinking(t) => ModelEvent::ThinkingDelta(t.clone()),
            RecordedEvent::ToolCall(c) => ModelEvent::ToolCall(c.clone()),
            RecordedEvent::Usage(u) => ModelEvent::Usage(*u),
            RecordedEvent::Finished(f) => ModelEvent::Finished(f.clone()),
            RecordedEvent::Provider(p) => ModelEvent::Provider(p.clone()),
        }
    }
}

/// One MCP request (its id left out) and the server's answer, with the
/// notifications the server sent while it was open.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct McpExchange {
    /// The server's name in the run.
    pub(crate) server: String,
    pub(crate) method: String,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub(crate) params: Value,
    /// The result, for an answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) result: Option<Value>,
    /// The JSON-RPC error, for a refusal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<Value>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) notifications: Vec<Value>,
    /// How long the answer took (kept, not replayed).
    pub(crate) ms: u64,
}

/// A server's notification outside any request (a list change).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct McpNotice {
    pub(crate) server: String,
    pub(crate) message: Value,
}

/// What a run ended with: the reply's text, the tool calls it made and the
/// tokens it used. [`AgentBuilder::replay`](crate::AgentBuilder::replay)
/// compares a replayed run's with the recorded one.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Outcome {
    /// The reply's text.
    pub text: String,
    /// The tool calls made, in order (their ids left out).
    pub tool_calls: Vec<OutcomeCall>,
    /// The tokens the run used.
    pub usage: Usage,
}

/// One tool call of an [`Outcome`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutcomeCall {
    /// The tool's name as the model called it.
    pub name: String,
    /// Its arguments.
    pub arguments: Value,
}

impl Outcome {
    /// An outcome: the reply's text, its tool calls, its tokens.
    pub fn new<'a>(
        text: impl Into<String>,
        tool_calls: impl IntoIterator<Item = &'a ToolCall>,
        usage: Usage,
    ) -> Self {
        Self {
            text: text.into(),
            tool_calls: tool_calls
                .into_iter()
                .map(|c| OutcomeCall {
                    name: c.name.clone(),
                    arguments: c.arguments.clone(),
                })
                .collect(),
            usage,
        }
    }
}

/// Reads a cassette's entries (the header checked and left out).
pub(crate) fn read(path: &Path) -> Result<Vec<Entry>, CassetteError> {
    let text = std::fs::read_to_string(path).map_err(|e| CassetteError::io(path, e))?;
    let parse = |i: usize, line: &str| -> Result<Entry, CassetteError> {
        serde_json::from_str(line).map_err(|e| CassetteError::Parse {
            path: path.to_owned(),
            line: i + 1,
            source: std::sync::Arc::new(e),
        })
    };
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    // The header, read loosely first: another format's may not parse.
    let found = lines
        .next()
        .and_then(|(_, first)| serde_json::from_str::<Value>(first).ok())
        .filter(|v| v.get("kind").and_then(Value::as_str) == Some("header"))
        .and_then(|v| v.get("format").and_then(Value::as_u64))
        .unwrap_or(0);
    if found != u64::from(CASSETTE_FORMAT) {
        return Err(format_error(path, u32::try_from(found).unwrap_or(u32::MAX)));
    }
    let mut entries = Vec::new();
    for (i, line) in lines {
        match parse(i, line)? {
            Entry::Header(h) => return Err(format_error(path, h.format)),
            entry => entries.push(entry),
        }
    }
    Ok(entries)
}

fn format_error(path: &Path, found: u32) -> CassetteError {
    CassetteError::Format {
        path: path.to_owned(),
        found,
        supported: CASSETTE_FORMAT,
    }
}

/// The header line of a cassette this lousho writes.
pub(crate) fn header() -> Entry {
    Entry::Header(Header {
        format: CASSETTE_FORMAT,
        lousho: env!("CARGO_PKG_VERSION").to_owned(),
    })
}

/// Writes `lines` (the header and the entries, as JSON, already redacted)
/// to a temporary file renamed over `path`: a reader never sees half a
/// cassette.
pub(crate) fn write(path: &Path, lines: &[Value]) -> Result<(), CassetteError> {
    let mut out = Vec::new();
    for line in lines {
        // A `Value` always serialises.
        out.extend_from_slice(line.to_string().as_bytes());
        out.push(b'\n');
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
        _ => std::path::PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "cassette".to_owned());
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let written = std::fs::File::create(&tmp).and_then(|mut f| {
        f.write_all(&out)?;
        f.sync_all()
    });
    if let Err(e) = written.and_then(|()| std::fs::rename(&tmp, path)) {
        let _ = std::fs::remove_file(&tmp);
        return Err(CassetteError::io(path, e));
    }
    Ok(())
}
