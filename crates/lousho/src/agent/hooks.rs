//! Hooks around a run's model calls and tool calls (issue 35 §7).
//!
//! A [`Hook`] sees each model request before it goes (it may change it or
//! refuse it), each model response after it came (it may change it), each
//! tool call before the decision order and the tool run (it may change the
//! arguments or refuse the call) and each tool result after the tool ran (it
//! may change it). Guardrails are hooks: one that refuses a tool call whose
//! arguments carry a secret, one that redacts a tool's output.
//!
//! Hooks run in the order they were added, one at a time; each is awaited
//! under the run's cancellation (a cancelled run stops waiting for a hook),
//! and a hook that panics fails the run with [`HookError::Panicked`].
//! Approval stays with the permissions' `can_use_tool` and the approval
//! handler (see [`crate::policy`]); a tool hook runs before them, so they
//! see the arguments as the hooks left them.
//!
//! ```
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use lousho::Agent;
//! use lousho::agent::hooks::{Hook, HookError, ToolVerdict};
//! use lousho::model::ToolCall;
//!
//! struct NoSecrets;
//!
//! #[lousho::async_trait]
//! impl Hook for NoSecrets {
//!     async fn before_tool(&self, call: &mut ToolCall) -> Result<ToolVerdict, HookError> {
//!         if call.arguments.to_string().contains("sk-") {
//!             return Ok(ToolVerdict::refuse("arguments may not carry an API key"));
//!         }
//!         Ok(ToolVerdict::Allow)
//!     }
//! }
//!
//! let agent = Agent::builder().model("test").hook(NoSecrets).build()?;
//! # let _ = agent; Ok(()) }
//! ```

use super::AgentError;
use crate::model::{ModelRequest, ToolCall, Usage};
use crate::tool::ToolOutput;
use async_trait::async_trait;
use futures::FutureExt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// What a model turn produced, as the `after_model` hooks see it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ModelResponse {
    /// The model that answered (`"vendor/model"`).
    pub model: String,
    /// The turn's text.
    pub text: String,
    /// The tool calls the model asked for (run next, unless a hook removes
    /// them or refuses them).
    pub tool_calls: Vec<ToolCall>,
    /// The tokens the turn used (a change here is not what is billed: the
    /// reply's usage counts what the provider reported).
    pub usage: Usage,
}

/// What a `before_tool` hook says about a call.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolVerdict {
    /// The call goes on (to the next hook, then the decision order).
    Allow,
    /// The call does not run: the model gets an error result with this
    /// reason, and the run goes on.
    Refuse(String),
}

impl ToolVerdict {
    /// Refuses the call with `reason` (what the model is told).
    pub fn refuse(reason: impl Into<String>) -> Self {
        ToolVerdict::Refuse(reason.into())
    }
}

/// Why a hook failed the run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HookError {
    /// A hook refused the model request: the run ends with this error.
    #[error("a hook refused the model request: {reason}")]
    Refused {
        /// What the hook said.
        reason: String,
    },
    /// A hook failed.
    #[error("a hook failed: {0}")]
    Failed(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// A hook panicked (a bug in the hook).
    #[error("a hook panicked: {0}; fix the hook")]
    Panicked(String),
}

impl HookError {
    /// Refuses with `reason`.
    pub fn refuse(reason: impl Into<String>) -> Self {
        HookError::Refused {
            reason: reason.into(),
        }
    }

    /// Fails with `error`.
    pub fn failed(error: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        HookError::Failed(error.into())
    }
}

/// A hook around a run's model calls and tool calls. Every method has a
/// default that does nothing; implement those you need. An `Err` ends the
/// run with [`AgentError::Hook`].
#[async_trait]
pub trait Hook: Send + Sync + 'static {
    /// Before each model request: inspect it, change it (the change stays in
    /// the run's conversation) or refuse it ([`HookError::refuse`]).
    async fn before_model(&self, request: &mut ModelRequest) -> Result<(), HookError> {
        let _ = request;
        Ok(())
    }

    /// After each model turn: inspect or change what it produced.
    async fn after_model(&self, response: &mut ModelResponse) -> Result<(), HookError> {
        let _ = response;
        Ok(())
    }

    /// Before each tool call, ahead of permissions and approval: inspect
    /// it, change its arguments, or refuse it ([`ToolVerdict::Refuse`]:
    /// the model gets an error result, later hooks are not asked).
    async fn before_tool(&self, call: &mut ToolCall) -> Result<ToolVerdict, HookError> {
        let _ = call;
        Ok(ToolVerdict::Allow)
    }

    /// After each tool call that ran: inspect or change its result (before
    /// the model and the run's events see it).
    async fn after_tool(&self, call: &ToolCall, output: &mut ToolOutput) -> Result<(), HookError> {
        let _ = (call, output);
        Ok(())
    }
}

/// A `before_tool` hook from a closure: `hooks::before_tool(|call| …)`.
pub fn before_tool<F>(f: F) -> impl Hook
where
    F: Fn(&mut ToolCall) -> Result<ToolVerdict, HookError> + Send + Sync + 'static,
{
    BeforeToolFn(f)
}

