//! The decision order, written once: rules, the `can_use_tool` callback,
//! then the tool's approval policy.

use super::permission::{CompiledPermissions, PermissionResult, RuleDecision};
use crate::tool::Approval;
use crate::tool::ToolSpec;
use futures::FutureExt;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use std::fmt;
use std::str::FromStr;

/// What happens to a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// It runs.
    Run,
    /// A human is asked first (the approval handler, or the run pauses).
    Ask,
    /// It does not run; the model gets an error result.
    Deny,
}

impl Decision {
    /// `"run"`, `"ask"` or `"deny"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Run => "run",
            Decision::Ask => "ask",
            Decision::Deny => "deny",
        }
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which step of the decision order decided.
///
/// Serialises as a short string: `rule:<pattern>`, `callback`,
/// `annotations`, `untrusted`, `always`, `never`, `custom`, `unknown_tool`,
/// `pin`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DecisionReason {
    /// A permission rule matched; `pattern` is the rule's tool pattern.
    Rule {
        /// The rule's tool name or glob.
        pattern: String,
    },
    /// The `can_use_tool` callback answered (per call only).
    Callback,
    /// The tool's [`Approval::Annotations`] policy read its hints.
    Annotations,
    /// The tool's [`Approval::Annotations`] policy asked because its server
    /// is not trusted ([`Trust::None`](super::Trust::None)): its hints were
    /// ignored.
    Untrusted,
    /// The tool's policy is [`Approval::Always`].
    Always,
    /// The tool's policy is [`Approval::Never`].
    Never,
    /// The tool's policy is an [`Approval::Custom`] function.
    Custom,
    /// No tool has this name.
    UnknownTool,
    /// The tool's pin holds it back (`pin: enforce`, and the tool is new or
    /// its definition changed since pinned).
    Pin,
    /// The call was in flight when its run stopped (a crash), and its tool
    /// is neither read-only nor idempotent: running it again needs a yes.
    Interrupted,
}

impl fmt::Display for DecisionReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecisionReason::Rule { pattern } => write!(f, "rule:{pattern}"),
            DecisionReason::Callback => f.write_str("callback"),
            DecisionReason::Annotations => f.write_str("annotations"),
            DecisionReason::Untrusted => f.write_str("untrusted"),
            DecisionReason::Always => f.write_str("always"),
            DecisionReason::Never => f.write_str("never"),
            DecisionReason::Custom => f.write_str("custom"),
            DecisionReason::UnknownTool => f.write_str("unknown_tool"),
            DecisionReason::Pin => f.write_str("pin"),
            DecisionReason::Interrupted => f.write_str("interrupted"),
        }
    }
}

/// A string that is not a [`DecisionReason`].
#[derive(Debug, Clone, thiserror::Error)]
#[error(
    "`{0}` is not a decision reason (expected rule:<pattern>, callback, annotations, untrusted, always, never, custom, unknown_tool, pin or interrupted)"
)]
pub struct ParseDecisionReasonError(String);

impl FromStr for DecisionReason {
    type Err = ParseDecisionReasonError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if let Some(pattern) = s.strip_prefix("rule:") {
            return Ok(DecisionReason::Rule {
                pattern: pattern.to_owned(),
            });
        }
        Ok(match s {
            "callback" => DecisionReason::Callback,
            "annotations" => DecisionReason::Annotations,
            "untrusted" => DecisionReason::Untrusted,
            "always" => DecisionReason::Always,
            "never" => DecisionReason::Never,
            "custom" => DecisionReason::Custom,
            "unknown_tool" => DecisionReason::UnknownTool,
            "pin" => DecisionReason::Pin,
            "interrupted" => DecisionReason::Interrupted,
            other => return Err(ParseDecisionReasonError(other.to_owned())),
        })
    }
}

impl Serialize for DecisionReason {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for DecisionReason {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = String::deserialize(deserializer)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// The decision for a tool before any call: permission rules, then the
/// tool's approval policy. A `can_use_tool` callback may still change it per
/// call (it sees the input), and an `Ask` becomes `Run` or `Deny` once a
/// human answers.
///
/// Serialises as `{ "decision": "ask", "reason": "annotations" }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolDecision {
    /// What happens to a call.
    pub decision: Decision,
    /// Why.
    pub reason: DecisionReason,
}

impl ToolDecision {
    /// A decision with its reason.
    pub fn new(decision: Decision, reason: DecisionReason) -> Self {
        Self { decision, reason }
    }
}

/// One call through the decision order ([the module docs](crate::policy)
/// list it): what happens to it, why, and for a denial the message the
/// model gets.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CallDecision {
    /// What happens to the call, and which step decided.
    pub decision: ToolDecision,
    /// The `can_use_tool` callback's message when it denied the call.
    pub message: Option<String>,
}

