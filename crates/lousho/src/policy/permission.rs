//! Permission rules and the `can_use_tool` callback.

use crate::tool::name::compile_name_globs;
use futures::future::BoxFuture;
use globset::GlobSet;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;
use std::future::Future;
use std::sync::Arc;

/// What a permission rule does with the tools it matches.
///
/// When several rules match one tool, the strongest wins:
/// `Deny` > `Ask` > `Allow`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleDecision {
    /// Run without asking (the tool's approval policy is skipped).
    Allow,
    /// Ask the approval handler (or pause the run) before every call.
    Ask,
    /// Never run; the model gets an error result saying so.
    Deny,
}

/// One permission rule: a tool name (exact, or a glob such as `docs__*` or
/// `mcp__postgres__*`) and what to do with matching calls.
///
/// Serialises as `{ "tool": "mcp__postgres__exec", "decision": "deny" }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PermissionRule {
    /// The tool's full name as the model sees it (`<server>__<tool>` for MCP
    /// tools), or a glob over it: `*` any run of characters, `?` one character,
    /// `[abc]` a class, `{a,b}` alternatives. Matching is case-sensitive.
    pub tool: String,
    /// What to do with matching calls.
    pub decision: RuleDecision,
}

impl PermissionRule {
    /// A rule that lets matching tools run without asking.
    pub fn allow(tool: impl Into<String>) -> Self {
        Self {
            tool: tool.into(),
            decision: RuleDecision::Allow,
        }
    }

    /// A rule that asks before every call of matching tools.
    pub fn ask(tool: impl Into<String>) -> Self {
        Self {
            tool: tool.into(),
            decision: RuleDecision::Ask,
        }
    }

    /// A rule that denies every call of matching tools.
    pub fn deny(tool: impl Into<String>) -> Self {
        Self {
            tool: tool.into(),
            decision: RuleDecision::Deny,
        }
    }
}

/// What a [`can_use_tool`](Permissions::can_use_tool) callback answers for one call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "behavior", rename_all = "snake_case")]
#[non_exhaustive]
pub enum PermissionResult {
    /// Run the call without asking (the tool's approval policy is skipped).
    Allow,
    /// Do not run the call; the model gets an error result with `message`.
    Deny {
        /// Why, for the model.
        message: String,
    },
    /// Ask the approval handler (or pause the run).
    Ask,
    /// No opinion: the tool's approval policy decides.
    UsePolicy,
}

impl PermissionResult {
    /// A denial with a message for the model.
    pub fn deny(message: impl Into<String>) -> Self {
        PermissionResult::Deny {
            message: message.into(),
        }
    }
}

/// The `can_use_tool` callback: `(tool name, input) -> PermissionResult`.
pub type CanUseTool =
    Arc<dyn Fn(String, Value) -> BoxFuture<'static, PermissionResult> + Send + Sync>;

/// Permission rules plus an optional per-call callback. Set them with
/// [`AgentBuilder::permissions`](crate::AgentBuilder::permissions); the
/// agent checks the glob patterns when it is built.
///
/// See [the module docs](crate::policy) for where they sit in the decision order.
///
/// ```
/// use lousho::policy::{Permissions, PermissionResult};
///
/// let permissions = Permissions::new()
///     .allow("docs__*")                 // read the docs freely
///     .deny("mcp__postgres__exec")      // never
///     .ask("files__write_*")            // always ask a human
///     .can_use_tool(|name, input| async move {
///         if name == "shell" && input["command"].as_str().is_some_and(|c| c.contains("rm ")) {
///             PermissionResult::deny("no rm, please")
///         } else {
///             PermissionResult::UsePolicy
///         }
///     });
/// # let _ = permissions;
/// ```
#[derive(Clone, Default)]
#[must_use]
pub struct Permissions {
    rules: Vec<PermissionRule>,
    can_use_tool: Option<CanUseTool>,
}

impl fmt::Debug for Permissions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Permissions")
            .field("rules", &self.rules)
            .field("can_use_tool", &self.can_use_tool.is_some())
            .finish()
    }
}

/// Reads the rules of a spec file's `permissions` section:
/// `{ "rules": [{ "tool": "mcp__postgres__exec", "decision": "deny" }, …] }`
/// (other keys of a rule, like the TypeScript edition's `kind: "tool"`, are
/// ignored). A callback exists only in code.
impl<'de> Deserialize<'de> for Permissions {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Raw {
            #[serde(default)]
            rules: Vec<PermissionRule>,
        }
        let raw = Raw::deserialize(deserializer)?;
        Ok(Permissions::new().rules(raw.rules))
    }
}

impl Permissions {
    /// No rules, no callback.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a rule.
    pub fn rule(mut self, rule: PermissionRule) -> Self {
        self.rules.push(rule);
        self
    }

    /// Adds rules.
    pub fn rules(mut self, rules: impl IntoIterator<Item = PermissionRule>) -> Self {
        self.rules.extend(rules);
        self
    }

    /// Adds an `allow` rule for `tool` (a name or a glob).
    pub fn allow(self, tool: impl Into<String>) -> Self {
        self.rule(PermissionRule::allow(tool))
    }

