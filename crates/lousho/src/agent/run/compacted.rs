//! Context compaction ([`crate::agent::compaction`]) in the turn loop: before
//! a model turn, a conversation over its context budget gets a summary of
//! its older messages, a step of the run's journal like a turn (a resumed
//! run does not ask for it again).

use super::{Progress, Run};
use crate::agent::compaction::{Compactor, SummaryError};
use crate::agent::{AgentError, AgentEvent};
use crate::model::{Message, Summary};
use crate::tool::search::BYTES_PER_TOKEN;
use std::sync::atomic::Ordering;

impl Run {
    /// Summarises the older messages of `run`'s conversation when it is
    /// over the context budget (and trimming its tool results is not
    /// enough): the summary joins the conversation, is committed to the
    /// run's journal (a stored session's) and announced
    /// ([`AgentEvent::Compacted`]). A failing summary request is logged
    /// and the run goes on without a summary (its oldest turns left out,
    /// as without compaction); only a cancel fails the run.
    pub(super) async fn compact(
        &self,
        compactor: &Compactor,
        run: &mut Progress,
        tool_tokens: usize,
    ) -> Result<(), AgentError> {
        let Some(budget) = self.inner.context_budget else {
            return Ok(());
        };
        if self.compaction_failed.load(Ordering::Relaxed) {
            return Ok(());
        }
        let system = run.request.system.as_deref().map_or(0, str::len) / BYTES_PER_TOKEN;
        let Some(plan) = compactor.plan(&run.request.messages, system + tool_tokens, budget) else {
            return Ok(());
        };
        let model = compactor
            .model
            .clone()
            .unwrap_or_else(|| self.inner.model.clone());
        let request = compactor.request(&run.request.messages, &plan);
        let price = self.inner.prices.price(model.name());
        let summary = crate::model::with_sampling_client(
            self.tool_client.clone(),
            Compactor::summarise(
                model.as_ref(),
                &request,
                self.inner.record_content,
                price,
                &self.cancel,
            ),
        )
        .await;
        match summary {
            Ok((text, usage)) => {
                run.count_model_request(&self.inner, model.name(), usage, 0);
                tracing::info!(
                    target: "lousho::agent",
                    model = model.name(),
                    from = plan.from,
                    to = plan.cut,
                    summary_bytes = text.len(),
                    "the conversation is over the context budget: older messages summarised"
                );
                let summary = Summary {
                    text,
                    from: plan.from as u64,
                    to: plan.cut as u64,
                    model: model.name().to_owned(),
                };
                run.request.messages.push(Message::summary(summary.clone()));
                // Committed before it is announced: a run cancelled on the
                // event resumes with it.
                if let Some(journal) = &self.journal
                    && let Some(request) = run.requests.last()
                {
                    journal.summary(&summary, request).await?;
                }
                self.emit(AgentEvent::Compacted { summary, usage }).await
            }
            Err(SummaryError::Cancelled) => Err(AgentError::Cancelled),
            Err(SummaryError::Failed(error, usage)) => {
                if usage != crate::model::Usage::default() {
                    run.count_model_request(&self.inner, model.name(), usage, 0);
                }
                tracing::warn!(
                    target: "lousho::agent",
                    model = model.name(),
                    error = %error,
                    "context compaction: the summary request failed; the oldest turns are left out instead (no more summaries in this run)"
                );
                self.compaction_failed.store(true, Ordering::Relaxed);
                Ok(())
            }
        }
    }
}
