//! Served sessions ([`ServeOptions::sessions`](super::ServeOptions::sessions)):
//! the agent tool's optional `session` argument, new session ids, and the
//! session id in the result.
//!
//! A call without `session` starts a new conversation under a new random id;
//! a call with one continues that conversation (created if the store has no
//! such session, so a client may pick its own ids). The result carries the
//! id twice: in `structuredContent` (`{"reply": …, "session": …}`, declared
//! by the tool's `outputSchema`; `reply` is the answer's object for an agent
//! with an output schema) for programs, and as a last text block
//! (`session: <id>`) for clients that only show text to their model.

use super::arguments::{ArgumentError, json_type};
use super::limits::RESERVED_PREFIX;
use crate::session::{LeaseSettings, SessionStore, StoreError};
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Map, Value, json};
use std::io::Read;
use std::sync::Arc;

/// Where a served call's conversations live: the store (with OAuth, the
/// caller's part of it) and how runs take a session's lease.
#[derive(Clone)]
pub(crate) struct Conversations {
    pub(crate) store: Arc<dyn SessionStore>,
    pub(crate) lease: LeaseSettings,
}

/// The input schema's `session` property.
pub(crate) fn session_property() -> Value {
    json!({
        "type": "string",
        "description": "Continue a conversation: the `session` a previous call returned. Leave it out to start a new conversation."
    })
}

/// The agent tool's output schema with sessions on: `reply` is the agent's
/// answer — text, or the object `answer` (the agent's output schema)
/// describes, whose `$defs` move to the top so its `$ref`s still resolve.
pub(crate) fn output_schema(answer: Option<&Value>) -> Map<String, Value> {
    let mut defs = None;
    let reply = match answer {
        Some(Value::Object(answer)) => {
            let mut answer = answer.clone();
            answer.remove("$schema");
            defs = answer.remove("$defs");
            Value::Object(answer)
        }
        _ => {
            json!({ "type": "string", "description": "The agent's answer (or, with isError, what went wrong)." })
        }
    };
    let mut schema = json!({
        "type": "object",
        "properties": {
            "reply": reply,
            "session": { "type": "string", "description": "The conversation's id: pass it as `session` to continue it." }
        },
        "required": ["reply", "session"]
    });
    if let Some(defs) = defs {
        schema["$defs"] = defs;
    }
    match schema {
        Value::Object(o) => o,
        _ => Map::new(),
    }
}

/// The default description of an agent tool that keeps sessions.
pub(crate) fn default_description(server_name: &str) -> String {
    format!(
        "Ask the {server_name} agent. The result names a `session`: pass it back to continue \
         that conversation; leave it out to start a new one."
    )
}

/// What the call asked for: which session (if any) to continue.
pub(crate) enum Requested {
    /// A new conversation.
    New,
    /// The conversation with this id.
    Continue(String),
}

/// Reads the `session` argument.
pub(crate) fn requested(
    arguments: Option<&Map<String, Value>>,
    store: Option<&Arc<dyn SessionStore>>,
) -> Result<Requested, ArgumentError> {
    let given = arguments.and_then(|a| a.get("session"));
    match (given, store) {
        (None | Some(Value::Null), _) => Ok(Requested::New),
        (Some(_), None) => Err(ArgumentError::SessionsOff),
        (Some(Value::String(id)), Some(_)) if id.starts_with(RESERVED_PREFIX) => {
            Err(ArgumentError::ReservedSession)
        }
        (Some(Value::String(id)), Some(_)) => Ok(Requested::Continue(id.clone())),
        (Some(other), Some(_)) => Err(ArgumentError::SessionNotAString {
            found: json_type(other),
        }),
    }
}

/// A new session id: 128 random bits from the operating system, as 32
/// lowercase hex digits. A served session's id is all a client needs to
/// continue it (and so to read it through the agent), so it must not be
/// guessable.
pub(crate) fn new_session_id() -> Result<String, std::io::Error> {
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The message of an `isError` result for a store failure.
pub(crate) fn store_failure(id: &str, error: &StoreError) -> String {
    match error {
        StoreError::Conflict { .. } => format!(
            "session `{id}` changed while this call ran (another call of it finished first), so \
             this call's turn was not stored; call again with the same `session` to continue \
             from the newer history"
        ),
        StoreError::Busy { .. } => format!(
            "session `{id}` stayed in use by another call of it for longer than this call may \
             wait, so this call did not run; call again with the same `session` later"
        ),
        StoreError::InvalidId { .. } => format!(
            "argument `session`: {error}; pass the `session` a previous call returned, or leave \
             it out to start a new conversation"
        ),
        other => format!("the session store failed for session `{id}`: {other}"),
    }
}

/// `result` with the session id: `structuredContent` `{reply, session}`
/// (`reply` the result's structured content when it has some, else its
/// text) and a last text block `session: <id>`.
pub(crate) fn with_session(mut result: CallToolResult, id: &str) -> CallToolResult {
    let reply = match result.structured_content.take() {
        Some(structured) => structured,
        None => Value::String(
            result
                .content
                .iter()
                .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
                .collect::<Vec<_>>()
                .join("\n"),
        ),
    };
    result.structured_content = Some(json!({ "reply": reply, "session": id }));
    result
        .content
        .push(ContentBlock::text(format!("session: {id}")));
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_ids_are_32_hex_digits_and_differ() {
        let a = new_session_id().unwrap();
        let b = new_session_id().unwrap();
        assert_eq!(a.len(), 32);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }

    #[test]
    fn the_result_carries_the_reply_and_the_id() {
        let r = with_session(
            CallToolResult::success(vec![ContentBlock::text("hi")]),
            "s1",
        );
        assert_eq!(
            r.structured_content,
            Some(json!({"reply": "hi", "session": "s1"}))
        );
        assert_eq!(r.content.len(), 2);
        assert_eq!(r.content[1].as_text().unwrap().text, "session: s1");
    }
}
