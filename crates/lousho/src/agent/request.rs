//! One run, before it starts: what it begins with and its options.

use super::run_setup::{Begin, RunOptions, SessionLink};
use super::{AgentError, AgentInner, AgentStream, Reply, run};
use crate::policy::{ApprovalDecision, ApprovalHandler, ApprovalRequest, approval_handler};
use crate::tool::{ClientChannel, ConversationState};
use std::fmt;
use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// One run of an agent, not started yet: what
/// [`Agent::send`](crate::Agent::send), [`Agent::resume`](crate::Agent::resume)
/// and [`Session::send`](crate::Session::send) return.
///
/// Set options on it, then either `.await` it for the [`Reply`], or call
/// [`stream`](RunRequest::stream) for the run's [`AgentEvent`](crate::AgentEvent)s
/// as they happen. Nothing runs until one of the two.
///
/// ```
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use futures::StreamExt;
/// use lousho::{Agent, AgentEvent, CancellationToken};
/// use std::time::Duration;
///
/// let agent = Agent::builder().model("test").build()?;
///
/// // Await it for the reply…
/// let reply = agent.send("hello").await?;
/// assert_eq!(reply.text, "You said: hello");
///
/// // …or set options and stream its events.
/// let token = CancellationToken::new();
/// let mut events = agent
///     .send("hello")
///     .cancel(token.clone())
///     .timeout(Duration::from_secs(60))
///     .max_turns(5)
///     .stream();
/// while let Some(event) = events.next().await {
///     if let AgentEvent::Done(reply) = event? {
///         assert_eq!(reply.text, "You said: hello");
///     }
/// }
/// # Ok(()) }
/// ```
#[must_use = "a run request does nothing until it is awaited or streamed"]
pub struct RunRequest {
    inner: Arc<AgentInner>,
    begin: Begin,
    state: ConversationState,
    session: Option<SessionLink>,
    options: RunOptions,
}

impl RunRequest {
    pub(crate) fn new(
        inner: Arc<AgentInner>,
        begin: Begin,
        state: ConversationState,
        session: Option<SessionLink>,
    ) -> Self {
        Self {
            inner,
            begin,
            state,
            session,
            options: RunOptions::default(),
        }
    }

    /// Cancels the run when `token` fires: the model stream stops, running
    /// tools see their context's token fire, and the run fails with
    /// [`AgentError::Cancelled`]. (Dropping a run's stream or future cancels
    /// it too.)
    pub fn cancel(mut self, token: CancellationToken) -> Self {
        self.options.cancel = Some(token);
        self
    }

    /// The most model turns this run may take, instead of the agent's
    /// [`max_turns`](crate::AgentBuilder::max_turns). A resumed run counts
    /// the turns taken before it paused. With `0` the run fails at once with
    /// [`AgentError::MaxTurnsExceeded`].
    pub fn max_turns(mut self, max_turns: usize) -> Self {
        self.options.max_turns = Some(max_turns);
        self
    }

    /// Fails the run with [`AgentError::TimedOut`] if it has not finished
    /// `timeout` after it starts (when awaited or streamed). Its tools see
    /// their tokens fire first, as on [`cancel`](RunRequest::cancel).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.options.timeout = Some(timeout);
        self
    }

    /// Limits on what this run may spend, instead of the agent's
    /// [`budget`](crate::AgentBuilder::budget) (a session's budget still
    /// counts).
    pub fn budget(mut self, budget: super::Budget) -> Self {
        self.options.budget = Some(budget);
        self
    }

    /// Asks for a typed answer: the model is sent `T`'s JSON Schema as
    /// structured output (and may call tools first); its final answer is
    /// deserialized into `T`, an answer that does not fit sent back with
    /// the error (see [`crate::agent::TypedRunRequest::retries`]), then the
    /// run fails with [`AgentError::Output`]. `.await` it for a
    /// [`Typed<T>`](crate::agent::Typed).
    pub fn output<T>(mut self) -> super::TypedRunRequest<T>
    where
        T: serde::de::DeserializeOwned + schemars::JsonSchema,
    {
        self.options.output = Some(super::output::OutputCheck::typed::<T>());
        super::TypedRunRequest::new(self)
    }

    /// A JSON Schema this run's final answer must match, as
    /// [`AgentBuilder::output_schema`](crate::AgentBuilder::output_schema)
    /// (the answer is in [`Reply::output`]).
    pub fn output_schema(mut self, schema: crate::model::OutputSchema) -> Self {
        self.options.output = Some(super::output::OutputCheck::schema(schema));
        self
    }

    /// How many answers that do not match are sent back.
    pub(crate) fn output_retries(mut self, retries: usize) -> Self {
        if let Some(output) = &mut self.options.output {
            output.retries = retries;
        }
        self
    }

    /// Counts this run against a session's budget.
    pub(crate) fn session_budget(mut self, budget: Option<super::budget::SessionBudget>) -> Self {
        self.options.session_budget = budget;
        self
    }

    /// Answers this run's approval questions with `f` instead of the agent's
    /// [approval handler](crate::AgentBuilder::approval_handler) (with
    /// neither, a run that needs approval pauses).
    pub fn approval_handler<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(ApprovalRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ApprovalDecision> + Send + 'static,
    {
        self.options.approval_handler = Some(approval_handler(f));
        self
    }

    /// Answers this run's approval questions with `handler` (an agent
    /// tool's run: the calling run's handler).
    pub(crate) fn approval_handler_arc(mut self, handler: ApprovalHandler) -> Self {
        self.options.approval_handler = Some(handler);
        self
    }

    /// Marks the run as started by an agent tool `depth` levels deep.
    pub(crate) fn depth(mut self, depth: usize) -> Self {
        self.options.depth = depth;
        self
    }

    /// Lets this run's tools talk back to the MCP client it serves.
    pub(crate) fn tool_client(mut self, client: Arc<dyn ClientChannel>) -> Self {
        self.options.tool_client = Some(client);
        self
    }

    /// Starts the run and returns its events as they happen; the last is
    /// [`AgentEvent::Done`](crate::AgentEvent::Done) with the reply, or an
    /// error. Dropping the stream cancels the run.
    pub fn stream(self) -> AgentStream {
        run::spawn(
            self.inner,
            self.begin,
            self.state,
            self.options,
            self.session,
        )
    }
}

impl IntoFuture for RunRequest {
    type Output = Result<Reply, AgentError>;
    type IntoFuture = Pin<Box<dyn Future<Output = Self::Output> + Send>>;

    /// Starts the run; the future resolves to its reply. Dropping the future
    /// cancels the run.
    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.stream().into_reply())
    }
}

impl fmt::Debug for RunRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let begin = match &self.begin {
            Begin::Fresh(messages) => format!("fresh ({} messages)", messages.len()),
            Begin::Resume(state, _) => format!("resume (after turn {})", state.turns()),
            Begin::Journal(run) => format!("resume interrupted run {run}"),
            Begin::Replayed(replayed) => format!("resume (after turn {})", replayed.turns),
            Begin::Retry(messages, run) => {
                format!("retry of run {run} ({} messages)", messages.len())
            }
        };
        f.debug_struct("RunRequest")
            .field("begin", &begin)
            .field("session", &self.session.is_some())
            .field("cancel", &self.options.cancel.is_some())
            .field("max_turns", &self.options.max_turns)
            .field("timeout", &self.options.timeout)
            .field("approval_handler", &self.options.approval_handler.is_some())
            .finish_non_exhaustive()
    }
}
