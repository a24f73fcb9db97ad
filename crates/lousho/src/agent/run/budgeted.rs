//! A run's budgets ([`crate::agent::budget`]) in the turn loop, checked
//! only when a budget is set.

use super::{Progress, Run, TurnOutput};
use crate::agent::budget::{BudgetLimit, BudgetScope};
use crate::agent::{AgentError, RunStatus};

/// Waits until `deadline` (forever without one).
pub(super) async fn wait_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

impl Progress {
    /// The estimated cost so far (unpriced requests count 0).
    fn cost_so_far(&self) -> f64 {
        self.requests.iter().filter_map(|r| r.cost_usd).sum()
    }
}

impl Run {
    /// The limit the run has reached with `next_calls` tool calls about to
    /// run, if any.
    pub(super) fn budget_reached(
        &self,
        run: &Progress,
        next_calls: usize,
    ) -> Option<(BudgetLimit, BudgetScope)> {
        self.budget.as_ref()?.reached(
            run.usage,
            run.cost_so_far(),
            run.turns,
            run.records.len(),
            next_calls,
        )
    }

    /// After a model turn: the wall time ran out while it streamed, or its
    /// calls would pass a limit (a final answer completes the run).
    pub(super) fn budget_after_turn(
        &self,
        run: &Progress,
        out: &TurnOutput,
    ) -> Option<(BudgetLimit, BudgetScope)> {
        if out.cut {
            let scope = self
                .budget_reached(run, 0)
                .filter(|(limit, _)| *limit == BudgetLimit::WallTime)
                .map_or(BudgetScope::Run, |(_, scope)| scope);
            return Some((BudgetLimit::WallTime, scope));
        }
        if out.calls.is_empty() {
            return None;
        }
        self.budget_reached(run, out.calls.len())
    }

    /// Adds what the run spent to its session's budget.
    pub(super) fn settle_budget(&self, run: &Progress) {
        if let Some(budget) = &self.budget {
            budget.settle(run.usage, run.cost_so_far(), run.turns, run.records.len());
        }
    }

    /// Ends the run with [`RunStatus::BudgetExceeded`]: what was spent, the
    /// partial reply `text`, the conversation so far (kept by a session).
    pub(super) async fn stop_for_budget(
        &self,
        run: Progress,
        text: String,
        (limit, scope): (BudgetLimit, BudgetScope),
    ) -> Result<(), AgentError> {
        tracing::debug!(limit = limit.as_str(), ?scope, "the run reached its budget");
        self.settle_budget(&run);
        let reply = run.into_reply(text, RunStatus::BudgetExceeded { limit, scope });
        // Stored like a completed turn (its journal ends with it).
        self.complete(reply).await
    }
}
