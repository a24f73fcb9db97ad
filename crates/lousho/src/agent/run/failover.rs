//! A model list's turn ([`AgentBuilder::models`](crate::AgentBuilder::models)):
//! the first model is asked; an error that fails over
//! ([`ModelError::fails_over`]) before any of the turn's output reached the
//! caller asks the next one, and so on.

use super::{Run, TurnOutput};
use crate::agent::{AgentError, AgentEvent};
use crate::model::{ModelError, ModelRequest};

impl Run {
    /// One turn of the model list: the first model that answers gives it.
    pub(super) async fn fail_over(&self, request: &ModelRequest) -> Result<TurnOutput, AgentError> {
        let count = self.inner.fallbacks.len() + 1;
        let mut failures: Vec<(String, ModelError)> = Vec::new();
        for i in 0..count {
            let next = (i + 1 < count).then(|| self.inner.model_at(i + 1).name());
            let failure = match self.stream_turn(i, request, next.is_some()).await {
                Ok(out) => return Ok(out),
                Err(failure) => failure,
            };
            let name = self.inner.model_at(i).name().to_owned();
            let error = match failure.error {
                AgentError::Model(e) if !failure.emitted && e.fails_over() => e,
                AgentError::Model(e) if !failure.emitted => {
                    return Err(match next {
                        // A mistake every model would make, or one to fix.
                        Some(next) => AgentError::NotFailedOver {
                            model: name,
                            next: next.to_owned(),
                            source: e,
                        },
                        None => {
                            failures.push((name, e));
                            AgentError::ModelsFailed { failures }
                        }
                    });
                }
                // Output reached the caller, or the run itself stopped.
                other => return Err(other),
            };
            let Some(next) = next else {
                failures.push((name, error));
                return Err(AgentError::ModelsFailed { failures });
            };
            tracing::warn!(
                model = %name, next, error = %error,
                "the model failed; failing over to the next model of the list"
            );
            self.emit(AgentEvent::ModelFailover {
                from: name.clone(),
                to: next.to_owned(),
                reason: error.to_string(),
            })
            .await?;
            failures.push((name, error));
        }
        Err(AgentError::ModelsFailed { failures })
    }
}
