//! Tasks of a served agent kept in the store, so replicas sharing it answer
//! for each other's tasks (`tasks/get`, `tasks/update`, `tasks/cancel`):
//! [`SessionStore::task_write`](super::SessionStore::task_write) and the
//! methods beside it.
//!
//! The replica running a task writes its state (what `tasks/get` shows)
//! when it starts, whenever it changes and as a heartbeat; another replica
//! reads it from the store, and leaves what its clients ask of the task
//! (a cancel, answers to its questions) in the store for the running
//! replica to take.

use serde_json::{Map, Value};
use std::time::Duration;

/// A served task as the store keeps it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SharedTask {
    /// Who started it (the OAuth caller's key), or `None`: anybody who
    /// knows its id.
    pub owner: Option<String>,
    /// Its state as `tasks/get` shows it (JSON), written by its replica.
    pub state: Value,
    /// Whether the state is final: the task ended.
    pub ended: bool,
    /// How long ago its replica last wrote it (its heartbeat), by the
    /// store's clock.
    pub written_ago: Duration,
}

impl SharedTask {
    /// A task's record: its `owner`, `state`, whether it `ended`, and how
    /// long ago it was written.
    pub fn new(owner: Option<String>, state: Value, ended: bool, written_ago: Duration) -> Self {
        Self {
            owner,
            state,
            ended,
            written_ago,
        }
    }
}

/// What a replica that is not running a task asks of it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum TaskRequest {
    /// `tasks/cancel`.
    Cancel,
    /// `tasks/update`: answers to the task's questions, by key.
    Answers(Map<String, Value>),
}

/// What other replicas asked of a task since its replica last took them.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct TaskRequests {
    /// `tasks/cancel` was asked (it stays asked).
    pub cancel: bool,
    /// Answers not yet taken, by key (each is taken once).
    pub answers: Map<String, Value>,
}

impl TaskRequests {
    /// What was asked: a cancel, and answers by key.
    pub fn new(cancel: bool, answers: Map<String, Value>) -> Self {
        Self { cancel, answers }
    }
}

/// A duration in whole milliseconds, as stored.
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(crate) fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// Stored answers (a JSON object's text) as a map; anything else is none.
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(crate) fn decode_answers(text: &str) -> Map<String, Value> {
    match serde_json::from_str(text) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    }
}

/// A stored task state (JSON text) as JSON.
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(crate) fn decode_state(task: &str, text: &str) -> Result<Value, super::StoreError> {
    serde_json::from_str(text).map_err(|source| super::StoreError::Corrupt {
        what: format!("state of task \"{task}\""),
        source,
    })
}

/// A time in milliseconds since `then` when it is `now` (ms), as stored.
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(crate) fn since(then: i64, now: i64) -> Duration {
    Duration::from_millis(u64::try_from(now.saturating_sub(then)).unwrap_or(0))
}
