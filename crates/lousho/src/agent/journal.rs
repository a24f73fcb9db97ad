//! A stored session's run, journaled step by step (see
//! [`JournalStep`](crate::session::JournalStep)): the writer a run commits
//! its steps through, and the replay that rebuilds a run from its journal.

use super::AgentError;
use crate::model::run_record::{RequestUsage, ToolCallRecord};
use crate::model::{Message, Part, Role, Summary, ToolCall, ToolResult, Usage};
use crate::session::run_state::RunState;
use crate::session::{JournalStart, JournalStep, JournaledRun, SessionStore};
use crate::tool::ToolOutput;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// A run's journal: each step is one transaction in the store.
pub(crate) struct RunJournal {
    store: Arc<dyn SessionStore>,
    run: String,
    next: AtomicU64,
}

impl RunJournal {
    /// Starts (or takes over, resuming) the journal; `steps` were committed
    /// before.
    pub(crate) async fn begin(
        store: Arc<dyn SessionStore>,
        start: &JournalStart,
        steps: u64,
    ) -> Result<Self, AgentError> {
        store
            .journal_begin(start)
            .await
            .map_err(AgentError::Session)?;
        Ok(Self {
            store,
            run: start.run.clone(),
            next: AtomicU64::new(steps),
        })
    }

    /// The run's id.
    pub(crate) fn run(&self) -> &str {
        &self.run
    }

    /// Commits a finished model turn.
    pub(crate) async fn turn(
        &self,
        message: &Message,
        usage: &RequestUsage,
    ) -> Result<(), AgentError> {
        self.step(JournalStep::Turn {
            message: message.clone(),
            usage: usage.clone(),
        })
        .await
    }

    /// Commits a tool call's result.
    pub(crate) async fn result(
        &self,
        call: &ToolCall,
        output: &ToolOutput,
    ) -> Result<(), AgentError> {
        self.step(JournalStep::ToolResult {
            call: call.clone(),
            output: output.clone(),
        })
        .await
    }

    /// Commits a compaction summary that joined the conversation.
    pub(crate) async fn summary(
        &self,
        summary: &Summary,
        usage: &RequestUsage,
    ) -> Result<(), AgentError> {
        self.step(JournalStep::Summary {
            summary: summary.clone(),
            usage: usage.clone(),
        })
        .await
    }

    /// Commits one step.
    pub(crate) async fn step(&self, step: JournalStep) -> Result<(), AgentError> {
        let seq = self.next.fetch_add(1, Ordering::SeqCst);
        self.store
            .journal_step(&self.run, seq, &step)
            .await
            .map_err(AgentError::Session)
    }

    /// The run stopped without finishing: it stays, marked interrupted.
    pub(crate) async fn interrupt(&self) {
        if let Err(e) = self.store.journal_interrupt(&self.run).await {
            tracing::warn!(target: "lousho::session", run = %self.run, error = %e, "could not mark the run interrupted (it shows as interrupted once its lease runs out)");
        }
    }

    /// The run paused for approval (its state goes on in a `RunState`): the
    /// journal goes.
    pub(crate) async fn discard(&self) {
        if let Err(e) = self.store.journal_delete(&self.run).await {
            tracing::warn!(target: "lousho::session", run = %self.run, error = %e, "could not remove the paused run's journal");
        }
    }
}

/// A journaled run rebuilt from its steps.
pub(crate) struct Replayed {
    /// The conversation: the session's history, the run's input, its
    /// committed turns, results and summaries.
    pub(crate) messages: Vec<Message>,
    pub(crate) records: Vec<ToolCallRecord>,
    pub(crate) usage: Usage,
    pub(crate) requests: Vec<RequestUsage>,
    pub(crate) turns: usize,
    /// How the journal ends.
    pub(crate) end: ReplayEnd,
}

/// Where a replayed run stopped.
pub(crate) enum ReplayEnd {
    /// Between turns: the next model turn is due.
    NextTurn,
    /// The last turn's calls did not all finish: their results so far
    /// (`None`: in flight when the run stopped).
    OpenTurn {
        text: String,
        calls: Vec<ToolCall>,
        outputs: Vec<Option<ToolOutput>>,
        usage: Usage,
    },
    /// The final answer was committed; only the session's commit is missing.
    Answered(String),
}

