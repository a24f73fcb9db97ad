use crate::model::{
    FinishReason, Model, ModelError, ModelEvent, ModelRequest, ModelStream, ToolCall, Usage,
};
use crate::sync::MutexExt;
use futures::{StreamExt, stream};
use serde_json::Value;
use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One scripted model turn: text, tool calls, usage, or an error.
#[derive(Debug, Clone, Default)]
#[must_use]
pub struct ScriptedTurn {
    text: Option<String>,
    calls: Vec<(Option<String>, String, Value)>,
    usage: Option<Usage>,
    error: Option<String>,
    delay: Option<Duration>,
    hang: bool,
}

impl ScriptedTurn {
    /// A turn that answers with text.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: Some(text.into()),
            ..Self::default()
        }
    }

    /// A turn that calls one tool.
    pub fn tool_call(name: impl Into<String>, arguments: Value) -> Self {
        Self::default().and_tool_call(name, arguments)
    }

    /// A turn that fails with a model error.
    pub fn error(message: impl Into<String>) -> Self {
        Self {
            error: Some(message.into()),
            ..Self::default()
        }
    }

    /// A turn that never finishes (for cancellation tests).
    pub fn hang() -> Self {
        Self {
            hang: true,
            ..Self::default()
        }
    }

    /// Adds a tool call (its id is made up: `call_<turn>_<index>`).
    pub fn and_tool_call(mut self, name: impl Into<String>, arguments: Value) -> Self {
        self.calls.push((None, name.into(), arguments));
        self
    }

    /// Adds a tool call with a given id.
    pub fn and_tool_call_with_id(
        mut self,
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: Value,
    ) -> Self {
        self.calls.push((Some(id.into()), name.into(), arguments));
        self
    }

    /// Adds text before the tool calls.
    pub fn and_text(mut self, text: impl Into<String>) -> Self {
        self.text = Some(text.into());
        self
    }

    /// Reports this usage.
    pub fn usage(mut self, input_tokens: u64, output_tokens: u64) -> Self {
        self.usage = Some(Usage::new(input_tokens, output_tokens));
        self
    }

    /// Waits this long before answering.
    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay = Some(delay);
        self
    }

    fn events(&self, turn: usize) -> Vec<Result<ModelEvent, ModelError>> {
        if let Some(e) = &self.error {
            return vec![Err(ModelError::Scripted(e.clone()))];
        }
        let mut out = Vec::new();
        if let Some(t) = &self.text {
            out.push(Ok(ModelEvent::TextDelta(t.clone())));
        }
        for (i, (id, name, args)) in self.calls.iter().enumerate() {
            out.push(Ok(ModelEvent::ToolCall(ToolCall {
                id: id.clone().unwrap_or_else(|| format!("call_{turn}_{i}")),
                name: name.clone(),
                arguments: args.clone(),
            })));
        }
        if let Some(u) = self.usage {
            out.push(Ok(ModelEvent::Usage(u)));
        }
        let finish = if self.calls.is_empty() {
            FinishReason::Stop
        } else {
            FinishReason::ToolCalls
        };
        out.push(Ok(ModelEvent::Finished(finish)));
        out
    }
}

struct Inner {
    script: Vec<ScriptedTurn>,
    next: Mutex<usize>,
    repeat: bool,
    record: bool,
    requests: Mutex<Vec<ModelRequest>>,
}

/// A model that plays a script of turns and records every request it got.
///
/// Clones share the script and the record, so keep a clone to assert on what
/// the agent sent:
///
/// ```
/// # use lousho::model::testing::{ScriptedModel, ScriptedTurn};
/// let model = ScriptedModel::new([ScriptedTurn::text("hello")]);
/// let handle = model.clone();
/// // … build an agent with `model`, send …
/// assert_eq!(handle.requests().len(), 0);
/// ```
#[derive(Clone)]
pub struct ScriptedModel {
    inner: Arc<Inner>,
}

impl fmt::Debug for ScriptedModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScriptedModel")
            .field("turns", &self.inner.script.len())
            .field("played", &self.played())
            .finish()
    }
}

impl ScriptedModel {
    /// A model that plays `turns` in order; one past the end is an error.
    pub fn new(turns: impl IntoIterator<Item = ScriptedTurn>) -> Self {
        Self::build(turns.into_iter().collect(), false, true)
    }

    /// A model that plays `turns` over and over and records nothing (for
    /// benchmarks and long-running tests).
    pub fn repeating(turns: impl IntoIterator<Item = ScriptedTurn>) -> Self {
        Self::build(turns.into_iter().collect(), true, false)
    }

    fn build(script: Vec<ScriptedTurn>, repeat: bool, record: bool) -> Self {
        Self {
            inner: Arc::new(Inner {
                script,
                next: Mutex::new(0),
                repeat,
                record,
                requests: Mutex::new(Vec::new()),
            }),
        }
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<ModelRequest> {
        self.inner.requests.lock_unpoisoned().clone()
    }

    /// The last request received.
    pub fn last_request(&self) -> Option<ModelRequest> {
        self.inner.requests.lock_unpoisoned().last().cloned()
    }

    /// How many turns were played.
    pub fn played(&self) -> usize {
        *self.inner.next.lock_unpoisoned()
    }
}

impl Model for ScriptedModel {
    fn name(&self) -> &str {
        "scripted"
    }

    fn stream(&self, request: &ModelRequest) -> ModelStream {
        if self.inner.record {
            self.inner.requests.lock_unpoisoned().push(request.clone());
        }
        let turn_index = {
            let mut next = self.inner.next.lock_unpoisoned();
            let i = *next;
            *next += 1;
            i
        };
        let len = self.inner.script.len();
        let turn = if self.inner.repeat && len > 0 {
            self.inner.script.get(turn_index % len)
        } else {
            self.inner.script.get(turn_index)
        };
        let Some(turn) = turn else {
            let e = ModelError::Scripted(format!(
                "no scripted turn left: the script has {len} turns and turn {} was requested",
                turn_index + 1
            ));
            return Box::pin(stream::iter([Err(e)]));
        };
        let events: VecDeque<_> = turn.events(turn_index).into();
        let (delay, hang) = (turn.delay, turn.hang);
        if delay.is_none() && !hang {
            return Box::pin(stream::iter(events));
        }
        Box::pin(
            stream::once(async move {
                if hang {
                    futures::future::pending::<()>().await;
                }
                if let Some(d) = delay {
                    tokio::time::sleep(d).await;
                }
                stream::iter(events)
            })
            .flatten(),
        )
    }
}
