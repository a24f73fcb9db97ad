//! The model side: a [`Model`] that records the real one's requests and
//! streamed answers, and one that answers from the cassette.

use super::Cassette;
use super::file::{Entry, ModelExchange, RecordedEvent};
use crate::model::{Model, ModelError, ModelEvent, ModelRequest, ModelStream};
use futures::{Stream, StreamExt};
use serde_json::{Value, json};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

/// A request as the cassette keeps and compares it: what the model is
/// sent (system prompt, messages, tools, settings), never the key, URL or
/// headers of the provider.
pub(crate) fn normalise(request: &ModelRequest) -> Value {
    json!({
        "system": request.system,
        "messages": request.messages,
        "tools": &*request.tools,
        "settings": request.settings,
    })
}

/// Forwards to the real model and records each turn.
pub(crate) struct RecordingModel {
    real: Arc<dyn Model>,
    cassette: Cassette,
}

impl RecordingModel {
    pub(crate) fn new(real: Arc<dyn Model>, cassette: Cassette) -> Self {
        Self { real, cassette }
    }
}

impl Model for RecordingModel {
    fn name(&self) -> &str {
        self.real.name()
    }

    fn stream(&self, request: &ModelRequest) -> ModelStream {
        self.record(request, self.real.stream(request))
    }

    fn stream_with_fallback(&self, request: &ModelRequest) -> ModelStream {
        self.record(request, self.real.stream_with_fallback(request))
    }

    fn context_window(&self) -> Option<usize> {
        self.real.context_window()
    }

    fn native_tool_search(&self) -> bool {
        self.real.native_tool_search()
    }
}

impl RecordingModel {
    /// Records the turn `inner` streams.
    fn record(&self, request: &ModelRequest, inner: ModelStream) -> ModelStream {
        Box::pin(Recording {
            inner,
            turn: Some(Turn {
                exchange: ModelExchange {
                    model: self.real.name().to_owned(),
                    request: normalise(request),
                    events: Vec::new(),
                    ms: 0,
                },
                started: Instant::now(),
                cassette: self.cassette.clone(),
            }),
            finished: false,
        })
    }
}

/// A turn being recorded.
struct Turn {
    exchange: ModelExchange,
    started: Instant,
    cassette: Cassette,
}

impl Turn {
    fn keep(mut self) {
        self.exchange.ms = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.cassette.push(Entry::Model(self.exchange));
    }
}

/// The real stream, its events kept as they pass; the turn is written at
/// its end (or when it is dropped after its `Finished` event). A stream
/// that fails, or is dropped before it finished, marks the recording as
/// not clean.
struct Recording {
    inner: ModelStream,
    turn: Option<Turn>,
    finished: bool,
}

impl Stream for Recording {
    type Item = Result<ModelEvent, ModelError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let item = std::task::ready!(self.inner.poll_next_unpin(cx));
        match &item {
            Some(Ok(event)) => {
                if let Some(turn) = &mut self.turn
                    && let Some(kept) = RecordedEvent::of(event)
                {
                    turn.exchange.events.push(kept);
                }
                if matches!(event, ModelEvent::Finished(_)) {
                    self.finished = true;
                }
            }
            Some(Err(e)) => {
                if let Some(turn) = self.turn.take() {
                    turn.cassette.fail(format!("model request failed: {e}"));
                }
            }
            None => {
                if let Some(turn) = self.turn.take() {
                    turn.keep();
                }
            }
        }
        Poll::Ready(item)
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        if let Some(turn) = self.turn.take() {
            if self.finished {
                turn.keep();
            } else {
                turn.cassette
                    .fail("a model turn was cut short (cancelled)".to_owned());
            }
        }
    }
}

/// Answers from the cassette; the real model is never built.
pub(crate) struct ReplayModel {
    name: String,
    cassette: Cassette,
}

impl ReplayModel {
    pub(crate) fn new(name: String, cassette: Cassette) -> Self {
        Self { name, cassette }
    }
}

impl Model for ReplayModel {
    fn name(&self) -> &str {
        &self.name
    }

    fn stream(&self, request: &ModelRequest) -> ModelStream {
        match self.cassette.next_model(normalise(request)) {
            Ok(events) => {
                futures::stream::iter(events.into_iter().map(|e| Ok(e.to_event()))).boxed()
            }
            Err(e) => futures::stream::iter([Err(ModelError::Cassette(Box::new(e)))]).boxed(),
        }
    }
}
