//! An agent as a tool of another agent, in process: [`Agent::as_tool`].
//!
//! The child's run is tied to the calling run: cancelled with it (the
//! child's tools see their tokens fire), its approvals go to the calling
//! run's approval handler, its tools talk back to the same MCP client, its
//! token usage adds to the calling run's [`Reply`](super::Reply), and a depth
//! limit stops agents that call each other without end.

use super::{Agent, AgentError, AgentEvent, TextProgress};
use crate::model::run_record::UsageSink;
use crate::policy::ApprovalHandler;
use crate::tool::ClientChannel;
use crate::tool::{Tool, ToolContext, ToolError, ToolOutput, ToolSpec};
use async_trait::async_trait;
use futures::StreamExt;
use serde_json::{Value, json};
use std::fmt;

/// The default limit on agents calling agents: a run started by an agent
/// tool inside a run started by an agent tool … at most this many levels
/// below the top run.
pub const DEFAULT_MAX_AGENT_DEPTH: usize = 8;

/// What an agent tool knows about the run that called it (handed on in
/// the call's [`CallerRun`](crate::tool::CallerRun)).
#[derive(Clone, Default)]
pub(crate) struct ParentRun {
    /// How many agent tools deep the calling run is (the top run: 0).
    pub(crate) depth: usize,
    /// The calling run's approval handler.
    pub(crate) approval_handler: Option<ApprovalHandler>,
}

impl fmt::Debug for ParentRun {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ParentRun")
            .field("depth", &self.depth)
            .field("approval_handler", &self.approval_handler.is_some())
            .finish_non_exhaustive()
    }
}

/// An agent made a tool of other agents by [`Agent::as_tool`]: it takes
/// `{ "message": string }` and returns the agent's final text.
#[derive(Clone)]
pub struct AgentTool {
    agent: Agent,
    spec: ToolSpec,
    max_depth: usize,
}

impl fmt::Debug for AgentTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentTool")
            .field("name", &self.spec.name)
            .field("agent", &self.agent)
            .field("max_depth", &self.max_depth)
            .finish()
    }
}

/// The input schema of an agent tool (served or in process).
pub(crate) fn message_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "message": { "type": "string", "description": "The message for the agent." }
        },
        "required": ["message"],
        "additionalProperties": false
    })
}

/// An agent tool's description: the agent's, else one naming it.
#[cfg_attr(not(any(feature = "mcp-server", feature = "spec")), allow(dead_code))]
pub(crate) fn agent_description(name: &str, agent: &Agent) -> String {
    agent.description().map_or_else(
        || format!("Ask the {name} agent. Each call is a fresh conversation."),
        str::to_owned,
    )
}

impl Agent {
    /// This agent as a tool another agent can call (in process): the tool
    /// takes `{ "message": string }`, runs a fresh conversation of this
    /// agent and returns its final text.
    ///
    /// The child run is cancelled with the calling run (its tools see their
    /// [`ToolContext::cancel`] fire); its approval questions go to the
    /// calling run's approval handler (without one, a child that needs an
    /// approval fails the call, saying so); its tools talk back to the
    /// calling run's MCP client; its requests and tokens are added to the
    /// calling run's [`Reply::usage`](super::Reply::usage) and
    /// [`Reply::requests`](super::Reply::requests). Agents calling agents
    /// deeper than [`DEFAULT_MAX_AGENT_DEPTH`] levels (see
    /// [`AgentTool::max_depth`]) fail with [`AgentError::TooDeep`].
    ///
    /// ```
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// use lousho::Agent;
    /// let researcher = Agent::builder().model("test").build()?;
    /// let lead = Agent::builder()
    ///     .model("test")
    ///     .tool(researcher.as_tool("researcher", "Ask the researcher"))
    ///     .build()?;
    /// assert!(lead.tool("researcher").is_some());
    /// # Ok(()) }
    /// ```
    pub fn as_tool(&self, name: impl Into<String>, description: impl Into<String>) -> AgentTool {
        AgentTool {
            agent: self.clone(),
            spec: ToolSpec::new(name, description, message_schema()),
            max_depth: DEFAULT_MAX_AGENT_DEPTH,
        }
    }
}