impl CallDecision {
    fn new(decision: Decision, reason: DecisionReason) -> Self {
        ToolDecision::new(decision, reason).into()
    }

    /// The error text the model gets when the call of `name` is denied.
    pub fn denial(&self, name: &str) -> String {
        match (&self.decision.reason, &self.message) {
            (DecisionReason::Rule { pattern }, _) => rule_denial(name, pattern),
            (_, Some(message)) => format!("The call to `{name}` was denied: {message}"),
            (_, None) => format!("The call to `{name}` was denied."),
        }
    }
}

impl From<ToolDecision> for CallDecision {
    fn from(decision: ToolDecision) -> Self {
        Self {
            decision,
            message: None,
        }
    }
}

/// The message for a call a deny rule stopped.
pub(crate) fn rule_denial(name: &str, pattern: &str) -> String {
    format!("The call to `{name}` was denied by a permission rule (`{pattern}`); do not retry it.")
}

/// **The decision order**, written once: the tool's pin (a tool held back
/// by `pin: enforce` is denied, whatever the rules say), permission rules, then (for a call,
/// when `input` is given) the `can_use_tool` callback, then the tool's
/// approval policy. `spec` is the tool's spec when a tool has the name;
/// without one (and without a matching rule) the call is `Deny` with
/// [`DecisionReason::UnknownTool`]. An `Ask` goes to a human (step 4, the
/// caller's part: the run loop asks its handler or pauses).
///
/// The run loop, [`tool_decision`] (what `lousho tools` prints and what
/// `serve_mcp` exposes) and [`Agent::tool_decision`](crate::Agent::tool_decision)
/// all decide through this function.
pub async fn decide_call(
    permissions: &CompiledPermissions,
    name: &str,
    spec: Option<&ToolSpec>,
    input: Option<&Value>,
) -> CallDecision {
    // 0. Pins: a new or changed definition under `enforce` is not the tool
    // anyone allowed; no rule or answer applies to it.
    if let Some(pin) = spec.and_then(|s| s.pin.as_ref()).filter(|p| p.blocks()) {
        return CallDecision {
            decision: ToolDecision::new(Decision::Deny, DecisionReason::Pin),
            message: Some(pin.denial()),
        };
    }
    // 1. Permission rules: the strongest matching rule decides.
    if let Some(rule) = permissions.matching_rule(name) {
        let decision = match rule.decision {
            RuleDecision::Allow => Decision::Run,
            RuleDecision::Ask => Decision::Ask,
            RuleDecision::Deny => Decision::Deny,
        };
        let pattern = rule.tool.clone();
        return CallDecision::new(decision, DecisionReason::Rule { pattern });
    }
    let Some(spec) = spec else {
        return CallDecision::new(Decision::Deny, DecisionReason::UnknownTool);
    };
    // 2. The callback, for a call (it sees the input).
    if let Some(input) = input {
        match permissions.check_call(name, input).await {
            Some(PermissionResult::Allow) => {
                return CallDecision::new(Decision::Run, DecisionReason::Callback);
            }
            Some(PermissionResult::Deny { message }) => {
                return CallDecision {
                    decision: ToolDecision::new(Decision::Deny, DecisionReason::Callback),
                    message: Some(message),
                };
            }
            Some(PermissionResult::Ask) => {
                return CallDecision::new(Decision::Ask, DecisionReason::Callback);
            }
            Some(PermissionResult::UsePolicy) | None => {}
        }
    }
    // 3. The tool's approval policy.
    policy_decision(spec).into()
}

/// Whether the tool named `name` is offered to the model at all: not when a
/// permission rule denies it unconditionally — the strongest matching rule
/// is a deny (rules match the name only, so every deny rule is
/// unconditional). Such a tool would be refused on every call, so listing
/// it only costs tokens and invites calls that fail; it stays in the
/// agent's tool set, so a call by name still gets the rule's denial.
pub fn offered_to_model(permissions: &CompiledPermissions, name: &str) -> bool {
    permissions
        .matching_rule(name)
        .is_none_or(|rule| rule.decision != RuleDecision::Deny)
}

