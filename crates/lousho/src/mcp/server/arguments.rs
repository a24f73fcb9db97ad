//! The agent tool's arguments, read: `message` (what to ask the agent) and,
//! with sessions on, `session` (which conversation to continue). A wrong
//! argument is an [`ArgumentError`], whose message becomes the `isError`
//! result the calling model reads.

use serde_json::{Map, Value};

/// An agent tool call's argument that cannot be used, and what to send instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ArgumentError {
    /// No `message`.
    #[error("missing argument `message`: call this tool with {{\"message\": \"<your request>\"}}")]
    MissingMessage,
    /// A `message` that is not a string.
    #[error(
        "argument `message` must be a string, not {found}: call this tool with {{\"message\": \"<your request>\"}}"
    )]
    MessageNotAString {
        /// What it is instead (`a number`, `an object`, …).
        found: &'static str,
    },
    /// A `session` given to a server that keeps no conversations.
    #[error(
        "this server does not keep conversations, so `session` cannot be used: call without \
         it (each call is a fresh conversation), or serve with sessions \
         (`ServeOptions::sessions`; spec: `serve.sessions: true`)"
    )]
    SessionsOff,
    /// A `session` that is not a string.
    #[error(
        "argument `session` must be a string (the `session` a previous call returned), not {found}"
    )]
    SessionNotAString {
        /// What it is instead.
        found: &'static str,
    },
    /// A `session` id the server keeps for itself (its per-caller limits).
    #[error(
        "session ids starting with `{prefix}` are reserved by the server: leave `session` out \
         to start a new conversation, or pass the `session` a previous call returned",
        prefix = super::limits::RESERVED_PREFIX
    )]
    ReservedSession,
}

/// The `message` argument.
pub(crate) fn message(arguments: Option<&Map<String, Value>>) -> Result<String, ArgumentError> {
    match arguments.and_then(|a| a.get("message")) {
        Some(Value::String(m)) => Ok(m.clone()),
        Some(other) => Err(ArgumentError::MessageNotAString {
            found: json_type(other),
        }),
        None => Err(ArgumentError::MissingMessage),
    }
}

/// A JSON value's type, as a reader would name it.
pub(crate) fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_message_must_be_a_string() {
        let args = |v: Value| v.as_object().cloned();
        assert_eq!(
            message(args(json!({"message": "hi"})).as_ref()),
            Ok("hi".to_owned())
        );
        assert_eq!(
            message(args(json!({"message": 3})).as_ref()),
            Err(ArgumentError::MessageNotAString { found: "a number" })
        );
        assert_eq!(message(None), Err(ArgumentError::MissingMessage));
    }
}
