//! Questions to 2026-07-28 clients: that protocol forbids server-to-client
//! requests, so a served call that needs its client — an approval, a
//! `ToolContext` elicitation or sampling request, a `model: sampling` turn —
//! answers the `tools/call` with an `InputRequiredResult` (the question as
//! an input request, and an opaque `requestState`); the client answers it
//! and retries the call with the answer. Works over every transport,
//! stateless HTTP included.
//!
//! The call itself (an agent run or a direct tool) runs on in this process,
//! parked on its question under an unguessable handle (the `requestState`);
//! the retry hands the answer to it and waits for its next question or its
//! result. One question per round: a run that asks several at once (tools
//! in parallel) gets them asked one after the other. A parked call whose
//! retry never comes gets no answer after the question's wait (the approval
//! timeout, the tool's own timeout, or [`DEFAULT_WAIT`]) and is forgotten.

use rmcp::model::{
    CallToolResult, InputRequest, InputRequests, InputRequiredResult, InputResponses,
};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

/// How long a question without a wait of its own (a `ToolContext` request
/// without a timeout, a `model: sampling` turn) waits for the retry.
pub(crate) const DEFAULT_WAIT: Duration = Duration::from_secs(600);

/// The key of the question among the input requests.
pub(crate) const KEY: &str = "q";

/// A question of a parked call.
pub(crate) struct Question {
    request: InputRequest,
    /// The client's answer (`None`: the retry carried none).
    answer: oneshot::Sender<Option<Value>>,
    wait: Duration,
}

/// What a call driven for a 2026-07-28 client does next.
pub(crate) enum Step {
    /// It asks the client.
    Ask(Question),
    /// It finished: the call's result (`None`: cancelled).
    Done(Option<CallToolResult>),
}

/// A call's way to its rounds: what the call asks through
/// ([`Rounds::ask`]); the other end is [`ParkedRuns::next`].
#[derive(Clone, Debug)]
pub(crate) struct Rounds {
    steps: mpsc::Sender<Step>,
}

/// Why a question got no answer.
#[derive(Debug)]
pub(crate) enum Unanswered {
    /// The client is gone (the call was cancelled or the round given up).
    Gone,
    /// No retry within the wait.
    TimedOut(Duration),
    /// The retry carried no answer to it.
    NoAnswer,
}

impl Rounds {
    /// Asks the client `request` in the next round and waits (at most
    /// `wait`) for the retry's answer.
    pub(crate) async fn ask(
        &self,
        request: InputRequest,
        wait: Duration,
    ) -> Result<Value, Unanswered> {
        let (tx, rx) = oneshot::channel();
        let question = Question {
            request,
            answer: tx,
            wait,
        };
        if self.steps.send(Step::Ask(question)).await.is_err() {
            return Err(Unanswered::Gone);
        }
        match tokio::time::timeout(wait, rx).await {
            Ok(Ok(Some(answer))) => Ok(answer),
            Ok(Ok(None)) => Err(Unanswered::NoAnswer),
            Ok(Err(_)) => Err(Unanswered::Gone),
            Err(_) => Err(Unanswered::TimedOut(wait)),
        }
    }
}

/// A call in rounds, as the round that waits for it holds it.
pub(crate) struct Driven {
    steps: mpsc::Receiver<Step>,
    /// Cancels the call (a cancelled retry, server shutdown).
    pub(crate) cancel: CancellationToken,
}

/// Starts a call in rounds: the call asks through the [`Rounds`], the round
/// waits on the [`Driven`] end; `done` is how the call reports its end.
pub(crate) fn start(cancel: CancellationToken) -> (Rounds, Driven) {
    let (tx, rx) = mpsc::channel(1);
    (Rounds { steps: tx }, Driven { steps: rx, cancel })
}

impl Rounds {
    /// Reports the call's end (`None`: cancelled).
    pub(crate) async fn done(&self, result: Option<CallToolResult>) {
        let _ = self.steps.send(Step::Done(result)).await;
    }
}

/// A call waiting for the client's retry.
struct Parked {
    driven: Driven,
    answer: oneshot::Sender<Option<Value>>,
}

/// Calls parked on a question, by handle.
#[derive(Clone, Default)]
pub(crate) struct ParkedRuns {
    runs: Arc<Mutex<HashMap<String, Parked>>>,
}

/// What the call answers this round.
pub(crate) enum Round {
    /// Ask the client (the `InputRequiredResult`).
    Input(InputRequiredResult),
    /// The call's result.
    Done(CallToolResult),
    /// The call was cancelled.
    Cancelled,
}

