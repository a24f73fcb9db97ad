use super::provider::{EnvLookup, process_env};
use super::testing::TestModel;
use super::{Anthropic, Model, ModelError, OpenAi};
use std::fmt;
use std::sync::Arc;

/// Builds a model when the agent is built (a provider builder).
pub type ModelFactory = Arc<dyn Fn() -> Result<Arc<dyn Model>, ModelError> + Send + Sync>;

/// A model given to the builder: a `"vendor/model"` string, resolved at
/// `build()`, or a model value.
#[derive(Clone)]
pub enum ModelRef {
    /// A `"vendor/model"` string.
    Name(String),
    /// A model value.
    Model(Arc<dyn Model>),
    /// A model built at `build()` (a provider builder such as
    /// [`OpenAiBuilder`](crate::model::OpenAiBuilder)), so a missing key is
    /// reported by [`AgentBuilder::build`](crate::AgentBuilder::build).
    Deferred(ModelFactory),
}

impl fmt::Debug for ModelRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelRef::Name(n) => write!(f, "Name({n:?})"),
            ModelRef::Model(m) => write!(f, "Model({:?})", m.name()),
            ModelRef::Deferred(_) => f.write_str("Deferred"),
        }
    }
}

impl From<&str> for ModelRef {
    fn from(s: &str) -> Self {
        ModelRef::Name(s.to_owned())
    }
}

impl From<String> for ModelRef {
    fn from(s: String) -> Self {
        ModelRef::Name(s)
    }
}

impl From<&String> for ModelRef {
    fn from(s: &String) -> Self {
        ModelRef::Name(s.clone())
    }
}

impl From<Arc<dyn Model>> for ModelRef {
    fn from(m: Arc<dyn Model>) -> Self {
        ModelRef::Model(m)
    }
}

impl<M: Model> From<M> for ModelRef {
    fn from(m: M) -> Self {
        ModelRef::Model(Arc::new(m))
    }
}

impl ModelRef {
    /// A model built by `factory` when the agent is built.
    pub fn deferred(
        factory: impl Fn() -> Result<Arc<dyn Model>, ModelError> + Send + Sync + 'static,
    ) -> Self {
        ModelRef::Deferred(Arc::new(factory))
    }

    /// The model, resolving a name or running a factory.
    pub fn resolve(&self) -> Result<Arc<dyn Model>, ModelError> {
        match self {
            ModelRef::Name(n) => resolve_model(n),
            ModelRef::Model(m) => Ok(m.clone()),
            ModelRef::Deferred(factory) => factory(),
        }
    }
}

/// Resolves a `"vendor/model"` string to a model, reading keys and base URLs
/// from the environment. A missing key is [`ModelError::MissingApiKey`]
/// naming the variable, before any request.
///
/// | string | model | key | base URL |
/// | --- | --- | --- | --- |
/// | `openai/<model>` | [`OpenAi::builder`] | `OPENAI_API_KEY` | `OPENAI_BASE_URL` or `https://api.openai.com/v1` |
/// | `anthropic/<model>` | [`Anthropic::builder`] | `ANTHROPIC_API_KEY` | `ANTHROPIC_BASE_URL` or `https://api.anthropic.com` |
/// | `openrouter/<vendor>/<model>` | [`OpenAi::openrouter`] | `OPENROUTER_API_KEY` | `https://openrouter.ai/api/v1` |
/// | `ollama/<model>` | [`OpenAi::ollama`] | none | `OLLAMA_BASE_URL` or `http://127.0.0.1:11434/v1` |
/// | `test`, `test/<anything>` | [`TestModel`] | none | none |
pub fn resolve_model(model: &str) -> Result<Arc<dyn Model>, ModelError> {
    resolve_model_with_env(model, &process_env)
}

/// [`resolve_model`] with your own environment lookup (a spec file's
/// variables, or a test's) instead of the process environment.
pub fn resolve_model_with_env(
    model: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Arc<dyn Model>, ModelError> {
    resolve_model_at(model, env, None, super::RateLimits::default())
}

/// [`resolve_model_with_env`] with the provider's base URL set (a spec's
/// `modelOptions.baseUrl`) instead of read from the environment, and its
/// client-side rate limits (`modelOptions.limits`); the `test` model ignores
/// both.
pub(crate) fn resolve_model_at(
    model: &str,
    env: &dyn Fn(&str) -> Option<String>,
    base_url: Option<&str>,
    limits: super::RateLimits,
) -> Result<Arc<dyn Model>, ModelError> {
    let env: EnvLookup<'_> = env;
    let (vendor, rest) = model.split_once('/').unwrap_or((model, ""));
    let unknown = || ModelError::UnknownModel {
        model: model.to_owned(),
    };
    if model == super::SAMPLING_MODEL {
        return Ok(Arc::new(super::SamplingModel::new()));
    }
    if vendor != "test" && rest.trim().is_empty() {
        return Err(unknown());
    }
    match vendor {
        "test" => Ok(Arc::new(TestModel::new().named(if rest.is_empty() {
            "test".to_owned()
        } else {
            model.to_owned()
        }))),
        "openai" | "openrouter" | "ollama" => {
            let mut builder = match vendor {
                "openrouter" => OpenAi::openrouter(rest),
                "ollama" => OpenAi::ollama(rest),
                _ => OpenAi::builder(rest),
            };
            if let Some(url) = base_url {
                builder = builder.base_url(url);
            }
            Ok(Arc::new(builder.rate_limits(limits).build_with_env(env)?))
        }
        "anthropic" => {
            let mut builder = Anthropic::builder(rest).rate_limits(limits);
            if let Some(url) = base_url {
                builder = builder.base_url(url);
            }
            Ok(Arc::new(builder.build_with_env(env)?))
        }
        _ => Err(unknown()),
    }
}
