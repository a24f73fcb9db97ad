//! The hooks of a model turn's output ([`crate::agent::hooks`]), asked
//! only when the agent has hooks.

use super::{Run, TurnOutput};
use crate::agent::hooks::ModelResponse;
use crate::agent::{AgentError, AgentEvent};
use crate::telemetry::span::{ToolDecision, execute_tool};
use crate::tool::ToolOutput;

impl Run {
    /// Runs the `after_model` hooks on a turn's output, then the
    /// `before_tool` hooks on its calls: for each call, `None` (it goes on
    /// to the decision order) or the error result of its refusal (its
    /// `ToolCallFinished` event sent).
    pub(super) async fn after_model_hooks(
        &self,
        out: &mut TurnOutput,
    ) -> Result<Vec<Option<ToolOutput>>, AgentError> {
        let hooks = &self.inner.hooks;
        let mut response = ModelResponse {
            model: self.inner.model_at(out.model).name().to_owned(),
            text: std::mem::take(&mut out.text),
            tool_calls: std::mem::take(&mut out.calls),
            usage: out.usage,
        };
        let done = hooks.after_model(&mut response, &self.cancel).await;
        out.text = response.text;
        out.calls = response.tool_calls;
        done?;
        let outputs = hooks.before_tools(&mut out.calls, &self.cancel).await?;
        for (call, output) in out.calls.iter().zip(&outputs) {
            if let Some(output) = output {
                drop(execute_tool(call, ToolDecision::Denied));
                self.emit(AgentEvent::ToolCallFinished {
                    call: call.clone(),
                    output: output.clone(),
                })
                .await?;
            }
        }
        Ok(outputs)
    }
}