/// Rebuilds `run` on the session's `history`.
pub(crate) fn replay(history: Vec<Message>, run: &JournaledRun) -> Replayed {
    let mut out = Replayed {
        messages: history,
        records: Vec::new(),
        usage: Usage::default(),
        requests: Vec::new(),
        turns: 0,
        end: ReplayEnd::NextTurn,
    };
    out.messages.extend(run.input.iter().cloned());
    for step in &run.steps {
        match step {
            JournalStep::Turn { message, usage } => {
                out.turns += 1;
                out.usage += usage.usage;
                out.requests.push(usage.clone());
                let calls: Vec<ToolCall> = message.tool_calls().cloned().collect();
                out.end = if calls.is_empty() {
                    ReplayEnd::Answered(message.text())
                } else {
                    ReplayEnd::OpenTurn {
                        text: message.text(),
                        outputs: vec![None; calls.len()],
                        calls,
                        usage: usage.usage,
                    }
                };
                out.messages.push(message.clone());
            }
            JournalStep::ToolResult { call, output } => {
                if let ReplayEnd::OpenTurn { calls, outputs, .. } = &mut out.end
                    && let Some(i) = calls.iter().position(|c| c.id == call.id)
                {
                    outputs[i] = Some(output.clone());
                }
                close_if_done(&mut out);
            }
            // Made between turns: the next turn is still due.
            JournalStep::Summary { summary, usage } => {
                out.usage += usage.usage;
                out.requests.push(usage.clone());
                out.messages.push(Message::summary(summary.clone()));
            }
        }
    }
    out
}

/// Once every call of the open turn has its result: the tool message.
fn close_if_done(out: &mut Replayed) {
    let ReplayEnd::OpenTurn { calls, outputs, .. } = &out.end else {
        return;
    };
    if outputs.iter().any(Option::is_none) {
        return;
    }
    let mut results = Vec::with_capacity(calls.len());
    for (call, output) in calls.iter().zip(outputs) {
        let output = output.clone().unwrap_or_default();
        results.push(ToolResult {
            call_id: call.id.clone(),
            name: call.name.clone(),
            output: output.clone(),
        });
        out.records.push(ToolCallRecord {
            call: call.clone(),
            output,
        });
    }
    out.messages.push(Message::tool_results(results));
    out.end = ReplayEnd::NextTurn;
}

/// The journal of a run resumed from its paused `state`, whose messages past
/// `base` (the stored version) are the run's: the input it started from,
/// then its turns, tool results and summaries so far as steps, the paused turn last
/// with the results it already had — so a crash after the resume goes on
/// from them as from any journaled run.
///
/// A conversation that steps cannot describe (a message between turns that
/// is neither a turn, its results nor a summary, or turns that do not match the
/// recorded requests, as in states written before lousho kept them) is
/// journaled from the paused turn: what came before it is the input.
pub(crate) fn paused_journal(state: &RunState, base: usize) -> (Vec<Message>, Vec<JournalStep>) {
    let new = state.messages.get(base..).unwrap_or_default();
    let (input, mut steps) = match turn_steps(new, state) {
        Some(found) => found,
        None => {
            let split = new.len().saturating_sub(1);
            let usage = state
                .requests
                .last()
                .cloned()
                .unwrap_or_else(|| RequestUsage {
                    model: String::new(),
                    usage: state.turn.usage,
                    cost_usd: None,
                    tool_definition_tokens: 0,
                });
            let turn = new.get(split).map(|message| JournalStep::Turn {
                message: message.clone(),
                usage,
            });
            (new[..split].to_vec(), turn.into_iter().collect())
        }
    };
    for paused in &state.turn.calls {
        if let Some(output) = &paused.output {
            steps.push(JournalStep::ToolResult {
                call: paused.call.clone(),
                output: output.clone(),
            });
        }
    }
    (input, steps)
}

