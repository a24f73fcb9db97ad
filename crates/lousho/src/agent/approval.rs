//! One turn's calls through the decision order (see [`crate::policy`]):
//! decide each call, ask the handler, run what may run, pause for the rest.

use super::execute::run_tool_calls;
use super::journal::RunJournal;
use super::{AgentError, AgentEvent, AgentInner};
use crate::model::ToolCall;
use crate::policy::{
    ApprovalDecision, ApprovalHandler, ApprovalRequest, Decision, DecisionReason, Decisions,
    RuleDecision, decide_call, rule_denial,
};
use crate::telemetry::span::{ToolDecision, execute_tool};
use crate::tool::{CallerRun, ClientChannel, ConversationState, ToolOutput, ToolSet};
use futures::FutureExt;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// How a turn's calls ended.
pub(crate) enum TurnCalls {
    /// Every call has a result, in call order.
    Done(Vec<ToolOutput>),
    /// Some calls wait for a human: their output is `None`.
    Paused {
        outputs: Vec<Option<ToolOutput>>,
        pending: Vec<ApprovalRequest>,
    },
}

/// What to do with one call, once decided.
enum Verdict {
    Run,
    /// A human approved it.
    Approved,
    Deny(String),
}

/// What the decision order says about one call.
enum Gate {
    Decided(Verdict),
    Ask(Box<ApprovalRequest>),
}

impl Gate {
    const RUN: Gate = Gate::Decided(Verdict::Run);

    fn deny(message: String) -> Self {
        Gate::Decided(Verdict::Deny(message))
    }
}

/// Everything a turn needs to decide and run its calls.
pub(crate) struct TurnContext<'a> {
    pub(crate) inner: &'a AgentInner,
    pub(crate) tools: &'a ToolSet,
    pub(crate) state: &'a ConversationState,
    pub(crate) cancel: &'a CancellationToken,
    pub(crate) tx: &'a mpsc::Sender<Result<AgentEvent, AgentError>>,
    /// The run's approval handler (its own or the agent's).
    pub(crate) approval_handler: Option<&'a ApprovalHandler>,
    /// The MCP client the run serves, for its tools to talk back to.
    pub(crate) tool_client: Option<&'a Arc<dyn ClientChannel>>,
    /// What the run's tools learn about it (for agent tools).
    pub(crate) caller: CallerRun,
    /// A stored session's run: its journal, which takes each result.
    pub(crate) journal: Option<&'a RunJournal>,
    /// These calls were in flight when the run stopped (a resumed
    /// interrupted run): only a read-only or idempotent tool runs again
    /// unasked.
    pub(crate) interrupted: bool,
}