impl ParkedRuns {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Parked>> {
        self.runs.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits for the call's next step: a question parks it and becomes the
    /// input request; the end is the result. Dropped (the round's request
    /// cancelled), it cancels the call.
    pub(crate) async fn next(&self, driven: Driven) -> Round {
        let mut guard = CancelUnlessParked(Some(driven));
        let step = match guard.0.as_mut() {
            Some(driven) => driven.steps.recv().await,
            None => None,
        };
        let question = match step {
            Some(Step::Ask(question)) => question,
            // The call ended by itself: nothing to cancel.
            Some(Step::Done(Some(result))) => {
                guard.0 = None;
                return Round::Done(result);
            }
            None | Some(Step::Done(None)) => {
                guard.0 = None;
                return Round::Cancelled;
            }
        };
        let Some(driven) = guard.0.take() else {
            return Round::Cancelled;
        };
        let Question {
            request,
            answer,
            wait,
        } = question;
        let handle = new_handle();
        self.lock()
            .insert(handle.clone(), Parked { driven, answer });
        // A retry that never comes: the call's own wait gives up after
        // `wait`; forget the parked call (and so cancel it) a little later.
        let runs = self.clone();
        let key = handle.clone();
        tokio::spawn(async move {
            tokio::time::sleep(wait + Duration::from_secs(5)).await;
            let forgotten = runs.lock().remove(&key);
            if let Some(parked) = forgotten {
                parked.driven.cancel.cancel();
            }
        });
        let mut requests = InputRequests::new();
        requests.insert(KEY.to_owned(), request);
        Round::Input(InputRequiredResult::new(Some(requests), Some(handle)))
    }

    /// Whether a call is parked under `handle`.
    pub(crate) fn holds(&self, handle: &str) -> bool {
        self.lock().contains_key(handle)
    }

    /// Cancels the call parked under `handle` (a cancelled retry on
    /// another replica), if any.
    pub(crate) fn cancel(&self, handle: &str) {
        let parked = self.lock().remove(handle);
        if let Some(parked) = parked {
            parked.driven.cancel.cancel();
        }
    }

    /// A retry: hands the answer to the parked call and waits for its next
    /// step. `None` when no call is parked under `handle` (unknown, answered
    /// already, or forgotten after its wait).
    pub(crate) async fn resume(
        &self,
        handle: &str,
        responses: Option<&InputResponses>,
    ) -> Option<Round> {
        let parked = self.lock().remove(handle)?;
        let answer = responses.and_then(|r| r.get(KEY)).cloned();
        // The call may have given up waiting already (its own wait).
        let _ = parked.answer.send(answer);
        Some(self.next(parked.driven).await)
    }
}

/// Cancels the call when a round stops waiting for it without parking it
/// (the round's request was cancelled).
struct CancelUnlessParked(Option<Driven>);

impl Drop for CancelUnlessParked {
    fn drop(&mut self) {
        if let Some(driven) = self.0.take() {
            driven.cancel.cancel();
        }
    }
}

/// An unguessable handle: 128 bits of SipHash keyed with the process's
/// random keys (`RandomState`, seeded by the OS) over a counter and the time.
fn new_handle() -> String {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let half = |salt: u64| {
        let mut h = std::hash::RandomState::new().build_hasher();
        h.write_u64(salt);
        h.write_u64(n);
        h.write_u128(now);
        h.finish()
    };
    format!("{:016x}{:016x}", half(1), half(2))
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::FutureExt;
    use rmcp::model::{ContentBlock, ElicitRequest, ElicitRequestParams};
    use serde_json::json;

    fn question() -> InputRequest {
        let params: ElicitRequestParams = serde_json::from_value(json!({
            "mode": "form", "message": "Proceed?",
            "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
        }))
        .unwrap();
        InputRequest::Elicitation(ElicitRequest::new(params))
    }

    #[tokio::test]
    async fn a_question_parks_the_call_and_the_retry_hands_it_the_answer() {
        let parked = ParkedRuns::default();
        let cancel = CancellationToken::new();
        let (rounds, driven) = start(cancel.clone());
        let call = tokio::spawn(async move {
            let answer = rounds.ask(question(), Duration::from_secs(30)).await;
            let text = format!("{answer:?}");
            rounds
                .done(Some(CallToolResult::success(vec![ContentBlock::text(
                    text,
                )])))
                .await;
        });
        let Round::Input(input) = parked.next(driven).await else {
            panic!("the question comes back as input required");
        };
        let handle = input.request_state.clone().unwrap();
        assert!(input.input_requests.unwrap().contains_key(KEY));
        assert!(
            parked.resume("not-a-handle", None).await.is_none(),
            "an unknown handle resumes nothing"
        );
        let mut answers = InputResponses::new();
        answers.insert(
            KEY.to_owned(),
            json!({"action": "accept", "content": {"ok": true}}),
        );
        let Some(Round::Done(result)) = parked.resume(&handle, Some(&answers)).await else {
            panic!("the call finishes after the answer");
        };
        let text = serde_json::to_string(&result.content).unwrap();
        assert!(text.contains("accept"), "{text}");
        assert!(
            parked.resume(&handle, Some(&answers)).await.is_none(),
            "a second retry finds nothing parked"
        );
        call.await.unwrap();
        assert!(!cancel.is_cancelled());
    }

    #[tokio::test]
    async fn a_round_given_up_before_the_question_cancels_the_call() {
        let parked = ParkedRuns::default();
        let cancel = CancellationToken::new();
        let (_rounds, driven) = start(cancel.clone());
        assert!(parked.next(driven).now_or_never().is_none());
        assert!(cancel.is_cancelled(), "dropping the round cancels the call");
    }

    #[test]
    fn handles_differ() {
        assert_ne!(new_handle(), new_handle());
        assert_eq!(new_handle().len(), 32);
    }
}