impl AgentTool {
    /// The most levels of agents calling agents below the top run (default
    /// [`DEFAULT_MAX_AGENT_DEPTH`]); a call that would go deeper fails with
    /// [`AgentError::TooDeep`].
    #[must_use]
    pub fn max_depth(mut self, levels: usize) -> Self {
        self.max_depth = levels;
        self
    }

    /// The agent behind the tool.
    pub fn agent(&self) -> &Agent {
        &self.agent
    }

    /// Runs the agent for one call, tied to the calling run by `ctx`.
    async fn run(&self, input: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let name = self.spec.name.clone();
        let failed = |source| ToolError::Agent {
            tool: name.clone(),
            source: Box::new(source),
        };
        let message = match input.get("message") {
            Some(Value::String(m)) => m.clone(),
            _ => {
                return Err(ToolError::InvalidInput {
                    tool: name,
                    message: "`message`: a string is required".into(),
                });
            }
        };
        let parent = ctx.caller.get::<ParentRun>();
        let depth = parent.map_or(0, |p| p.depth) + 1;
        if depth > self.max_depth {
            return Err(failed(AgentError::TooDeep {
                limit: self.max_depth,
            }));
        }
        let mut request = self.agent.send(message).cancel(ctx.cancel.clone());
        request = request.depth(depth);
        if let Some(handler) = parent.and_then(|p| p.approval_handler.clone()) {
            request = request.approval_handler_arc(handler);
        }
        let reply = match ctx.client.clone() {
            None => request.await.map_err(failed)?,
            Some(client) => {
                let request = request.tool_client(client.clone());
                stream_named(&name, request, client.as_ref())
                    .await
                    .map_err(failed)?
            }
        };
        if let Some(sink) = ctx.caller.get::<UsageSink>() {
            sink.add(reply.requests.iter().cloned());
        }
        if reply.is_interrupted() {
            let tools: Vec<String> = reply
                .pending
                .iter()
                .map(|p| format!("`{}`", p.tool_name))
                .collect();
            return Err(ToolError::Failed(format!(
                "the agent `{name}` paused before calling {} for approval, and the calling run has no approval handler to answer it",
                tools.join(", ")
            )));
        }
        if let super::RunStatus::BudgetExceeded { limit, .. } = reply.status {
            return Err(ToolError::Failed(format!(
                "the agent `{name}` stopped at its {} budget; its partial answer: {}",
                limit.as_str(),
                reply.text
            )));
        }
        Ok(ToolOutput::text(reply.text))
    }
}

/// Runs `request`, sending its partial text to the MCP client as progress
/// messages named after the tool (`name: text`), throttled.
async fn stream_named(
    name: &str,
    request: super::RunRequest,
    client: &dyn ClientChannel,
) -> Result<super::Reply, AgentError> {
    let mut stream = request.stream();
    let mut text = TextProgress::new();
    loop {
        let due = text.due_at();
        let event = tokio::select! {
            () = crate::agent::sleep_until_due(due), if due.is_some() => {
                if let Some(t) = text.flush() {
                    client.step(format!("{name}: {t}")).await;
                }
                continue;
            }
            e = stream.next() => e,
        };
        let event = match event {
            None => {
                return Err(AgentError::Internal("the run ended without a reply".into()));
            }
            Some(e) => e?,
        };
        let chunk = match &event {
            AgentEvent::TextDelta(delta) => text.push(delta),
            _ => text.flush(),
        };
        if let Some(t) = chunk {
            client.step(format!("{name}: {t}")).await;
        }
        if let AgentEvent::Done(reply) = event {
            return Ok(*reply);
        }
    }
}

#[async_trait]
impl Tool for AgentTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, input: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        self.run(input, ctx).await
    }
}
