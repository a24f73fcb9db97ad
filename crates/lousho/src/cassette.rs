//! Cassettes: record one real run — the model's streamed answers and every
//! MCP exchange — and replay it offline, with no API key, no network and no
//! server process, failing with a readable diff when the agent's requests
//! drift from the recorded ones.
//!
//! A cassette is one JSON Lines file (readable in a diff): a header, the
//! run's input, then in the order they completed each model request
//! (normalised: system prompt, messages, tools, settings) with its streamed
//! events, each MCP exchange per server (`initialize`, listings, calls, with
//! the notifications the server sent meanwhile), and the run's outcome.
//! Durations are kept (`ms`), not replayed.
//!
//! - Record: [`Cassette::record`], then build the agent with
//!   [`AgentBuilder::cassette`](crate::AgentBuilder::cassette) (or wrap a
//!   model with [`Cassette::model`] and give MCP connections
//!   [`ConnectOptions::cassette`](crate::mcp::ConnectOptions::cassette)),
//!   run, and [`save`](Cassette::save). `save` refuses a run that saw a
//!   failure, so a bad run never overwrites a good cassette.
//!   [`AgentBuilder::record`](crate::AgentBuilder::record) does all of it.
//! - Replay: [`Cassette::replay`] reads the file; the model answers from it
//!   (the real one is never built) and MCP servers are neither spawned nor
//!   dialled: a replay transport answers rmcp's requests from the file,
//!   matched per server by method and parameters (ids renumbered).
//!   [`AgentBuilder::replay`](crate::AgentBuilder::replay) is the three-line
//!   test: it replays the recorded input and compares the outcome.
//! - Secrets: [`Redaction`] (API-key variables, MCP header and environment
//!   values, secret-named keys, your values and patterns) is applied to
//!   every entry before it is written.
//!
//! [`Matching::Exact`] (the default) compares each model request with the
//! recorded one; [`Matching::InOrder`] answers model requests in recorded
//! order without comparing them and lets an MCP request whose parameters
//! changed take the next recorded one of its method (for runs with
//! incidental differences, a timestamp in a prompt).

mod diff;
mod error;
mod file;
#[cfg(feature = "mcp-client")]
pub(crate) mod mcp;
mod model;
mod redact;
mod replay;

pub use error::CassetteError;
pub use file::{CASSETTE_FORMAT, Outcome, OutcomeCall};
pub use redact::{MIN_SECRET_LEN, REDACTED, Redaction};

use crate::model::{Message, Model, ModelError, Usage};
use crate::sync::MutexExt;
use file::{Entry, Input};
use replay::Tape;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// How a replay matches the run's requests with the recorded ones.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Matching {
    /// Every model request must equal the recorded one (after
    /// normalisation and redaction); an MCP request is answered by the
    /// recorded one with the same method and parameters.
    #[default]
    Exact,
    /// Lenient: model requests are answered in recorded order without
    /// being compared; an MCP request with no exact match takes the next
    /// unused recorded request of the same method.
    InOrder,
}

/// Options of [`Cassette::record_with`] and [`Cassette::replay_with`].
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
#[must_use]
pub struct CassetteOptions {
    /// The secrets to keep out of the file (applied to requests compared in
    /// replay too).
    pub redaction: Redaction,
    /// How a replay matches requests.
    pub matching: Matching,
}

impl CassetteOptions {
    /// The defaults: secret keys redacted, exact matching.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the redaction.
    pub fn redaction(mut self, redaction: Redaction) -> Self {
        self.redaction = redaction;
        self
    }

    /// Sets the matching.
    pub fn matching(mut self, matching: Matching) -> Self {
        self.matching = matching;
        self
    }
}

/// A cassette being recorded or replayed. Cheap to clone: clones share it.
#[derive(Clone)]
pub struct Cassette {
    inner: Arc<Inner>,
}

struct Inner {
    path: PathBuf,
    replaying: bool,
    matching: Matching,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    redaction: Redaction,
    /// Recording: the entries so far.
    entries: Vec<Entry>,
    /// Recording: the first failure seen (the run is not clean).
    failure: Option<String>,
    /// Replay: what the file holds, and what was used of it.
    tape: Tape,
    /// What the run did so far (recorded or replayed).
    summary: CassetteSummary,
}

