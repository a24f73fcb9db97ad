//! Approvals for 2026-07-28 clients: that protocol forbids server-to-client
//! requests, so a served run that needs approval answers the `tools/call`
//! with an `InputRequiredResult` (the approval form as an elicitation input
//! request, and an opaque `requestState`); the client asks its user and
//! retries the call with the answer. Works over stateless HTTP too.
//!
//! The run itself stays in this process, parked on its approval question,
//! under an unguessable handle (the `requestState`); the retry hands the
//! answer to it and waits for its next question or its result. A parked run
//! whose retry never comes is denied after the approval timeout and
//! forgotten.

use super::approval;
use crate::policy::{ApprovalDecision, ApprovalRequest};
use crate::sync::MutexExt;
use crate::tool::Elicitation;
use rmcp::model::{
    CallToolResult, ElicitRequest, ElicitRequestParams, InputRequest, InputRequests,
    InputRequiredResult, InputResponses,
};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// The key of the approval form among the input requests.
const KEY: &str = "approval";

/// What a run driven for a 2026-07-28 client does next.
pub(crate) enum Step {
    /// It asks for approval; answer through the sender.
    Ask(ApprovalRequest, oneshot::Sender<ApprovalDecision>),
    /// It finished: the call's result (`None`: cancelled).
    Done(Option<CallToolResult>),
}

/// A run waiting for the client's retry.
struct Parked {
    steps: mpsc::Receiver<Step>,
    answer: oneshot::Sender<ApprovalDecision>,
}

/// Runs parked on an approval question, by handle.
#[derive(Clone, Default)]
pub(crate) struct ParkedRuns {
    runs: Arc<Mutex<HashMap<String, Parked>>>,
}

/// What the call answers this round.
pub(crate) enum Round {
    /// Ask the client (the `InputRequiredResult`).
    Input(InputRequiredResult),
    /// The run's result.
    Done(CallToolResult),
    /// The run was cancelled.
    Cancelled,
}

impl ParkedRuns {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Parked>> {
        self.runs.lock_unpoisoned()
    }

    /// Waits for the run's next step: a question parks it and becomes the
    /// input request; the end is the result.
    pub(crate) async fn next(&self, mut steps: mpsc::Receiver<Step>, timeout: Duration) -> Round {
        loop {
            let (question, answer) = match steps.recv().await {
                None | Some(Step::Done(None)) => return Round::Cancelled,
                Some(Step::Done(Some(result))) => return Round::Done(result),
                Some(Step::Ask(question, answer)) => (question, answer),
            };
            let Some(form) = form(&question) else {
                // Our own form is always valid; should it not be, deny.
                let _ = answer.send(ApprovalDecision::deny(
                    "the approval form could not be built",
                ));
                continue;
            };
            let handle = new_handle();
            self.lock().insert(handle.clone(), Parked { steps, answer });
            // A retry that never comes: the run's own wait denies it after
            // `timeout`; forget the parked run a little later.
            let runs = self.clone();
            let key = handle.clone();
            tokio::spawn(async move {
                tokio::time::sleep(timeout + Duration::from_secs(5)).await;
                runs.lock().remove(&key);
            });
            let mut requests = InputRequests::new();
            requests.insert(KEY.to_owned(), form);
            return Round::Input(InputRequiredResult::new(Some(requests), Some(handle)));
        }
    }

    /// A retry: hands the answer to the parked run and waits for its next
    /// step. `None` when no run is parked under `handle` (unknown, answered
    /// already, or forgotten after the timeout).
    pub(crate) async fn resume(
        &self,
        handle: &str,
        responses: Option<&InputResponses>,
        timeout: Duration,
    ) -> Option<Round> {
        let parked = self.lock().remove(handle)?;
        let answer = responses
            .and_then(|r| r.get(KEY))
            .map_or(ApprovalDecision::deny("no answer was given"), decision);
        // The run may have given up waiting already (its own timeout).
        let _ = parked.answer.send(answer);
        Some(self.next(parked.steps, timeout).await)
    }
}

/// A 2026-07-28 run's approval handler: hands the question to the call
/// handling the current round and waits for the client's retry (or the
/// timeout, which denies).
pub(crate) async fn ask(
    steps: &mpsc::Sender<Step>,
    question: ApprovalRequest,
    timeout: Duration,
) -> ApprovalDecision {
    let (tx, rx) = oneshot::channel();
    if steps.send(Step::Ask(question, tx)).await.is_err() {
        return ApprovalDecision::deny("the client went away before it could be asked");
    }
    match tokio::time::timeout(timeout, rx).await {
        Ok(Ok(decision)) => decision,
        _ => ApprovalDecision::deny(format!(
            "no answer within {} s, so it was not approved",
            timeout.as_secs()
        )),
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

/// The approval form as an elicitation input request.
fn form(question: &ApprovalRequest) -> Option<InputRequest> {
    let params: ElicitRequestParams = serde_json::from_value(json!({
        "mode": "form",
        "message": approval::form_message(question),
        "requestedSchema": approval::form_schema(),
    }))
    .ok()?;
    Some(InputRequest::Elicitation(ElicitRequest::new(params)))
}

/// The decision for the client's `ElicitResult`, as JSON.
fn decision(response: &Value) -> ApprovalDecision {
    let answer = match response.get("action").and_then(Value::as_str) {
        Some("accept") => Elicitation::Accepted(
            response
                .get("content")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
        ),
        Some("decline") => Elicitation::Declined,
        _ => Elicitation::Cancelled,
    };
    approval::decide(Ok(answer), Duration::ZERO)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::DecisionReason;
    use crate::tool::ToolSpec;

    fn question() -> ApprovalRequest {
        let spec = ToolSpec::new("delete_order", "Deletes", json!({"type": "object"}));
        ApprovalRequest::new("c1", &spec, json!({"id": 42}), DecisionReason::Callback)
    }

    #[tokio::test]
    async fn a_question_parks_the_run_and_the_retry_hands_it_the_answer() {
        let parked = ParkedRuns::default();
        let timeout = Duration::from_secs(30);
        let (tx, rx) = mpsc::channel(1);
        let run = tokio::spawn(async move {
            let decision = ask(&tx, question(), timeout).await;
            let text = format!("{decision:?}");
            let _ = tx
                .send(Step::Done(Some(CallToolResult::success(vec![
                    rmcp::model::ContentBlock::text(text),
                ]))))
                .await;
        });
        let Round::Input(input) = parked.next(rx, timeout).await else {
            panic!("the question comes back as input required");
        };
        let handle = input.request_state.clone().unwrap();
        assert!(input.input_requests.unwrap().contains_key(KEY));
        assert!(
            parked.resume("not-a-handle", None, timeout).await.is_none(),
            "an unknown handle resumes nothing"
        );
        let mut answers = InputResponses::new();
        answers.insert(
            KEY.to_owned(),
            json!({"action": "accept", "content": {"decision": "allow"}}),
        );
        let Some(Round::Done(result)) = parked.resume(&handle, Some(&answers), timeout).await
        else {
            panic!("the run finishes after the answer");
        };
        let text = serde_json::to_string(&result.content).unwrap();
        assert!(text.contains("Approve"), "{text}");
        assert!(
            parked
                .resume(&handle, Some(&answers), timeout)
                .await
                .is_none(),
            "a second retry finds nothing parked"
        );
        run.await.unwrap();
    }

    #[test]
    fn handles_differ() {
        assert_ne!(new_handle(), new_handle());
        assert_eq!(new_handle().len(), 32);
    }
}
