//! Budgets (issue 35 §2): limits on what a run, or a session's runs
//! together, may spend: tokens in, out and in total, cost, wall time, model
//! turns and tool calls.
//!
//! A run that reaches a limit stops with
//! [`RunStatus::BudgetExceeded`](super::RunStatus::BudgetExceeded) (not an
//! error), its reply carrying what was spent (`usage`, `cost_usd`, `turns`,
//! `tool_calls`) and the partial reply (the last turn's text). Limits are
//! checked between steps: before each model turn, after it (before its tool
//! calls run: a turn whose calls would pass the tool-call limit runs none
//! of them), and the wall time also while the model streams. A run stopped
//! by a budget keeps a valid conversation (the stopped turn's tool calls are
//! left out of it), so a session can go on after it.
//!
//! ```
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use lousho::Agent;
//! use lousho::agent::{Budget, RunStatus};
//! use std::time::Duration;
//!
//! let agent = Agent::builder()
//!     .model("test")
//!     .budget(Budget::new().total_tokens(50_000).cost_usd(0.25).wall_time(Duration::from_secs(120)))
//!     .build()?;
//! let reply = agent.send("hello").await?;
//! if let RunStatus::BudgetExceeded { limit, .. } = reply.status {
//!     eprintln!("stopped at the {limit:?} limit after {} turns", reply.turns);
//! }
//! # Ok(()) }
//! ```

use crate::model::Usage;
use crate::sync::MutexExt;
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Limits on what a run (or a session) may spend; a limit not set does not
/// count. Build with [`Budget::new`] and its setters.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
#[non_exhaustive]
pub struct Budget {
    /// Most input (prompt) tokens, cached ones included.
    pub input_tokens: Option<u64>,
    /// Most output (completion) tokens, reasoning included.
    pub output_tokens: Option<u64>,
    /// Most input plus output tokens.
    pub total_tokens: Option<u64>,
    /// Most estimated cost in US dollars (from the agent's
    /// [`PriceTable`](crate::model::PriceTable); a model without a price
    /// counts nothing).
    pub cost_usd: Option<f64>,
    /// Most wall time, from the run's start (for a session: summed over its
    /// runs).
    pub wall_time: Option<Duration>,
    /// Most model turns.
    pub turns: Option<usize>,
    /// Most tool calls (those that ran or were refused).
    pub tool_calls: Option<usize>,
}

impl Budget {
    /// No limits.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the input-token limit.
    #[must_use]
    pub fn input_tokens(mut self, n: u64) -> Self {
        self.input_tokens = Some(n);
        self
    }

    /// Sets the output-token limit.
    #[must_use]
    pub fn output_tokens(mut self, n: u64) -> Self {
        self.output_tokens = Some(n);
        self
    }

    /// Sets the total-token limit.
    #[must_use]
    pub fn total_tokens(mut self, n: u64) -> Self {
        self.total_tokens = Some(n);
        self
    }

    /// Sets the cost limit in US dollars.
    #[must_use]
    pub fn cost_usd(mut self, usd: f64) -> Self {
        self.cost_usd = Some(usd);
        self
    }

    /// Sets the wall-time limit.
    #[must_use]
    pub fn wall_time(mut self, time: Duration) -> Self {
        self.wall_time = Some(time);
        self
    }

    /// Sets the model-turn limit.
    #[must_use]
    pub fn turns(mut self, n: usize) -> Self {
        self.turns = Some(n);
        self
    }

    /// Sets the tool-call limit.
    #[must_use]
    pub fn tool_calls(mut self, n: usize) -> Self {
        self.tool_calls = Some(n);
        self
    }

    /// Whether no limit is set.
    pub fn is_unlimited(&self) -> bool {
        *self == Self::default()
    }

    /// The first limit `spent` has reached (with `next_calls` more tool
    /// calls about to run), in the order of the fields.
    fn reached(&self, spent: &Spent, next_calls: usize) -> Option<BudgetLimit> {
        let over = |limit: Option<u64>, n: u64| limit.is_some_and(|l| n >= l);
        if over(self.input_tokens, spent.usage.input_tokens) {
            return Some(BudgetLimit::InputTokens);
        }
        if over(self.output_tokens, spent.usage.output_tokens) {
            return Some(BudgetLimit::OutputTokens);
        }
        if over(self.total_tokens, spent.usage.total()) {
            return Some(BudgetLimit::TotalTokens);
        }
        if self.cost_usd.is_some_and(|l| spent.cost_usd >= l) {
            return Some(BudgetLimit::Cost);
        }
        if self.wall_time.is_some_and(|l| spent.elapsed >= l) {
            return Some(BudgetLimit::WallTime);
        }
        if self.turns.is_some_and(|l| spent.turns >= l) {
            return Some(BudgetLimit::Turns);
        }
        if self
            .tool_calls
            .is_some_and(|l| next_calls > 0 && spent.tool_calls + next_calls > l)
        {
            return Some(BudgetLimit::ToolCalls);
        }
        None
    }
}

