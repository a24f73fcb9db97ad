//! Structured output (issue 35 §1): a run whose final answer must match a
//! JSON Schema, sent as the provider's native structured output
//! ([`ModelSettings::output`](crate::model::ModelSettings::output)). The
//! model may call tools first; its final answer is checked, and an answer
//! that does not fit goes back to the model with what is wrong, at most
//! [`DEFAULT_OUTPUT_RETRIES`] times (or as set), then the run fails with
//! [`OutputError`].
//!
//! ```
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use lousho::Agent;
//! use lousho::model::testing::{ScriptedModel, ScriptedTurn};
//!
//! #[derive(serde::Deserialize, lousho::JsonSchema)]
//! struct Forecast {
//!     city: String,
//!     celsius: f64,
//! }
//!
//! let model = ScriptedModel::new([ScriptedTurn::text(r#"{"city": "Paris", "celsius": 21.5}"#)]);
//! let agent = Agent::builder().model(model).build()?;
//! let forecast = agent.send("Weather in Paris?").output::<Forecast>().await?;
//! assert_eq!(forecast.value.city, "Paris");
//! assert_eq!(forecast.reply.turns, 1);
//! # Ok(()) }
//! ```

use super::{AgentError, Reply, RunRequest};
use crate::model::OutputSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::fmt;
use std::future::{Future, IntoFuture};
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;

/// How many times an answer that does not match the schema is sent back
/// to the model by default.
pub const DEFAULT_OUTPUT_RETRIES: usize = 2;

type Check = Arc<dyn Fn(&Value) -> Result<(), String> + Send + Sync>;

/// A run's output schema and how its answer is checked.
#[derive(Clone)]
pub(crate) struct OutputCheck {
    pub(crate) schema: OutputSchema,
    pub(crate) check: Check,
    pub(crate) retries: usize,
}

impl fmt::Debug for OutputCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OutputCheck")
            .field("schema", &self.schema.name)
            .field("retries", &self.retries)
            .finish_non_exhaustive()
    }
}

impl OutputCheck {
    /// The answer must deserialize into `T`.
    pub(crate) fn typed<T: DeserializeOwned + schemars::JsonSchema>() -> Self {
        Self {
            schema: OutputSchema::of::<T>(),
            check: Arc::new(|value| T::deserialize(value).map(drop).map_err(|e| e.to_string())),
            retries: DEFAULT_OUTPUT_RETRIES,
        }
    }

    /// The answer must be JSON (and, with the `mcp-client` feature, match
    /// the schema by a JSON Schema validator).
    pub(crate) fn schema(schema: OutputSchema) -> Self {
        #[cfg(feature = "mcp-client")]
        let validator = jsonschema::validator_for(&schema.schema)
            .inspect_err(|e| tracing::warn!(error = %e, "the output schema does not compile; answers are checked as JSON only"))
            .ok();
        Self {
            schema,
            check: Arc::new(move |_value| {
                #[cfg(feature = "mcp-client")]
                if let Some(error) = validator
                    .as_ref()
                    .and_then(|v| v.iter_errors(_value).next())
                {
                    let path = error.instance_path().as_str();
                    let at = if path.is_empty() {
                        "the top level".to_owned()
                    } else {
                        format!("`{path}`")
                    };
                    return Err(format!("at {at}: {error}"));
                }
                Ok(())
            }),
            retries: DEFAULT_OUTPUT_RETRIES,
        }
    }

    /// Checks an answer's text: its JSON value, or what is wrong.
    pub(crate) fn check(&self, text: &str) -> Result<Value, String> {
        let value =
            crate::model::answer_json(text).map_err(|e| format!("the answer is not JSON ({e})"))?;
        (self.check)(&value)?;
        Ok(value)
    }
}

/// The run's final answer never matched the output schema.
#[derive(Debug, Clone, thiserror::Error)]
#[error(
    "the model's answer did not match the output schema `{schema}` after {attempts} attempts: {message}; simplify the schema, raise the retries, or use a stronger model"
)]
#[non_exhaustive]
pub struct OutputError {
    /// The schema's name.
    pub schema: String,
    /// How many answers were checked.
    pub attempts: usize,
    /// What was wrong with the last one.
    pub message: String,
    /// The last answer's text.
    pub text: String,
}

/// A typed result: the value and the run's reply.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Typed<T> {
    /// The final answer, deserialized.
    pub value: T,
    /// The run's reply (its `output` holds the answer as JSON).
    pub reply: Reply,
}

/// A run whose answer is a `T`: what [`RunRequest::output`] returns.
/// `.await` it for a [`Typed<T>`].
#[must_use = "a run request does nothing until it is awaited"]
pub struct TypedRunRequest<T> {
    request: RunRequest,
    _value: PhantomData<fn() -> T>,
}

impl<T> fmt::Debug for TypedRunRequest<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TypedRunRequest")
            .field("request", &self.request)
            .finish()
    }
}

impl<T> TypedRunRequest<T> {
    pub(crate) fn new(request: RunRequest) -> Self {
        Self {
            request,
            _value: PhantomData,
        }
    }

    /// How many times an answer that does not match is sent back (default
    /// [`DEFAULT_OUTPUT_RETRIES`]).
    pub fn retries(mut self, retries: usize) -> Self {
        self.request = self.request.output_retries(retries);
        self
    }

    /// The run itself, to set its other options or stream it (its reply's
    /// `output` holds the checked answer).
    pub fn into_request(self) -> RunRequest {
        self.request
    }
}

impl<T: DeserializeOwned + Send + 'static> IntoFuture for TypedRunRequest<T> {
    type Output = Result<Typed<T>, AgentError>;
    type IntoFuture = Pin<Box<dyn Future<Output = Self::Output> + Send>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(async move {
            let reply = self.request.await?;
            let Some(output) = &reply.output else {
                // Paused for approval, or stopped at a budget.
                return Err(AgentError::Output(OutputError {
                    schema: String::new(),
                    attempts: 0,
                    message: format!(
                        "the run ended ({}) before its final answer",
                        reply.status.as_str()
                    ),
                    text: reply.text,
                }));
            };
            let value = T::deserialize(output).map_err(|e| {
                AgentError::Internal(format!("a checked output did not deserialize: {e}"))
            })?;
            Ok(Typed { value, reply })
        })
    }
}