/// `run` (a run's messages) as its input and a step per turn, tool result
/// and compaction summary, when every message from the first turn (or
/// summary) on is one of them and the turns and summaries match the
/// recorded requests, in order.
fn turn_steps(run: &[Message], state: &RunState) -> Option<(Vec<Message>, Vec<JournalStep>)> {
    let stepped = |m: &Message| m.role == Role::Assistant || m.as_summary().is_some();
    let first = run.iter().position(stepped)?;
    if run[first..].iter().filter(|m| stepped(m)).count() != state.requests.len() {
        return None;
    }
    let mut requests = state.requests.iter();
    let mut calls: Vec<ToolCall> = Vec::new();
    let mut steps = Vec::new();
    for message in &run[first..] {
        if let Some(summary) = message.as_summary() {
            let usage = requests.next().filter(|r| r.model == summary.model)?;
            steps.push(JournalStep::Summary {
                summary: summary.clone(),
                usage: usage.clone(),
            });
            continue;
        }
        if message.role == Role::Assistant {
            calls = message.tool_calls().cloned().collect();
            steps.push(JournalStep::Turn {
                message: message.clone(),
                usage: requests.next()?.clone(),
            });
            continue;
        }
        if message.parts.is_empty() {
            return None;
        }
        for part in &message.parts {
            let Part::ToolResult(result) = part else {
                return None;
            };
            let call = calls.iter().find(|c| c.id == result.call_id)?;
            steps.push(JournalStep::ToolResult {
                call: call.clone(),
                output: result.output.clone(),
            });
        }
    }
    Some((run[..first].to_vec(), steps))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::JournalStatus;
    use crate::session::run_state::{PausedCall, PausedTurn};
    use serde_json::json;

    fn request(model: &str, tokens: u64) -> RequestUsage {
        RequestUsage {
            model: model.into(),
            usage: Usage::new(tokens, 1),
            cost_usd: None,
            tool_definition_tokens: 0,
        }
    }

    fn calling(id: &str) -> (ToolCall, Message) {
        let call = ToolCall {
            id: id.into(),
            name: "lookup".into(),
            arguments: json!({}),
        };
        let message = Message {
            role: Role::Assistant,
            parts: vec![Part::ToolCall(call.clone())],
        };
        (call, message)
    }

    #[test]
    fn a_paused_run_with_summaries_journals_steps_that_replay_to_its_conversation() {
        let summary = |to| {
            Message::summary(Summary {
                text: format!("up to {to}"),
                from: 1,
                to,
                model: "cheap".into(),
            })
        };
        let history = vec![Message::user("task"), Message::assistant("a1")];
        let (c1, turn1) = calling("c1");
        let (c2, turn2) = calling("c2");
        let looked = Message::tool_results([ToolResult {
            call_id: "c1".into(),
            name: "lookup".into(),
            output: ToolOutput::text("looked"),
        }]);
        let run = [
            Message::user("now"),
            summary(2),
            turn1,
            looked,
            summary(4),
            turn2,
        ];
        let mut state = RunState::new(
            history.iter().chain(&run).cloned().collect(),
            Vec::new(),
            PausedTurn {
                text: String::new(),
                usage: Usage::new(40, 1),
                calls: vec![PausedCall {
                    call: c2,
                    output: None,
                    approval: None,
                }],
            },
            Usage::default(),
            2,
            serde_json::Map::new(),
        );
        state.requests = vec![
            request("cheap", 10),
            request("main", 20),
            request("cheap", 30),
            request("main", 40),
        ];

        let (input, steps) = paused_journal(&state, history.len());
        assert_eq!(input, [Message::user("now")], "the summaries are steps");
        let kinds: Vec<&str> = steps
            .iter()
            .map(|s| match s {
                JournalStep::Turn { .. } => "turn",
                JournalStep::ToolResult { .. } => "result",
                JournalStep::Summary { .. } => "summary",
            })
            .collect();
        assert_eq!(kinds, ["summary", "turn", "result", "summary", "turn"]);

        let replayed = replay(
            history,
            &JournaledRun {
                id: "r".into(),
                session: "s".into(),
                status: JournalStatus::Interrupted,
                base_version: 2,
                input,
                steps,
                context: serde_json::Value::Null,
                updated_at: std::time::SystemTime::now(),
            },
        );
        assert_eq!(replayed.messages, state.messages);
        assert_eq!(replayed.requests, state.requests);
        assert_eq!(replayed.usage, Usage::new(100, 4));
        assert_eq!(replayed.turns, 2, "summaries are not turns");
        assert_eq!(replayed.records[0].call, c1);
        assert!(matches!(replayed.end, ReplayEnd::OpenTurn { .. }));
    }
}
