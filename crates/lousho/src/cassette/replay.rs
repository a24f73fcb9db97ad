//! Replay's side of a cassette: the recorded entries, what the run used of
//! them, and the first request that did not match.

use super::diff::diff;
use super::error::CassetteError;
use super::file::{Entry, McpExchange, ModelExchange, Outcome, RecordedEvent};
use super::{Cassette, Matching};
use crate::model::Message;
use serde_json::Value;
use std::collections::BTreeMap;

/// The recording being replayed.
#[derive(Default)]
pub(super) struct Tape {
    input: Option<Vec<Message>>,
    outcome: Option<Outcome>,
    models: Vec<ModelExchange>,
    /// The next model request's index.
    next_model: usize,
    /// Each server's exchanges and notices, in recorded order.
    pub(super) servers: BTreeMap<String, Vec<Item>>,
    /// The first request that did not match.
    mismatch: Option<CassetteError>,
}

/// One of a server's recorded messages.
#[cfg_attr(not(feature = "mcp-client"), allow(dead_code))]
pub(super) enum Item {
    Exchange {
        exchange: Box<McpExchange>,
        used: bool,
    },
    Notice {
        message: Value,
        sent: bool,
    },
}

impl Tape {
    pub(super) fn new(entries: Vec<Entry>) -> Self {
        let mut tape = Tape::default();
        for entry in entries {
            match entry {
                Entry::Header(_) => {}
                Entry::Input(i) => tape.input = Some(i.messages),
                Entry::Outcome(o) => tape.outcome = Some(o),
                Entry::Model(m) => tape.models.push(m),
                Entry::Mcp(exchange) => tape
                    .servers
                    .entry(exchange.server.clone())
                    .or_default()
                    .push(Item::Exchange {
                        exchange: Box::new(exchange),
                        used: false,
                    }),
                Entry::McpNotification(n) => {
                    tape.servers
                        .entry(n.server)
                        .or_default()
                        .push(Item::Notice {
                            message: n.message,
                            sent: false,
                        })
                }
            }
        }
        tape
    }

    pub(super) fn model_name(&self) -> String {
        self.models
            .first()
            .map_or_else(|| "cassette".to_owned(), |m| m.model.clone())
    }

    pub(super) fn input(&self) -> Option<Vec<Message>> {
        self.input.clone()
    }

    pub(super) fn outcome(&self) -> Option<Outcome> {
        self.outcome.clone()
    }

    pub(super) fn note(&mut self, e: &CassetteError) {
        if self.mismatch.is_none() {
            self.mismatch = Some(e.clone());
        }
    }

    pub(super) fn check(&self) -> Result<(), CassetteError> {
        if let Some(e) = &self.mismatch {
            return Err(e.clone());
        }
        if self.next_model < self.models.len() {
            return Err(CassetteError::Unused {
                made: self.next_model,
                recorded: self.models.len(),
            });
        }
        Ok(())
    }

    fn next_model(
        &mut self,
        request: &Value,
        matching: Matching,
    ) -> Result<ModelExchange, CassetteError> {
        let n = self.next_model + 1;
        let Some(recorded) = self.models.get(self.next_model) else {
            return Err(CassetteError::Exhausted {
                what: format!("model request {n}"),
                recorded: self.models.len(),
            });
        };
        if matching == Matching::Exact && recorded.request != *request {
            return Err(CassetteError::Mismatch {
                what: format!("model request {n}"),
                diff: diff(&recorded.request, request),
            });
        }
        self.next_model += 1;
        Ok(recorded.clone())
    }
}

impl Cassette {
    /// Replaying: the recorded answer to the model request `request`
    /// (normalised, not yet redacted).
    pub(crate) fn next_model(&self, request: Value) -> Result<Vec<RecordedEvent>, CassetteError> {
        let request = self.redacted(request);
        let mut state = self.lock();
        match state.tape.next_model(&request, self.inner.matching) {
            Ok(exchange) => {
                let events = exchange.events.clone();
                state.summary.count(&Entry::Model(exchange));
                Ok(events)
            }
            Err(e) => {
                state.tape.note(&e);
                Err(e)
            }
        }
    }
}
