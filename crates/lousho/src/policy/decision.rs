//! The static decision for a tool: rules, then its approval policy.

use super::Approval;
use super::permission::{CompiledPermissions, RuleDecision};
use crate::tool::ToolSpec;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
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
/// `annotations`, `always`, `never`, `custom`, `unknown_tool`.
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
    /// The tool's policy is [`Approval::Always`].
    Always,
    /// The tool's policy is [`Approval::Never`].
    Never,
    /// The tool's policy is an [`Approval::Custom`] function.
    Custom,
    /// No tool has this name.
    UnknownTool,
}

impl fmt::Display for DecisionReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecisionReason::Rule { pattern } => write!(f, "rule:{pattern}"),
            DecisionReason::Callback => f.write_str("callback"),
            DecisionReason::Annotations => f.write_str("annotations"),
            DecisionReason::Always => f.write_str("always"),
            DecisionReason::Never => f.write_str("never"),
            DecisionReason::Custom => f.write_str("custom"),
            DecisionReason::UnknownTool => f.write_str("unknown_tool"),
        }
    }
}

/// A string that is not a [`DecisionReason`].
#[derive(Debug, Clone, thiserror::Error)]
#[error(
    "`{0}` is not a decision reason (expected rule:<pattern>, callback, annotations, always, never, custom or unknown_tool)"
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
            "always" => DecisionReason::Always,
            "never" => DecisionReason::Never,
            "custom" => DecisionReason::Custom,
            "unknown_tool" => DecisionReason::UnknownTool,
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

/// The static decision for the tool named `name` (its spec, when such a tool exists).
pub fn tool_decision(
    permissions: &CompiledPermissions,
    name: &str,
    spec: Option<&ToolSpec>,
) -> ToolDecision {
    if let Some(rule) = permissions.matching_rule(name) {
        let decision = match rule.decision {
            RuleDecision::Allow => Decision::Run,
            RuleDecision::Ask => Decision::Ask,
            RuleDecision::Deny => Decision::Deny,
        };
        return ToolDecision::new(
            decision,
            DecisionReason::Rule {
                pattern: rule.tool.clone(),
            },
        );
    }
    match spec {
        Some(spec) => policy_decision(spec),
        None => ToolDecision::new(Decision::Deny, DecisionReason::UnknownTool),
    }
}

/// What the tool's own approval policy says.
pub fn policy_decision(spec: &ToolSpec) -> ToolDecision {
    let decision = if spec.needs_approval() {
        Decision::Ask
    } else {
        Decision::Run
    };
    let reason = match &spec.approval {
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

    #[test]
    fn reasons_round_trip_as_strings() {
        for reason in [
            DecisionReason::Rule {
                pattern: "docs__*".into(),
            },
            DecisionReason::Callback,
            DecisionReason::Annotations,
            DecisionReason::Always,
            DecisionReason::Never,
            DecisionReason::Custom,
            DecisionReason::UnknownTool,
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
