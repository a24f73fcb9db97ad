//! Approvals over MCP (`ServeApprovals::Elicit`): a call that needs approval
//! is put to the calling client's user as an elicitation form — what the
//! agent wants to run, a readable summary of its input, allow or deny and an
//! optional reason the agent sees. No answer in time, a declined or
//! dismissed form, or a failed request all deny.

use super::peer_channel::{Asking, PeerChannel};
use crate::policy::{ApprovalDecision, ApprovalRequest};
use crate::tool::{ClientError, Elicitation};
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::time::Duration;

/// How long a summarised input value may be before it is cut.
const VALUE_CHARS: usize = 200;
/// How many input fields the summary lists.
const FIELDS: usize = 12;

/// The form: a required `decision` (`allow` / `deny`) and an optional `reason`.
pub(crate) fn form_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "decision": {
                "type": "string",
                "title": "Allow this call?",
                "description": "allow: the tool runs; deny: it does not, and the agent goes on",
                "enum": ["allow", "deny"]
            },
            "reason": {
                "type": "string",
                "title": "Reason (optional)",
                "description": "Told to the agent, e.g. why you denied the call"
            }
        },
        "required": ["decision"]
    })
}

/// The form's message: who wants to run what, with which input.
pub(crate) fn form_message(request: &ApprovalRequest) -> String {
    let mut m = format!("The agent wants to run `{}`", request.title());
    if request.display_name.is_some() {
        let _ = write!(m, " (tool `{}`)", request.tool_name);
    }
    if let Some(origin) = &request.origin {
        let _ = write!(m, " from the MCP server `{origin}`");
    }
    m.push('.');
    let summary = summarize(&request.input);
    if summary.is_empty() {
        m.push_str("\nIt takes no input.");
    } else {
        m.push_str("\nInput:\n");
        m.push_str(&summary);
    }
    m.push_str("\nAllow it?");
    m
}

/// A readable summary of a call's input: one `key: value` line per field
/// (strings as written, other values as compact JSON), each cut at
/// [`VALUE_CHARS`], at most [`FIELDS`] lines.
pub(crate) fn summarize(input: &Value) -> String {
    let show = |v: &Value| {
        let s = match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        cut(&s, VALUE_CHARS)
    };
    match input {
        Value::Object(map) if map.is_empty() => String::new(),
        Value::Null => String::new(),
        Value::Object(map) => {
            let mut lines: Vec<String> = map
                .iter()
                .take(FIELDS)
                .map(|(k, v)| format!("  {k}: {}", show(v)))
                .collect();
            if map.len() > FIELDS {
                lines.push(format!("  … and {} more", map.len() - FIELDS));
            }
            lines.join("\n")
        }
        other => format!("  {}", show(other)),
    }
}

fn cut(s: &str, max: usize) -> String {
    let one_line = s.replace('\n', "⏎");
    match one_line.char_indices().nth(max) {
        None => one_line,
        Some((at, _)) => format!("{}… ({} chars)", &one_line[..at], s.chars().count()),
    }
}

/// Why the client's user cannot be asked on this call, if they cannot: the
/// rest of a sentence ("`x` needs approval and …").
pub(crate) fn cannot_ask(channel: &PeerChannel) -> Option<String> {
    if matches!(channel.asking, Asking::Stateless) {
        return Some(
            "the MCP client cannot be asked on this connection (stateless Streamable HTTP with \
             protocol 2025-11-25): serve HTTP with sessions (`HttpOptions::stateful(true)`, spec \
             `serve.stateful: true`), use stdio, or a client of protocol 2026-07-28"
                .to_owned(),
        );
    }
    if !channel.elicitation || matches!(channel.asking, Asking::Modern) {
        return Some(
            "the MCP client cannot be asked: it does not support elicitation (answer approvals \
             with a client that does, allow the tool with a permission rule, or change its \
             approval policy)"
                .to_owned(),
        );
    }
    None
}

/// Asks the client's user about one call; anything but an explicit allow denies.
pub(crate) async fn ask(
    channel: &PeerChannel,
    request: ApprovalRequest,
    timeout: Duration,
) -> ApprovalDecision {
    let tool = request.tool_name.clone();
    let answer = channel
        .elicit_form(form_message(&request), form_schema(), Some(timeout))
        .await;
    let decision = decide(answer, timeout);
    tracing::debug!(%tool, ?decision, "approval over MCP answered");
    decision
}

/// The decision for an elicitation's outcome.
pub(crate) fn decide(
    answer: Result<Elicitation, ClientError>,
    timeout: Duration,
) -> ApprovalDecision {
    match answer {
        Ok(Elicitation::Accepted(content)) => {
            let reason = content
                .get("reason")
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|r| !r.is_empty())
                .map(str::to_owned);
            match content.get("decision").and_then(Value::as_str) {
                Some("allow") => ApprovalDecision::Approve,
                _ => ApprovalDecision::Deny { reason },
            }
        }
        Ok(Elicitation::Declined) => ApprovalDecision::Deny { reason: None },
        Ok(_) => ApprovalDecision::deny("the user dismissed the approval request"),
        Err(ClientError::TimedOut(_)) => ApprovalDecision::deny(format!(
            "no answer within {} s, so it was not approved",
            timeout.as_secs()
        )),
        Err(e) => {
            tracing::warn!(error = %e, "could not ask the MCP client for approval; denying");
            ApprovalDecision::deny(format!("the user could not be asked ({e})"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::DecisionReason;
    use crate::tool::ToolSpec;

    #[test]
    fn the_message_names_the_tool_and_summarises_the_input() {
        let spec = ToolSpec::new("delete_order", "Delete", json!({"type": "object"}))
            .display_name("Delete order");
        let long = "x".repeat(300);
        let request = ApprovalRequest::new(
            "c1",
            &spec,
            json!({"id": "42", "force": true, "note": long}),
            DecisionReason::Always,
        );
        let m = form_message(&request);
        assert!(
            m.starts_with("The agent wants to run `Delete order` (tool `delete_order`)."),
            "{m}"
        );
        assert!(m.contains("  id: 42\n"), "{m}");
        assert!(m.contains("  force: true\n"), "{m}");
        assert!(m.contains("… (300 chars)"), "{m}");
        let none = ApprovalRequest::new("c2", &spec, json!({}), DecisionReason::Always);
        assert!(form_message(&none).contains("It takes no input."));
    }

    #[test]
    fn only_an_explicit_allow_approves() {
        let t = Duration::from_secs(7);
        let accepted = |v: Value| Ok(Elicitation::Accepted(v.as_object().unwrap().clone()));
        assert_eq!(
            decide(accepted(json!({"decision": "allow"})), t),
            ApprovalDecision::Approve
        );
        assert_eq!(
            decide(
                accepted(json!({"decision": "deny", "reason": " not now "})),
                t
            ),
            ApprovalDecision::deny("not now")
        );
        assert_eq!(
            decide(accepted(json!({})), t),
            ApprovalDecision::Deny { reason: None }
        );
        assert_eq!(
            decide(Ok(Elicitation::Declined), t),
            ApprovalDecision::Deny { reason: None }
        );
        assert_eq!(
            decide(Err(ClientError::TimedOut(t)), t),
            ApprovalDecision::deny("no answer within 7 s, so it was not approved")
        );
    }
}
