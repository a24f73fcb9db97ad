//! Calls parked on an input-required round, reachable from every replica
//! sharing the session store: a 2026-07-28 client's retry may reach any
//! replica behind a load balancer, not only the one whose call asked.
//!
//! A call that parks on a question (see [`mrtr`](super::mrtr)) is written
//! to the store under its `requestState` (with the tasks: one record kind,
//! see [`SessionStore::task_write`](crate::session::SessionStore::task_write)),
//! and its replica watches the record. A retry reaching another replica
//! leaves its answer there and waits; the parked call's replica finds the
//! answer (its [`RequestSweep`] looks for all parked calls at once every
//! [`POLL_INTERVAL`]), hands it to the call, and writes what
//! the call does next — its next question (parked and shared in turn), its
//! result, or its cancellation — which the waiting replica answers the
//! retry with.

use super::caller::Caller;
use super::mrtr::{KEY, ParkedRuns, Round};
use super::request_sweep::{Asked, ReplicaStore};
use super::task_owners::may_see;
use super::task_records::{POLL_INTERVAL, round_key as key, write_record};
use crate::session::TaskRequest;
use rmcp::model::{CallToolResult, InputRequiredResult, InputResponses};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// How long the store keeps a parked call's record: past the longest wait
/// of a question ([`DEFAULT_WAIT`](super::mrtr::DEFAULT_WAIT)) and then some.
const KEEP: Duration = Duration::from_secs(20 * 60);

/// How often a replica relaying a retry looks for the outcome.
const RELAY_POLL: Duration = Duration::from_millis(100);

/// A parked call's record: parked, or what it did once answered.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "round", rename_all = "snake_case")]
enum Outcome {
    /// Waiting for the retry.
    Parked,
    /// It asked its next question.
    Input { result: InputRequiredResult },
    /// It finished.
    Done { result: CallToolResult },
    /// It was cancelled.
    Cancelled,
    /// It is no longer parked (answered on its own replica, or forgotten
    /// after its wait).
    Gone,
}

impl Outcome {
    fn of(round: Round) -> Self {
        match round {
            Round::Input(result) => Outcome::Input { result },
            Round::Done(result) => Outcome::Done { result },
            Round::Cancelled => Outcome::Cancelled,
        }
    }
}

/// The parked calls of one server as kept in its session store (a parked
/// call's replica not heard from for the stale time is gone).
#[derive(Clone)]
pub(crate) struct SharedRounds(pub(crate) ReplicaStore);

impl SharedRounds {
    /// `round` parked its call (when it asks a question): writes it to the
    /// store and watches it for a retry that reaches another replica, until
    /// it is answered, forgotten, or the server closes.
    pub(crate) async fn share(
        &self,
        parked: &ParkedRuns,
        round: &Round,
        owner: Option<Arc<str>>,
        shutdown: &CancellationToken,
    ) {
        let Round::Input(input) = round else {
            return;
        };
        let Some(handle) = input.request_state.clone() else {
            return;
        };
        let watch = Watch {
            asked: self.0.sweep.watch(&key(&handle)),
            rounds: self.clone(),
            parked: parked.clone(),
            handle,
            owner,
        };
        if !watch.write(&Outcome::Parked, false).await {
            return;
        }
        tokio::spawn(watch.run(shutdown.clone()));
    }

    /// A retry whose `handle` this process does not hold: hands `answers`
    /// to the replica holding the call and waits for what the call does
    /// next. `None` when no replica holds it (unknown, answered already,
    /// forgotten, or its replica died).
    pub(crate) async fn relay(
        &self,
        handle: &str,
        caller: Option<&Caller>,
        answers: Option<&InputResponses>,
    ) -> Option<Round> {
        let key = key(handle);
        let record = self.0.store.task_read(&key).await.ok()??;
        if record.ended || !may_see(record.owner.as_deref(), caller) {
            return None;
        }
        // The call's answer under its key; a retry without one still
        // resumes it (with no answer, as on the call's own replica).
        let answer = answers.and_then(|a| a.get(KEY)).cloned();
        let mut given = Map::new();
        given.insert(KEY.to_owned(), answer.unwrap_or(Value::Null));
        let request = TaskRequest::Answers(given);
        if !matches!(self.0.store.task_request(&key, &request).await, Ok(true)) {
            return None;
        }
        loop {
            tokio::time::sleep(RELAY_POLL).await;
            let record = self.0.store.task_read(&key).await.ok()??;
            if !record.ended {
                if record.written_ago > self.0.stale_after {
                    return None;
                }
                continue;
            }
            return match serde_json::from_value(record.state).ok()? {
                Outcome::Input { result } => Some(Round::Input(result)),
                Outcome::Done { result } => Some(Round::Done(result)),
                Outcome::Cancelled => Some(Round::Cancelled),
                Outcome::Parked | Outcome::Gone => None,
            };
        }
    }