impl TurnContext<'_> {
    async fn emit(&self, event: AgentEvent) -> Result<(), AgentError> {
        self.tx
            .send(Ok(event))
            .await
            .map_err(|_| AgentError::Cancelled)
    }

    /// Decides, asks and runs the calls whose output is `None` in `outputs`.
    ///
    /// With `answers` (a resumed turn), every such call is decided by its
    /// answer (none = denied) instead of the decision order.
    pub(crate) async fn run_calls(
        &self,
        calls: &[ToolCall],
        mut outputs: Vec<Option<ToolOutput>>,
        answers: Option<&Decisions>,
    ) -> Result<TurnCalls, AgentError> {
        let mut to_run = Vec::new();
        let mut pending = Vec::new();
        for (i, call) in calls.iter().enumerate() {
            if outputs.get(i).is_some_and(Option::is_some) {
                continue;
            }
            let gate = match answers {
                Some(answers) => Gate::Decided(self.resumed(call, answers.get(&call.id))),
                // The callback may hang; a cancelled run stops waiting for it.
                None => tokio::select! {
                    biased;
                    _ = self.cancel.cancelled() => return Err(AgentError::Cancelled),
                    gate = self.decide(call) => self.again(call, gate),
                },
            };
            let asked_again =
                matches!(&gate, Gate::Ask(r) if r.reason == DecisionReason::Interrupted);
            let verdict = match gate {
                Gate::Decided(verdict) => verdict,
                Gate::Ask(request) => {
                    let request = *request;
                    self.emit(AgentEvent::ApprovalRequested(request.clone()))
                        .await?;
                    if self.approval_handler.is_none() {
                        drop(execute_tool(call, ToolDecision::Pending));
                        pending.push(request);
                        continue;
                    }
                    answer_verdict(call, self.ask_handler(request).await?)
                }
            };
            let verdict = match verdict {
                Verdict::Deny(_) if asked_again => Verdict::Deny(interrupted_denial(call)),
                other => other,
            };
            match verdict {
                Verdict::Run => to_run.push((i, ToolDecision::Allowed)),
                Verdict::Approved => to_run.push((i, ToolDecision::Approved)),
                Verdict::Deny(message) => {
                    drop(execute_tool(call, ToolDecision::Denied));
                    tracing::debug!(tool = %call.name, call_id = %call.id, %message, "tool call denied");
                    let output = ToolOutput::error(message);
                    self.emit(AgentEvent::ToolCallFinished {
                        call: call.clone(),
                        output: output.clone(),
                    })
                    .await?;
                    if let Some(journal) = self.journal {
                        journal.result(call, &output).await?;
                    }
                    if let Some(slot) = outputs.get_mut(i) {
                        *slot = Some(output);
                    }
                }
            }
        }

        let running: Vec<ToolCall> = to_run
            .iter()
            .filter_map(|&(i, _)| calls.get(i).cloned())
            .collect();
        for call in &running {
            self.emit(AgentEvent::ToolCallStarted(call.clone())).await?;
        }
        let spans = running
            .iter()
            .zip(&to_run)
            .map(|(call, &(_, decision))| execute_tool(call, decision))
            .collect();
        let results = run_tool_calls(
            self.tools,
            &running,
            spans,
            self.inner.record_content,
            self.state,
            self.cancel,
            self.inner.max_parallel_tools,
            self.tx,
            self.tool_client,
            &self.caller,
            &self.inner.hooks,
            self.journal,
        )
        .await?;
        for ((i, _), output) in to_run.into_iter().zip(results) {
            if let Some(slot) = outputs.get_mut(i) {
                *slot = Some(output);
            }
        }

        if pending.is_empty() {
            Ok(TurnCalls::Done(
                outputs.into_iter().map(Option::unwrap_or_default).collect(),
            ))
        } else {
            Ok(TurnCalls::Paused { outputs, pending })
        }
    }

    /// A call in flight when its run stopped (`interrupted`): what the
    /// decision order lets run unasked runs again only if its tool is
    /// read-only or idempotent (its annotations); otherwise a human is asked.
    fn again(&self, call: &ToolCall, gate: Gate) -> Gate {
        if !self.interrupted || !matches!(gate, Gate::Decided(Verdict::Run)) {
            return gate;
        }
        let Some(spec) = self.tools.get(&call.name).map(|t| t.spec()) else {
            return gate;
        };
        let hints = &spec.annotations;
        if hints.read_only == Some(true) || hints.idempotent == Some(true) {
            return gate;
        }
        Gate::Ask(Box::new(ApprovalRequest::new(
            &call.id,
            spec,
            call.arguments.clone(),
            DecisionReason::Interrupted,
        )))
    }

    /// Steps 1-3 of the decision order for one call ([`decide_call`]).
    async fn decide(&self, call: &ToolCall) -> Gate {
        let spec = self.tools.get(&call.name).map(|t| t.spec());
        let decided = decide_call(
            &self.inner.permissions,
            &call.name,
            spec,
            Some(&call.arguments),
        )
        .await;
        match (decided.decision.decision, spec) {
            (Decision::Run, _) => Gate::RUN,
            // Unknown tools run into the "unknown tool" error result.
            (Decision::Deny, _) if decided.decision.reason == DecisionReason::UnknownTool => {
                Gate::RUN
            }
            (Decision::Deny, _) => Gate::deny(decided.denial(&call.name)),
            (Decision::Ask, Some(spec)) => Gate::Ask(Box::new(ApprovalRequest::new(
                &call.id,
                spec,
                call.arguments.clone(),
                decided.decision.reason,
            ))),
            // An unknown tool has nothing to approve; running it gives
            // the model the "unknown tool" result.
            (Decision::Ask, None) => Gate::RUN,
        }
    }

    /// A pending call of a resumed run: its answer decides; no answer
    /// denies. A deny rule of the resuming agent still wins, and so does a
    /// pin that holds the tool back now (its definition changed since the
    /// question was asked).
    fn resumed(&self, call: &ToolCall, answer: Option<&ApprovalDecision>) -> Verdict {
        if let Some(rule) = self.inner.permissions.matching_rule(&call.name)
            && rule.decision == RuleDecision::Deny
        {
            return Verdict::Deny(rule_denial(&call.name, &rule.tool));
        }
        let spec = self.tools.get(&call.name).map(|t| t.spec());
        if let Some(pin) = spec.and_then(|s| s.pin.as_ref()).filter(|p| p.blocks()) {
            return Verdict::Deny(format!(
                "The call to `{}` was denied: {}",
                call.name,
                pin.denial()
            ));
        }
        match answer {
            Some(answer) => answer_verdict(call, answer.clone()),
            None => Verdict::Deny(format!(
                "The call to `{}` was not approved (no answer was given), so it did not run.",
                call.name
            )),
        }
    }

    /// Asks the handler; a panicking handler denies, a cancelled run stops.
    async fn ask_handler(&self, request: ApprovalRequest) -> Result<ApprovalDecision, AgentError> {
        let Some(handler) = self.approval_handler else {
            return Ok(ApprovalDecision::Deny { reason: None });
        };
        let tool = request.tool_name.clone();
        let fut = AssertUnwindSafe(handler(request)).catch_unwind();
        tokio::select! {
            biased;
            _ = self.cancel.cancelled() => Err(AgentError::Cancelled),
            answer = fut => Ok(answer.unwrap_or_else(|_| {
                tracing::error!(%tool, "the approval handler panicked; denying the call");
                ApprovalDecision::deny("the approval handler failed, so the call was denied")
            })),
        }
    }
}

fn answer_verdict(call: &ToolCall, answer: ApprovalDecision) -> Verdict {
    match answer {
        ApprovalDecision::Approve => Verdict::Approved,
        ApprovalDecision::Deny {
            reason: Some(reason),
        } => Verdict::Deny(format!(
            "The user denied the call to `{}`: {reason}",
            call.name
        )),
        ApprovalDecision::Deny { reason: None } => {
            Verdict::Deny(format!("The user denied the call to `{}`.", call.name))
        }
    }
}

/// The result of an interrupted call that was not run again.
fn interrupted_denial(call: &ToolCall) -> String {
    format!(
        "The call to `{}` was interrupted (the run stopped while it ran) and was not run again, \
         so it may or may not have taken effect; check before calling it again.",
        call.name
    )
}