impl fmt::Debug for Cassette {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cassette")
            .field("path", &self.inner.path)
            .field("replaying", &self.inner.replaying)
            .field("matching", &self.inner.matching)
            .finish_non_exhaustive()
    }
}

impl Cassette {
    /// A cassette to record into `path` (written by [`save`](Self::save)).
    pub fn record(path: impl Into<PathBuf>) -> Self {
        Self::record_with(path, CassetteOptions::default())
    }

    /// [`record`](Self::record) with options.
    pub fn record_with(path: impl Into<PathBuf>, options: CassetteOptions) -> Self {
        Self::new(path.into(), false, options, Tape::default())
    }

    /// Reads the cassette at `path` to replay it.
    pub fn replay(path: impl Into<PathBuf>) -> Result<Self, CassetteError> {
        Self::replay_with(path, CassetteOptions::default())
    }

    /// [`replay`](Self::replay) with options.
    pub fn replay_with(
        path: impl Into<PathBuf>,
        options: CassetteOptions,
    ) -> Result<Self, CassetteError> {
        let path = path.into();
        let tape = Tape::new(file::read(&path)?);
        Ok(Self::new(path, true, options, tape))
    }

    fn new(path: PathBuf, replaying: bool, options: CassetteOptions, tape: Tape) -> Self {
        Self {
            inner: Arc::new(Inner {
                path,
                replaying,
                matching: options.matching,
                state: Mutex::new(State {
                    redaction: options.redaction,
                    tape,
                    ..State::default()
                }),
            }),
        }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Whether this cassette replays (rather than records).
    pub fn is_replaying(&self) -> bool {
        self.inner.replaying
    }

    /// The model to run with: recording, `real()` wrapped so its requests
    /// and answers are kept; replaying, a model answering from the cassette
    /// (`real` is not called: no key is needed).
    pub fn model(
        &self,
        real: impl FnOnce() -> Result<Arc<dyn Model>, ModelError>,
    ) -> Result<Arc<dyn Model>, ModelError> {
        match self.replay_model() {
            Some(model) => Ok(model),
            None => Ok(self.record_model(real()?)),
        }
    }

    /// Replaying: the model answering from the cassette (named as the
    /// recorded one); `None` when recording.
    pub(crate) fn replay_model(&self) -> Option<Arc<dyn Model>> {
        self.inner.replaying.then(|| {
            let name = self.lock().tape.model_name();
            Arc::new(model::ReplayModel::new(name, self.clone())) as Arc<dyn Model>
        })
    }

    /// `real`, recorded into this cassette.
    pub(crate) fn record_model(&self, real: Arc<dyn Model>) -> Arc<dyn Model> {
        Arc::new(model::RecordingModel::new(real, self.clone()))
    }

    /// Recording: keeps the messages the run is sent (what a replay sends
    /// again).
    pub fn set_input(&self, messages: &[Message]) {
        if !self.inner.replaying {
            self.lock().entries.push(Entry::Input(Input {
                messages: messages.to_vec(),
            }));
        }
    }

    /// Replaying: the messages the recorded run was sent.
    pub fn input(&self) -> Result<Vec<Message>, CassetteError> {
        self.lock()
            .tape
            .input()
            .ok_or_else(|| CassetteError::NoInput {
                path: self.inner.path.clone(),
            })
    }

    /// Replaying: the recorded run's outcome, when it was saved with one.
    pub fn recorded_outcome(&self) -> Option<Outcome> {
        self.lock().tape.outcome()
    }

    /// Recording: marks the run as failed, so [`save`](Self::save) refuses
    /// it. The wrappers call it on a model or transport error.
    pub fn fail(&self, reason: impl Into<String>) {
        let mut state = self.lock();
        if state.failure.is_none() {
            state.failure = Some(reason.into());
        }
    }

    /// Recording: writes the cassette (header, entries, `outcome`), over
    /// any file at the path — unless the run saw a failure
    /// ([`CassetteError::NotClean`]), which leaves the file as it was.
    pub fn save(&self, outcome: &Outcome) -> Result<(), CassetteError> {
        if self.inner.replaying {
            return Err(self.wrong_mode("replaying", "recording"));
        }
        let state = self.lock();
        if let Some(reason) = &state.failure {
            return Err(CassetteError::NotClean {
                path: self.inner.path.clone(),
                reason: reason.clone(),
            });
        }
        let mut lines = Vec::with_capacity(state.entries.len() + 2);
        let entries = std::iter::once(file::header())
            .chain(state.entries.iter().cloned())
            .chain(std::iter::once(Entry::Outcome(outcome.clone())));
        for entry in entries {
            let mut line = serde_json::to_value(&entry).map_err(|e| CassetteError::Parse {
                path: self.inner.path.clone(),
                line: lines.len() + 1,
                source: Arc::new(e),
            })?;
            state.redaction.apply(&mut line);
            lines.push(line);
        }
        file::write(&self.inner.path, &lines)
    }

    /// Replaying: the first request that did not match the recording, or,
    /// when every one did, whether the run made fewer model requests than
    /// the recording has.
    pub fn check(&self) -> Result<(), CassetteError> {
        if !self.inner.replaying {
            return Err(self.wrong_mode("recording", "replaying"));
        }
        self.lock().tape.check()
    }

    /// Replaying: whether `now` (the replayed run's outcome) is the recorded
    /// one; a cassette saved without an outcome accepts any.
    pub fn check_outcome(&self, now: &Outcome) -> Result<(), CassetteError> {
        let Some(recorded) = self.recorded_outcome() else {
            return Ok(());
        };
        let (a, b) = (
            serde_json::to_value(&recorded).unwrap_or_default(),
            serde_json::to_value(now).unwrap_or_default(),
        );
        // What the run now says is compared as the file has it: redacted.
        let b = self.redacted(b);
        let diff = diff::diff(&a, &b);
        if diff.is_empty() {
            Ok(())
        } else {
            Err(CassetteError::Outcome { diff })
        }
    }

    /// What the run did so far: model turns, tool calls per server, tokens.
    pub fn summary(&self) -> CassetteSummary {
        self.lock().summary.clone()
    }

    fn wrong_mode(&self, mode: &'static str, wanted: &'static str) -> CassetteError {
        CassetteError::WrongMode {
            path: self.inner.path.clone(),
            mode,
            wanted,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.inner.state.lock_unpoisoned()
    }

    /// `value` with the secrets known so far redacted.
    pub(crate) fn redacted(&self, mut value: serde_json::Value) -> serde_json::Value {
        self.lock().redaction.apply(&mut value);
        value
    }

    /// Recording: keeps an entry (counted in the summary).
    pub(crate) fn push(&self, entry: Entry) {
        let mut state = self.lock();
        state.summary.count(&entry);
        state.entries.push(entry);
    }
}

/// What a recorded or replayed run did: model turns, tool calls per MCP
/// server, tokens.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CassetteSummary {
    /// Model requests.
    pub model_turns: usize,
    /// `tools/call` requests, per MCP server.
    pub tool_calls: BTreeMap<String, usize>,
    /// Tokens the model turns used.
    pub usage: Usage,
}

impl CassetteSummary {
    fn count(&mut self, entry: &Entry) {
        match entry {
            Entry::Model(m) => {
                self.model_turns += 1;
                for event in &m.events {
                    if let file::RecordedEvent::Usage(u) = event {
                        self.usage += *u;
                    }
                }
            }
            Entry::Mcp(e) if e.method == "tools/call" => {
                *self.tool_calls.entry(e.server.clone()).or_default() += 1;
            }
            _ => {}
        }
    }
}

impl fmt::Display for CassetteSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let turns = self.model_turns;
        write!(f, "{turns} model turn{}", if turns == 1 { "" } else { "s" })?;
        if self.tool_calls.is_empty() {
            f.write_str(", no MCP tool calls")?;
        } else {
            let calls: Vec<String> = self
                .tool_calls
                .iter()
                .map(|(server, n)| format!("{server} {n}"))
                .collect();
            write!(f, ", MCP tool calls: {}", calls.join(", "))?;
        }
        write!(
            f,
            ", {} tokens ({} in, {} out)",
            self.usage.total(),
            self.usage.input_tokens,
            self.usage.output_tokens
        )
    }
}