    /// A retry's request was cancelled: the call parked under `handle` on
    /// another replica is cancelled too (nothing if it is not parked).
    pub(crate) async fn cancel(&self, handle: &str) {
        let _ = self
            .0
            .store
            .task_request(&key(handle), &TaskRequest::Cancel)
            .await;
    }
}

/// A call of this process parked under `handle`, watched for a retry that
/// reached another replica.
struct Watch {
    /// What the sweep finds left for the call: a retry's answer, a cancel.
    asked: Asked,
    rounds: SharedRounds,
    parked: ParkedRuns,
    handle: String,
    owner: Option<Arc<str>>,
}

impl Watch {
    async fn run(mut self, shutdown: CancellationToken) {
        let heartbeat = self.rounds.0.stale_after / 3;
        let mut written = Instant::now();
        loop {
            tokio::select! {
                () = self.asked.found() => {}
                () = tokio::time::sleep(POLL_INTERVAL) => {}
                () = shutdown.cancelled() => return,
            }
            if !self.parked.holds(&self.handle) {
                self.write(&Outcome::Gone, true).await;
                return;
            }
            let asked = self.asked.take().unwrap_or_default();
            if asked.cancel {
                self.parked.cancel(&self.handle);
                self.write(&Outcome::Cancelled, true).await;
                return;
            }
            if let Some(answer) = asked.answers.get(KEY) {
                let mut answers = InputResponses::new();
                if !answer.is_null() {
                    answers.insert(KEY.to_owned(), answer.clone());
                }
                // The call runs on until its next step; the heartbeat goes
                // on meanwhile, so the waiting replica knows this one lives.
                let resumed = {
                    let resuming = self.parked.resume(&self.handle, Some(&answers));
                    tokio::pin!(resuming);
                    loop {
                        tokio::select! {
                            resumed = &mut resuming => break resumed,
                            () = tokio::time::sleep(heartbeat) => {
                                self.write(&Outcome::Parked, false).await;
                            }
                            () = shutdown.cancelled() => return,
                        }
                    }
                };
                let Some(round) = resumed else {
                    self.write(&Outcome::Gone, true).await;
                    return;
                };
                // Its next question is parked here too: shared first (and
                // watched by this same watch), so the retry that answers it
                // may reach any replica.
                let next = match &round {
                    Round::Input(input) => input.request_state.clone(),
                    Round::Done(_) | Round::Cancelled => None,
                };
                let parked_next = match next {
                    Some(next) => {
                        let watch_next = Watch {
                            asked: self.rounds.0.sweep.watch(&key(&next)),
                            handle: next,
                            rounds: self.rounds.clone(),
                            parked: self.parked.clone(),
                            owner: self.owner.clone(),
                        };
                        watch_next
                            .write(&Outcome::Parked, false)
                            .await
                            .then_some(watch_next)
                    }
                    None => None,
                };
                self.write(&Outcome::of(round), true).await;
                match parked_next {
                    Some(watch_next) => {
                        self = watch_next;
                        written = Instant::now();
                        continue;
                    }
                    None => return,
                }
            }
            if written.elapsed() >= heartbeat && self.write(&Outcome::Parked, false).await {
                written = Instant::now();
            }
        }
    }

    /// Writes the record; `false` if the store failed (logged).
    async fn write(&self, outcome: &Outcome, ended: bool) -> bool {
        let Ok(state) = serde_json::to_value(outcome) else {
            return false;
        };
        let key = key(&self.handle);
        let owner = self.owner.as_deref();
        write_record(&*self.rounds.0.store, &key, owner, &state, ended, KEEP).await
    }
}
