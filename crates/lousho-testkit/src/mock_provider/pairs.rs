//! Tool calls and their results in pairs, as both APIs demand: a result
//! answers a call of the message just before it, and every call is
//! answered right after it. A conversation cut in the wrong place (a result
//! whose call was left out) gets the API's 400.

use serde_json::Value;
use std::collections::BTreeSet;

/// The items of an array (none for anything else).
fn list(value: Option<&Value>) -> impl Iterator<Item = &Value> {
    value.and_then(Value::as_array).into_iter().flatten()
}

fn str_of<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

/// OpenAI Chat Completions: a `tool` message must follow an assistant
/// message with `tool_calls` naming its `tool_call_id` (through the other
/// tool messages answering it), and each call must be answered.
pub(crate) fn check_openai(request: &Value) -> Option<String> {
    let messages = request.get("messages").and_then(Value::as_array)?;
    // The calls of the last assistant message not yet answered.
    let mut open: Option<BTreeSet<&str>> = None;
    for (i, message) in messages.iter().enumerate() {
        let role = str_of(message, "role").unwrap_or_default();
        if role == "tool" {
            let id = str_of(message, "tool_call_id").unwrap_or_default();
            if open.as_mut().is_some_and(|calls| calls.remove(id)) {
                continue;
            }
            return Some(format!(
                "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'. (messages.[{i}].role)"
            ));
        }
        if let Some(calls) = &open
            && !calls.is_empty()
        {
            let ids: Vec<&str> = calls.iter().copied().collect();
            return Some(format!(
                "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: {}",
                ids.join(", ")
            ));
        }
        open = (role == "assistant").then(|| {
            list(message.get("tool_calls"))
                .filter_map(|c| str_of(c, "id"))
                .collect()
        });
    }
    None
}

/// Anthropic Messages: a `tool_result` block must answer a `tool_use` block
/// of the message just before it, and every `tool_use` must be answered in
/// the next message.
pub(crate) fn check_anthropic(request: &Value) -> Option<String> {
    let messages = request.get("messages").and_then(Value::as_array)?;
    let mut previous_calls: BTreeSet<&str> = BTreeSet::new();
    for (i, message) in messages.iter().enumerate() {
        let results: BTreeSet<&str> = list(message.get("content"))
            .filter(|b| str_of(b, "type") == Some("tool_result"))
            .filter_map(|b| str_of(b, "tool_use_id"))
            .collect();
        if let Some(id) = results.iter().find(|id| !previous_calls.contains(*id)) {
            return Some(format!(
                "messages.{i}.content: unexpected `tool_use_id` found in `tool_result` blocks: {id}. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
            ));
        }
        if let Some(id) = previous_calls.iter().find(|id| !results.contains(*id)) {
            return Some(format!(
                "messages.{}: `tool_use` ids were found without `tool_result` blocks immediately after: {id}. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
                i.saturating_sub(1)
            ));
        }
        previous_calls = list(message.get("content"))
            .filter(|b| str_of(b, "type") == Some("tool_use"))
            .filter_map(|b| str_of(b, "id"))
            .collect();
    }
    None
}