/// Which limit of a [`Budget`] a run reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum BudgetLimit {
    /// [`Budget::input_tokens`].
    InputTokens,
    /// [`Budget::output_tokens`].
    OutputTokens,
    /// [`Budget::total_tokens`].
    TotalTokens,
    /// [`Budget::cost_usd`].
    Cost,
    /// [`Budget::wall_time`].
    WallTime,
    /// [`Budget::turns`].
    Turns,
    /// [`Budget::tool_calls`].
    ToolCalls,
}

impl BudgetLimit {
    /// The limit's name as serialized (`total_tokens`, `cost`, …).
    pub fn as_str(&self) -> &'static str {
        match self {
            BudgetLimit::InputTokens => "input_tokens",
            BudgetLimit::OutputTokens => "output_tokens",
            BudgetLimit::TotalTokens => "total_tokens",
            BudgetLimit::Cost => "cost",
            BudgetLimit::WallTime => "wall_time",
            BudgetLimit::Turns => "turns",
            BudgetLimit::ToolCalls => "tool_calls",
        }
    }
}

/// Whose budget a run reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum BudgetScope {
    /// The run's own ([`AgentBuilder::budget`](crate::AgentBuilder::budget),
    /// [`RunRequest::budget`](crate::agent::RunRequest::budget)).
    Run,
    /// The session's, over all its runs ([`Session::budget`](crate::Session::budget)).
    Session,
}

/// What was spent, against a [`Budget`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Spent {
    /// Tokens.
    pub usage: Usage,
    /// Estimated cost in US dollars (unpriced requests count 0).
    pub cost_usd: f64,
    /// Model turns.
    pub turns: usize,
    /// Tool calls.
    pub tool_calls: usize,
    /// Wall time.
    pub elapsed: Duration,
}

impl Spent {
    fn plus(&self, other: &Spent) -> Spent {
        let mut usage = self.usage;
        usage += other.usage;
        Spent {
            usage,
            cost_usd: self.cost_usd + other.cost_usd,
            turns: self.turns + other.turns,
            tool_calls: self.tool_calls + other.tool_calls,
            elapsed: self.elapsed + other.elapsed,
        }
    }
}

/// A session's budget and what its runs spent so far (shared by the
/// session's clones).
#[derive(Debug, Clone)]
pub(crate) struct SessionBudget {
    pub(crate) budget: Budget,
    pub(crate) spent: Arc<Mutex<Spent>>,
}

impl SessionBudget {
    /// `budget`, nothing spent yet.
    pub(crate) fn new(budget: Budget) -> Self {
        Self {
            budget,
            spent: Arc::default(),
        }
    }
}

/// One run's budgets, checked between its steps. Made only when a budget is
/// set: a run without one checks an `Option`.
#[derive(Debug)]
pub(crate) struct RunBudget {
    run: Option<Budget>,
    session: Option<SessionBudget>,
    /// The session's spending when the run started.
    session_base: Spent,
    started: Instant,
    /// When the wall time runs out (the nearest of both scopes).
    pub(crate) deadline: Option<tokio::time::Instant>,
}

impl RunBudget {
    /// The budgets of a run, `None` when neither is set.
    pub(crate) fn new(run: Option<Budget>, session: Option<SessionBudget>) -> Option<Self> {
        let run = run.filter(|b| !b.is_unlimited());
        let session = session.filter(|s| !s.budget.is_unlimited());
        if run.is_none() && session.is_none() {
            return None;
        }
        let session_base = session
            .as_ref()
            .map(|s| *s.spent.lock_unpoisoned())
            .unwrap_or_default();
        let now = tokio::time::Instant::now();
        let left = |b: &Budget, used: Duration| b.wall_time.map(|w| w.saturating_sub(used));
        let deadline = [
            run.as_ref().and_then(|b| left(b, Duration::ZERO)),
            session
                .as_ref()
                .and_then(|s| left(&s.budget, session_base.elapsed)),
        ]
        .into_iter()
        .flatten()
        .min()
        .map(|d| now + d);
        Some(Self {
            run,
            session,
            session_base,
            started: Instant::now(),
            deadline,
        })
    }

    /// The limit reached by a run that spent `usage`, `cost_usd`, `turns`
    /// and `tool_calls` so far (with `next_calls` about to run), if any.
    pub(crate) fn reached(
        &self,
        usage: Usage,
        cost_usd: f64,
        turns: usize,
        tool_calls: usize,
        next_calls: usize,
    ) -> Option<(BudgetLimit, BudgetScope)> {
        let spent = Spent {
            usage,
            cost_usd,
            turns,
            tool_calls,
            elapsed: self.started.elapsed(),
        };
        if let Some(limit) = self.run.and_then(|b| b.reached(&spent, next_calls)) {
            return Some((limit, BudgetScope::Run));
        }
        let session = self.session.as_ref()?;
        let total = self.session_base.plus(&spent);
        session
            .budget
            .reached(&total, next_calls)
            .map(|limit| (limit, BudgetScope::Session))
    }

    /// Adds a finished run's spending to its session's.
    pub(crate) fn settle(&self, usage: Usage, cost_usd: f64, turns: usize, tool_calls: usize) {
        if let Some(session) = &self.session {
            let run = Spent {
                usage,
                cost_usd,
                turns,
                tool_calls,
                elapsed: self.started.elapsed(),
            };
            let mut spent = session.spent.lock_unpoisoned();
            *spent = spent.plus(&run);
        }
    }
}