/// The static decision for the tool named `name` (its spec, when such a tool
/// exists): [`decide_call`] without an input, so steps 1 and 3 only.
pub fn tool_decision(
    permissions: &CompiledPermissions,
    name: &str,
    spec: Option<&ToolSpec>,
) -> ToolDecision {
    // Without an input the order has no callback step, so it never waits:
    // the future is ready on its first poll. Fail closed all the same.
    decide_call(permissions, name, spec, None)
        .now_or_never()
        .map_or_else(
            || ToolDecision::new(Decision::Ask, policy_reason(spec)),
            |d| d.decision,
        )
}

fn policy_reason(spec: Option<&ToolSpec>) -> DecisionReason {
    spec.map_or(DecisionReason::UnknownTool, |s| policy_decision(s).reason)
}

/// What the tool's own approval policy says.
pub fn policy_decision(spec: &ToolSpec) -> ToolDecision {
    let decision = if spec.needs_approval() {
        Decision::Ask
    } else {
        Decision::Run
    };
    let reason = match &spec.approval {
        Approval::Annotations if !spec.trust.trusts_annotations() => DecisionReason::Untrusted,
        Approval::Annotations => DecisionReason::Annotations,
        Approval::Always => DecisionReason::Always,
        Approval::Never => DecisionReason::Never,
        Approval::Custom(_) => DecisionReason::Custom,
    };
    ToolDecision::new(decision, reason)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::define_tool;
    use crate::policy::Permissions;
    use crate::tool::Tool;

    #[tokio::test]
    async fn rules_then_callback_then_policy_and_static_skips_the_callback() {
        let permissions = Permissions::new()
            .deny("gone")
            .allow("asked")
            .can_use_tool(|name, input| async move {
                match (name.as_str(), input["x"].as_i64()) {
                    ("asked", _) => PermissionResult::deny("never seen: a rule decided"),
                    (_, Some(1)) => PermissionResult::deny("no ones"),
                    (_, Some(2)) => PermissionResult::Ask,
                    _ => PermissionResult::UsePolicy,
                }
            })
            .compile()
            .unwrap();
        let plain = define_tool("plain", "d", |_: Value| async { "x" }).needs_approval(true);
        let spec = plain.spec();
        let call = |name: &'static str, x: i64| {
            let permissions = &permissions;
            async move {
                let input = serde_json::json!({ "x": x });
                decide_call(permissions, name, Some(spec), Some(&input)).await
            }
        };

        let d = call("gone", 0).await;
        assert_eq!(d.decision.decision, Decision::Deny);
        assert!(
            d.denial("gone").contains("permission rule (`gone`)"),
            "{}",
            d.denial("gone")
        );
        assert_eq!(call("asked", 0).await.decision.decision, Decision::Run);
        let d = call("plain", 1).await;
        assert_eq!(
            (d.decision.decision, &d.decision.reason),
            (Decision::Deny, &DecisionReason::Callback)
        );
        assert_eq!(d.denial("plain"), "The call to `plain` was denied: no ones");
        assert_eq!(call("plain", 2).await.decision.decision, Decision::Ask);
        let d = call("plain", 3).await;
        assert_eq!(
            d.decision,
            ToolDecision::new(Decision::Ask, DecisionReason::Always)
        );
        // Without an input there is no callback: the policy decides.
        assert_eq!(
            tool_decision(&permissions, "plain", Some(spec)),
            ToolDecision::new(Decision::Ask, DecisionReason::Always)
        );
        assert_eq!(
            tool_decision(&permissions, "nope", None),
            ToolDecision::new(Decision::Deny, DecisionReason::UnknownTool)
        );
    }

    #[test]
    fn reasons_round_trip_as_strings() {
        for reason in [
            DecisionReason::Rule {
                pattern: "docs__*".into(),
            },
            DecisionReason::Callback,
            DecisionReason::Annotations,
            DecisionReason::Untrusted,
            DecisionReason::Always,
            DecisionReason::Never,
            DecisionReason::Custom,
            DecisionReason::UnknownTool,
            DecisionReason::Pin,
        ] {
            let json = serde_json::to_value(&reason).unwrap();
            assert!(json.is_string());
            assert_eq!(
                serde_json::from_value::<DecisionReason>(json).unwrap(),
                reason
            );
        }
        let d = ToolDecision::new(Decision::Ask, DecisionReason::Annotations);
        assert_eq!(
            serde_json::to_value(&d).unwrap(),
            serde_json::json!({"decision": "ask", "reason": "annotations"})
        );
    }
}