    /// Adds an `ask` rule for `tool` (a name or a glob).
    pub fn ask(self, tool: impl Into<String>) -> Self {
        self.rule(PermissionRule::ask(tool))
    }

    /// Adds a `deny` rule for `tool` (a name or a glob).
    pub fn deny(self, tool: impl Into<String>) -> Self {
        self.rule(PermissionRule::deny(tool))
    }

    /// Sets the per-call callback. It gets the tool's full name and the
    /// model's input, and runs only for calls no rule matched.
    pub fn can_use_tool<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(String, Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = PermissionResult> + Send + 'static,
    {
        self.can_use_tool = Some(Arc::new(move |name, input| Box::pin(f(name, input))));
        self
    }

    /// The rules, in the order they were added.
    pub fn rule_list(&self) -> &[PermissionRule] {
        &self.rules
    }

    /// Whether a callback is set.
    pub fn has_can_use_tool(&self) -> bool {
        self.can_use_tool.is_some()
    }

    /// Checks every pattern and compiles the rules.
    pub fn compile(&self) -> Result<CompiledPermissions, PermissionError> {
        let set = compile_name_globs(self.rules.iter().map(|r| r.tool.as_str())).map_err(|e| {
            PermissionError::InvalidPattern {
                pattern: e.pattern,
                message: e.message,
            }
        })?;
        Ok(CompiledPermissions {
            rules: self.rules.clone(),
            set,
            can_use_tool: self.can_use_tool.clone(),
        })
    }
}

/// A permission rule could not be compiled.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum PermissionError {
    /// A rule's tool pattern is not a valid glob.
    #[error(
        "permission rule `{pattern}` is not a valid tool name or glob ({message}); use a full tool name or `*`, `?`, `[..]`, `{{a,b}}`"
    )]
    InvalidPattern {
        /// The pattern.
        pattern: String,
        /// What is wrong with it.
        message: String,
    },
}

/// [`Permissions`] with their globs compiled, ready to match tool names.
#[derive(Clone, Default)]
pub struct CompiledPermissions {
    rules: Vec<PermissionRule>,
    set: GlobSet,
    can_use_tool: Option<CanUseTool>,
}

impl fmt::Debug for CompiledPermissions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CompiledPermissions")
            .field("rules", &self.rules)
            .field("can_use_tool", &self.can_use_tool.is_some())
            .finish()
    }
}

impl CompiledPermissions {
    /// The rule that decides for `tool_name`: of all matching rules, the
    /// strongest (`deny` > `ask` > `allow`); among equals, the first added.
    pub fn matching_rule(&self, tool_name: &str) -> Option<&PermissionRule> {
        self.set
            .matches(tool_name)
            .into_iter()
            .filter_map(|i| self.rules.get(i))
            // `max_by_key` keeps the last maximum; reverse so the first wins.
            .rev()
            .max_by_key(|rule| rule.decision)
    }

    /// Asks the `can_use_tool` callback about one call; `None` without a
    /// callback. A callback that panics denies (fail closed).
    pub async fn check_call(&self, tool_name: &str, input: &Value) -> Option<PermissionResult> {
        use futures::FutureExt;
        let callback = self.can_use_tool.as_ref()?;
        let fut = callback(tool_name.to_owned(), input.clone());
        Some(
            match std::panic::AssertUnwindSafe(fut).catch_unwind().await {
                Ok(result) => result,
                Err(_) => {
                    tracing::error!(
                        tool = tool_name,
                        "the can_use_tool callback panicked; denying the call"
                    );
                    PermissionResult::deny("the permission check failed, so the call was denied")
                }
            },
        )
    }

    /// Whether a `can_use_tool` callback is set.
    pub fn has_can_use_tool(&self) -> bool {
        self.can_use_tool.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_strongest_matching_rule_wins() {
        let p = Permissions::new()
            .allow("docs__*")
            .deny("docs__delete")
            .ask("docs__*_page")
            .compile()
            .unwrap();
        let decision = |name| p.matching_rule(name).map(|r| r.decision);
        assert_eq!(decision("docs__search"), Some(RuleDecision::Allow));
        assert_eq!(decision("docs__delete"), Some(RuleDecision::Deny));
        assert_eq!(decision("docs__edit_page"), Some(RuleDecision::Ask));
        assert_eq!(decision("files__read"), None);
    }

    #[test]
    fn rules_read_from_a_spec_file_shape() {
        let p: Permissions = serde_json::from_value(serde_json::json!({"rules": [
            {"kind": "tool", "tool": "mcp__postgres__query", "decision": "allow"},
            {"kind": "tool", "tool": "mcp__postgres__exec", "decision": "deny"},
        ]}))
        .unwrap();
        assert_eq!(
            p.rule_list(),
            [
                PermissionRule::allow("mcp__postgres__query"),
                PermissionRule::deny("mcp__postgres__exec")
            ]
        );
    }

    #[test]
    fn a_bad_glob_names_the_pattern() {
        let err = Permissions::new().allow("docs__[").compile().unwrap_err();
        assert!(err.to_string().contains("docs__["), "{err}");
    }
}
