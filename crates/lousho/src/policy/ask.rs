//! Asking a human: what is asked, what can be answered, who answers.

use super::DecisionReason;
use crate::tool::{ToolAnnotations, ToolSpec};
use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

/// One tool call waiting for a human's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ApprovalRequest {
    /// The model's id for the call; answers are keyed by it.
    pub call_id: String,
    /// The tool's full name as the model sees it.
    pub tool_name: String,
    /// The tool's human-friendly name (an MCP tool's `title`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    /// The model's input for the call.
    pub input: Value,
    /// The tool's MCP hints (empty when none were given).
    #[serde(default)]
    pub annotations: ToolAnnotations,
    /// The MCP server the tool comes from (`spec.origin`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// Which step of the decision order asked.
    pub reason: DecisionReason,
    /// The tool definition's fingerprint (MCP tools), for remembered
    /// approvals ([`ApprovalKey`](super::ApprovalKey)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
    /// The digest of the tool's server identity (MCP tools lousho connected).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_identity: Option<String>,
}

impl ApprovalRequest {
    /// A request for a call of the tool `spec` with `input`.
    pub fn new(
        call_id: impl Into<String>,
        spec: &ToolSpec,
        input: Value,
        reason: DecisionReason,
    ) -> Self {
        Self {
            call_id: call_id.into(),
            tool_name: spec.name.clone(),
            display_name: spec.display_name.clone(),
            input,
            annotations: spec.annotations.clone(),
            origin: spec.origin.server().map(str::to_owned),
            reason,
            fingerprint: spec.fingerprint.clone(),
            server_identity: spec.server_identity.clone(),
        }
    }

    /// The display name, or the tool name.
    pub fn title(&self) -> &str {
        self.display_name.as_deref().unwrap_or(&self.tool_name)
    }
}

/// A human's answer to an [`ApprovalRequest`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ApprovalDecision {
    /// Run the call.
    Approve,
    /// Do not run it; the model gets an error result with the reason.
    Deny {
        /// Why, for the model.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
}

impl ApprovalDecision {
    /// A denial with a reason for the model.
    pub fn deny(reason: impl Into<String>) -> Self {
        ApprovalDecision::Deny {
            reason: Some(reason.into()),
        }
    }

    /// Reads a typed answer (a terminal prompt): `y`, `yes`, `approve`,
    /// `allow` (any case, surrounding space ignored) approve; `n`, `no`,
    /// `deny` deny; anything else denies too (fail closed).
    pub fn from_answer(answer: &str) -> Self {
        match answer.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" | "approve" | "approved" | "allow" => ApprovalDecision::Approve,
            "n" | "no" | "deny" | "denied" => ApprovalDecision::Deny { reason: None },
            _ => ApprovalDecision::deny("the answer was not understood, so the call was denied"),
        }
    }

    /// Reads one answer from JSON: `true`/`false`, `"approve"`/`"deny"`, or
    /// `{ "decision": "approve" | "deny", "reason": "…" }`. Anything else
    /// denies (fail closed).
    pub fn from_json(value: &Value) -> Self {
        match value {
            Value::Bool(true) => ApprovalDecision::Approve,
            Value::Bool(false) => ApprovalDecision::Deny { reason: None },
            Value::String(s) if s == "approve" => ApprovalDecision::Approve,
            Value::String(s) if s == "deny" => ApprovalDecision::Deny { reason: None },
            Value::Object(_) => serde_json::from_value(value.clone()).unwrap_or_else(|_| {
                ApprovalDecision::deny("the approval answer was malformed, so the call was denied")
            }),
            _ => {
                ApprovalDecision::deny("the approval answer was malformed, so the call was denied")
            }
        }
    }

    /// Whether this approves the call.
    pub fn is_approved(&self) -> bool {
        matches!(self, ApprovalDecision::Approve)
    }
}

/// The approval handler: answers one [`ApprovalRequest`]. Set it with
/// [`AgentBuilder::approval_handler`](crate::AgentBuilder::approval_handler).
pub type ApprovalHandler =
    Arc<dyn Fn(ApprovalRequest) -> BoxFuture<'static, ApprovalDecision> + Send + Sync>;

/// Makes an [`ApprovalHandler`] from an async closure.
pub fn approval_handler<F, Fut>(f: F) -> ApprovalHandler
where
    F: Fn(ApprovalRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ApprovalDecision> + Send + 'static,
{
    Arc::new(move |request| Box::pin(f(request)))
}

/// Answers for a paused run's pending calls, keyed by call id. A pending
/// call with no answer is denied (fail closed); answers for other ids are
/// ignored.
///
/// ```
/// use lousho::policy::{ApprovalDecision, Decisions};
/// let decisions = Decisions::new().approve("call_1").deny("call_2", "not today");
/// assert_eq!(decisions.get("call_1"), Some(&ApprovalDecision::Approve));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
#[must_use]
pub struct Decisions {
    answers: BTreeMap<String, ApprovalDecision>,
}

impl Decisions {
    /// No answers (every pending call is denied).
    pub fn new() -> Self {
        Self::default()
    }

    /// Approves the call `call_id`.
    pub fn approve(self, call_id: impl Into<String>) -> Self {
        self.answer(call_id, ApprovalDecision::Approve)
    }

    /// Denies the call `call_id` with a reason for the model.
    pub fn deny(self, call_id: impl Into<String>, reason: impl Into<String>) -> Self {
        self.answer(call_id, ApprovalDecision::deny(reason))
    }

    /// Sets the answer for `call_id`.
    pub fn answer(mut self, call_id: impl Into<String>, decision: ApprovalDecision) -> Self {
        self.answers.insert(call_id.into(), decision);
        self
    }

    /// Reads answers from a JSON object `{ "<call id>": <answer>, … }` (see
    /// [`ApprovalDecision::from_json`]); a malformed answer denies its call,
    /// and anything but an object gives no answers (every call denied).
    pub fn from_json(value: &Value) -> Self {
        let answers = value
            .as_object()
            .map(|map| {
                map.iter()
                    .map(|(k, v)| (k.clone(), ApprovalDecision::from_json(v)))
                    .collect()
            })
            .unwrap_or_default();
        Self { answers }
    }

    /// The answer for `call_id`.
    pub fn get(&self, call_id: &str) -> Option<&ApprovalDecision> {
        self.answers.get(call_id)
    }

    /// Whether there are no answers.
    pub fn is_empty(&self) -> bool {
        self.answers.is_empty()
    }
}

impl<K: Into<String>> FromIterator<(K, ApprovalDecision)> for Decisions {
    fn from_iter<I: IntoIterator<Item = (K, ApprovalDecision)>>(iter: I) -> Self {
        Self {
            answers: iter.into_iter().map(|(k, v)| (k.into(), v)).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn malformed_answers_deny() {
        assert!(ApprovalDecision::from_answer(" Yes ").is_approved());
        assert!(!ApprovalDecision::from_answer("sure, why not").is_approved());
        assert!(!ApprovalDecision::from_answer("").is_approved());
        let d = Decisions::from_json(&json!({
            "a": true, "b": "approve", "c": {"decision": "approve"},
            "d": {"decision": "maybe"}, "e": 42, "f": {"decision": "deny", "reason": "no"}
        }));
        let approved = |id| d.get(id).is_some_and(ApprovalDecision::is_approved);
        assert!(approved("a") && approved("b") && approved("c"));
        assert!(!approved("d") && !approved("e") && !approved("f"));
        assert_eq!(d.get("f"), Some(&ApprovalDecision::deny("no")));
        assert!(Decisions::from_json(&json!(["a"])).is_empty());
    }
}
