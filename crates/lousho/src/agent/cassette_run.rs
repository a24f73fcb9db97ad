//! One whole run through a [cassette](crate::cassette):
//! [`AgentBuilder::record`] once, [`AgentBuilder::replay`] in every test.

use super::{AgentBuilder, AgentError, BuildError, Reply};
use crate::cassette::{Cassette, CassetteError, CassetteOptions, Outcome, Redaction};
use crate::model::Message;
use std::path::PathBuf;

/// Why [`AgentBuilder::record`] or [`AgentBuilder::replay`] failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CassetteRunError {
    /// The agent could not be built.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// The run failed (recording: nothing was written).
    #[error(transparent)]
    Run(#[from] AgentError),
    /// The cassette could not be read or written, or the replayed run
    /// differs from the recorded one (the difference is in the message).
    #[error(transparent)]
    Cassette(#[from] CassetteError),
}

impl Outcome {
    /// What `reply` ended with: its text, its tool calls, its tokens.
    pub fn of(reply: &Reply) -> Self {
        Outcome::new(
            reply.text.clone(),
            reply.tool_calls.iter().map(|r| &r.call),
            reply.usage,
        )
    }
}

impl AgentBuilder {
    /// Builds the agent, sends it `message` with its model and MCP traffic
    /// recorded into the cassette at `path` (written only when the run
    /// succeeds; secrets redacted: values of `*_KEY`/`*_TOKEN`/… variables,
    /// MCP headers and environment values, secret-named keys), and closes
    /// it. Run it once with the real model and servers; test with
    /// [`replay`](Self::replay).
    pub async fn record(
        self,
        path: impl Into<PathBuf>,
        message: impl Into<Message>,
    ) -> Result<Reply, CassetteRunError> {
        let options = CassetteOptions::new().redaction(Redaction::new().secret_env_vars());
        let cassette = Cassette::record_with(path, options);
        let messages = vec![message.into()];
        cassette.set_input(&messages);
        let agent = self.cassette(cassette.clone()).build()?;
        let result = agent.send_messages(messages).await;
        agent.close().await;
        let reply = result?;
        cassette.save(&Outcome::of(&reply))?;
        Ok(reply)
    }

    /// Replays the run recorded at `path`: the agent is sent the recorded
    /// input, its model answers from the cassette, its MCP servers are
    /// neither started nor dialled. Fails naming the first difference — a
    /// model request (message, tool list, argument, setting), an MCP
    /// request, or the reply (its text, its tool calls) — with
    /// [`CassetteRunError::Cassette`]. "This agent still does what it did":
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), lousho::agent::CassetteRunError> {
    /// let agent = lousho::Agent::builder().prompt("You answer support questions.");
    /// agent.replay("tests/support.cassette").await?;
    /// # Ok(()) }
    /// ```
    pub async fn replay(self, path: impl Into<PathBuf>) -> Result<Reply, CassetteRunError> {
        let cassette = Cassette::replay(path)?;
        let messages = cassette.input()?;
        let agent = self.cassette(cassette.clone()).build()?;
        let result = agent.send_messages(messages).await;
        agent.close().await;
        // The first request that drifted explains a failed run best.
        cassette.check()?;
        let reply = result?;
        cassette.check_outcome(&Outcome::of(&reply))?;
        Ok(reply)
    }
}
