//! A stored session's run and its step journal: starting the journal (or
//! taking over an interrupted run's), committing each turn, and going on
//! from the last committed step of an interrupted run.

use super::{Progress, Run, TurnOutput};
use crate::agent::approval::TurnCalls;
use crate::agent::journal::{ReplayEnd, Replayed, RunJournal, paused_journal, replay};
use crate::agent::run_setup::{Begin, StoreCommit};
use crate::agent::{AgentError, AgentEvent, RunStatus};
use crate::model::{Message, ModelRequest, ToolCall};
use crate::session::{JournalStart, new_run_id};
use crate::tool::ToolOutput;

impl Run {
    /// Once the run holds the session's lease: reads the stored history
    /// (a fresh run continues after turns stored since it was asked for), and
    /// starts the run's journal. A resumed interrupted run is rebuilt from
    /// its journal; a run resumed from a paused state journals what it has
    /// so far, then goes on journaling; a retried one goes on with the
    /// interrupted run it retries, if that is still interrupted.
    pub(super) async fn prepare(
        &mut self,
        begin: Begin,
        holder: &str,
    ) -> Result<Begin, AgentError> {
        let Some(commit) = self.commit.as_mut() else {
            return Ok(begin);
        };
        let (begin, journal) = match begin {
            Begin::Fresh(messages) => fresh(commit, messages, holder).await?,
            Begin::Journal(id) => take_over(commit, id, holder).await?,
            Begin::Retry(messages, id) => match take_over(commit, id, holder).await {
                // It finished meanwhile (or is not this session's): the call
                // runs as a new turn.
                Err(AgentError::NoInterruptedRun { .. }) => fresh(commit, messages, holder).await?,
                other => other?,
            },
            Begin::Resume(state, decisions) => {
                let (input, steps) = paused_journal(&state, commit.base);
                let start = JournalStart {
                    run: new_run_id(),
                    session: commit.id.clone(),
                    holder: holder.to_owned(),
                    base_version: commit.base as u64,
                    input,
                    context: commit.context.clone(),
                };
                let journal = RunJournal::begin(commit.store.clone(), &start, 0).await?;
                for step in steps {
                    journal.step(step).await?;
                }
                (Begin::Resume(state, decisions), journal)
            }
            Begin::Replayed(replayed) => return Ok(Begin::Replayed(replayed)),
        };
        self.journal = Some(journal);
        Ok(begin)
    }

    /// Commits a finished model turn (its assistant message, the last of
    /// the conversation) and the results its calls already have (refused
    /// by a hook).
    pub(super) async fn journal_turn(
        &self,
        journal: &RunJournal,
        run: &Progress,
        calls: &[ToolCall],
        prefilled: Option<&[Option<ToolOutput>]>,
    ) -> Result<(), AgentError> {
        let (Some(message), Some(usage)) = (run.request.messages.last(), run.requests.last())
        else {
            return Ok(());
        };
        journal.turn(message, usage).await?;
        for (call, output) in calls.iter().zip(prefilled.unwrap_or_default()) {
            if let Some(output) = output {
                journal.result(call, output).await?;
            }
        }
        Ok(())
    }

    /// Goes on from an interrupted run's last committed step: runs the
    /// calls that were in flight (a read-only or idempotent tool again; any
    /// other only once approved), or completes a run whose answer was
    /// committed. `None` when the run ended here (completed or paused).
    pub(super) async fn resume_replayed(
        &self,
        replayed: Replayed,
    ) -> Result<Option<Progress>, AgentError> {
        let mut run = Progress {
            request: ModelRequest::new(replayed.messages),
            records: replayed.records,
            usage: replayed.usage,
            requests: replayed.requests,
            turns: replayed.turns,
            answered: None,
        };
        match replayed.end {
            ReplayEnd::NextTurn => Ok(Some(run)),
            ReplayEnd::Answered(text) => {
                let reply = run.into_reply(text, RunStatus::Completed);
                self.complete(reply).await?;
                Ok(None)
            }
            ReplayEnd::OpenTurn {
                text,
                calls,
                outputs,
                usage,
            } => {
                let offer = crate::agent::offer::current(&self.inner)?;
                let tools =
                    crate::agent::deferral::plan(&self.inner, &offer, &run.request.messages).tools;
                let mut context = self.turn_context(&tools);
                context.interrupted = true;
                let done = context.run_calls(&calls, outputs, None).await;
                run.count_children(&self.child_usage);
                match done? {
                    TurnCalls::Done(outputs) => run.push_results(calls, outputs),
                    TurnCalls::Paused { outputs, pending } => {
                        let out = TurnOutput {
                            text,
                            blocks: Vec::new(),
                            calls,
                            usage,
                            cut: false,
                            model: 0,
                        };
                        self.pause(run, out, outputs, pending).await?;
                        return Ok(None);
                    }
                }
                self.emit(AgentEvent::TurnFinished {
                    turn: run.turns,
                    usage,
                })
                .await?;
                Ok(Some(run))
            }
        }
    }
}

/// A fresh run's journal, on the stored history as it is now.
async fn fresh(
    commit: &mut StoreCommit,
    messages: Vec<Message>,
    holder: &str,
) -> Result<(Begin, RunJournal), AgentError> {
    let messages = commit.rebase(messages).await?;
    let start = JournalStart {
        run: new_run_id(),
        session: commit.id.clone(),
        holder: holder.to_owned(),
        base_version: commit.base as u64,
        input: messages.get(commit.base..).unwrap_or_default().to_vec(),
        context: commit.context.clone(),
    };
    let journal = RunJournal::begin(commit.store.clone(), &start, 0).await?;
    Ok((Begin::Fresh(messages), journal))
}

/// The interrupted run `id` rebuilt from its journal, which this run takes
/// over.
async fn take_over(
    commit: &mut StoreCommit,
    id: String,
    holder: &str,
) -> Result<(Begin, RunJournal), AgentError> {
    let (history, run) = commit.load_journaled(&id).await?;
    let start = JournalStart {
        run: id,
        session: commit.id.clone(),
        holder: holder.to_owned(),
        base_version: commit.base as u64,
        input: run.input.clone(),
        context: run.context.clone(),
    };
    let steps = run.steps.len() as u64;
    let journal = RunJournal::begin(commit.store.clone(), &start, steps).await?;
    Ok((Begin::Replayed(Box::new(replay(history, &run))), journal))
}
