//! A run's final answer checked against its output schema
//! ([`crate::agent::output`]), only when it has one.

use super::{Progress, Run};
use crate::agent::AgentError;
use crate::agent::output::{OutputCheck, OutputError};
use crate::model::Message;
use serde_json::Value;

impl Run {
    /// The answer's JSON when it matches; `None` when it does not and was
    /// sent back to the model with what is wrong (the run takes another
    /// turn); an error once the retries are spent.
    pub(super) fn checked(
        &self,
        check: &OutputCheck,
        run: &mut Progress,
        text: &str,
        failures: &mut usize,
    ) -> Result<Option<Value>, AgentError> {
        let message = match check.check(text) {
            Ok(value) => return Ok(Some(value)),
            Err(message) => message,
        };
        *failures += 1;
        tracing::debug!(schema = %check.schema.name, failures = *failures, %message, "the answer does not match the output schema");
        if *failures > check.retries {
            return Err(AgentError::Output(OutputError {
                schema: check.schema.name.clone(),
                attempts: *failures,
                message,
                text: text.to_owned(),
            }));
        }
        run.request.messages.push(Message::user(format!(
            "Your answer does not match the required output schema: {message}. Answer again with only a JSON value that matches the schema."
        )));
        Ok(None)
    }
}
