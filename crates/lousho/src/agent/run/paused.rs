//! A run that pauses for approval (its [`RunState`]) and one that picks a
//! paused turn up again.

use super::{Progress, Run, TurnOutput};
use crate::agent::approval::TurnCalls;
use crate::agent::{AgentError, AgentEvent, RunState, RunStatus, ToolCallRecord};
use crate::model::ModelRequest;
use crate::policy::{ApprovalRequest, Decisions};
use crate::session::run_state::{PausedCall, PausedTurn};
use crate::tool::ToolOutput;

impl Run {
    /// Ends the run with an interrupted reply carrying its [`RunState`].
    pub(super) async fn pause(
        &self,
        run: Progress,
        out: TurnOutput,
        outputs: Vec<Option<ToolOutput>>,
        pending: Vec<ApprovalRequest>,
    ) -> Result<(), AgentError> {
        let mut questions: std::collections::HashMap<String, ApprovalRequest> = pending
            .iter()
            .map(|r| (r.call_id.clone(), r.clone()))
            .collect();
        let calls: Vec<PausedCall> = out
            .calls
            .into_iter()
            .zip(outputs)
            .map(|(call, output)| {
                let approval = if output.is_none() {
                    questions.remove(&call.id)
                } else {
                    None
                };
                PausedCall {
                    call,
                    output,
                    approval,
                }
            })
            .collect();
        let (messages, records, usage, requests, turns) = (
            run.request.messages.clone(),
            run.records.clone(),
            run.usage,
            run.requests.clone(),
            run.turns,
        );
        let mut reply = run.into_reply(out.text.clone(), RunStatus::Interrupted);
        // The interrupted reply also shows the paused turn's finished calls.
        reply.tool_calls.extend(calls.iter().filter_map(|c| {
            c.output.clone().map(|output| ToolCallRecord {
                call: c.call.clone(),
                output,
            })
        }));
        let paused = PausedTurn {
            text: out.text,
            usage: out.usage,
            calls,
        };
        let mut state = RunState::new(
            messages,
            records,
            paused,
            usage,
            turns,
            self.state.snapshot(),
        );
        state.requests = requests;
        reply.pending = pending;
        reply.state = Some(state);
        // The paused run goes on from its state, not from its journal.
        if let Some(journal) = &self.journal {
            journal.discard().await;
        }
        self.finish(reply).await
    }

    /// Runs or denies a paused turn's pending calls by their answers, and
    /// picks the run up after that turn.
    pub(super) async fn finish_paused_turn(
        &self,
        paused: RunState,
        decisions: &Decisions,
    ) -> Result<Progress, AgentError> {
        paused.check()?;
        let offer = crate::agent::offer::current(&self.inner)?;
        let tools = crate::agent::deferral::plan(&self.inner, &offer, &paused.messages).tools;
        let (calls, outputs): (Vec<_>, Vec<_>) = paused
            .turn
            .calls
            .into_iter()
            .map(|c| (c.call, c.output))
            .unzip();
        let mut run = Progress {
            request: ModelRequest::new(paused.messages),
            records: paused.tool_calls,
            usage: paused.usage,
            requests: paused.requests,
            turns: paused.turns,
            answered: None,
        };
        let done = self
            .turn_context(&tools)
            .run_calls(&calls, outputs, Some(decisions))
            .await;
        run.count_children(&self.child_usage);
        match done? {
            TurnCalls::Done(outputs) => run.push_results(calls, outputs),
            TurnCalls::Paused { .. } => {
                return Err(AgentError::Internal(
                    "a resumed turn asked for approval again".into(),
                ));
            }
        }
        self.emit(AgentEvent::TurnFinished {
            turn: run.turns,
            usage: paused.turn.usage,
        })
        .await?;
        Ok(run)
    }
}