/// An `after_tool` hook from a closure: `hooks::after_tool(|call, output| …)`.
pub fn after_tool<F>(f: F) -> impl Hook
where
    F: Fn(&ToolCall, &mut ToolOutput) -> Result<(), HookError> + Send + Sync + 'static,
{
    AfterToolFn(f)
}

/// A `before_model` hook from a closure.
pub fn before_model<F>(f: F) -> impl Hook
where
    F: Fn(&mut ModelRequest) -> Result<(), HookError> + Send + Sync + 'static,
{
    BeforeModelFn(f)
}

/// An `after_model` hook from a closure.
pub fn after_model<F>(f: F) -> impl Hook
where
    F: Fn(&mut ModelResponse) -> Result<(), HookError> + Send + Sync + 'static,
{
    AfterModelFn(f)
}

struct BeforeToolFn<F>(F);
struct AfterToolFn<F>(F);
struct BeforeModelFn<F>(F);
struct AfterModelFn<F>(F);

#[async_trait]
impl<F> Hook for BeforeToolFn<F>
where
    F: Fn(&mut ToolCall) -> Result<ToolVerdict, HookError> + Send + Sync + 'static,
{
    async fn before_tool(&self, call: &mut ToolCall) -> Result<ToolVerdict, HookError> {
        (self.0)(call)
    }
}

#[async_trait]
impl<F> Hook for AfterToolFn<F>
where
    F: Fn(&ToolCall, &mut ToolOutput) -> Result<(), HookError> + Send + Sync + 'static,
{
    async fn after_tool(&self, call: &ToolCall, output: &mut ToolOutput) -> Result<(), HookError> {
        (self.0)(call, output)
    }
}

#[async_trait]
impl<F> Hook for BeforeModelFn<F>
where
    F: Fn(&mut ModelRequest) -> Result<(), HookError> + Send + Sync + 'static,
{
    async fn before_model(&self, request: &mut ModelRequest) -> Result<(), HookError> {
        (self.0)(request)
    }
}

#[async_trait]
impl<F> Hook for AfterModelFn<F>
where
    F: Fn(&mut ModelResponse) -> Result<(), HookError> + Send + Sync + 'static,
{
    async fn after_model(&self, response: &mut ModelResponse) -> Result<(), HookError> {
        (self.0)(response)
    }
}

/// An agent's hooks, in order. Empty costs one length check per step.
#[derive(Clone, Default)]
pub(crate) struct Hooks(pub(crate) Vec<Arc<dyn Hook>>);

impl std::fmt::Debug for Hooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Hooks({})", self.0.len())
    }
}

/// Awaits one hook under the run's cancellation, a panic made an error.
async fn guarded<T>(
    cancel: &CancellationToken,
    fut: impl Future<Output = Result<T, HookError>>,
) -> Result<T, AgentError> {
    let fut = AssertUnwindSafe(fut).catch_unwind();
    tokio::select! {
        biased;
        _ = cancel.cancelled() => Err(AgentError::Cancelled),
        r = fut => match r {
            Ok(r) => r.map_err(AgentError::Hook),
            Err(panic) => Err(AgentError::Hook(HookError::Panicked(panic_message(&panic)))),
        },
    }
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned())
}

impl Hooks {
    /// Whether there are none.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Every `before_model`, in order.
    pub(crate) async fn before_model(
        &self,
        request: &mut ModelRequest,
        cancel: &CancellationToken,
    ) -> Result<(), AgentError> {
        for hook in &self.0 {
            guarded(cancel, hook.before_model(request)).await?;
        }
        Ok(())
    }

    /// Every `after_model`, in order.
    pub(crate) async fn after_model(
        &self,
        response: &mut ModelResponse,
        cancel: &CancellationToken,
    ) -> Result<(), AgentError> {
        for hook in &self.0 {
            guarded(cancel, hook.after_model(response)).await?;
        }
        Ok(())
    }

    /// Every `before_tool` for each call, in order: for each call, `None`
    /// (it goes on) or the error result of its refusal.
    pub(crate) async fn before_tools(
        &self,
        calls: &mut [ToolCall],
        cancel: &CancellationToken,
    ) -> Result<Vec<Option<ToolOutput>>, AgentError> {
        let mut outputs = vec![None; calls.len()];
        for (call, slot) in calls.iter_mut().zip(&mut outputs) {
            for hook in &self.0 {
                if let ToolVerdict::Refuse(reason) = guarded(cancel, hook.before_tool(call)).await?
                {
                    tracing::debug!(tool = %call.name, call_id = %call.id, %reason, "a hook refused the tool call");
                    *slot = Some(ToolOutput::error(format!(
                        "The call to `{}` was refused: {reason}",
                        call.name
                    )));
                    break;
                }
            }
        }
        Ok(outputs)
    }

    /// Every `after_tool` for one call's output, in order.
    pub(crate) async fn after_tool(
        &self,
        call: &ToolCall,
        output: &mut ToolOutput,
        cancel: &CancellationToken,
    ) -> Result<(), AgentError> {
        for hook in &self.0 {
            guarded(cancel, hook.after_tool(call, output)).await?;
        }
        Ok(())
    }
}
