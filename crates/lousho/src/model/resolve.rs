use super::{Model, ModelError, TestModel};
use std::fmt;
use std::sync::Arc;

/// A model given to the builder: a `"vendor/model"` string, resolved at
/// `build()`, or a model value.
#[derive(Clone)]
pub enum ModelRef {
    /// A `"vendor/model"` string.
    Name(String),
    /// A model value.
    Model(Arc<dyn Model>),
}

impl fmt::Debug for ModelRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelRef::Name(n) => write!(f, "Name({n:?})"),
            ModelRef::Model(m) => write!(f, "Model({:?})", m.name()),
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
    /// The model, resolving a name.
    pub fn resolve(&self) -> Result<Arc<dyn Model>, ModelError> {
        match self {
            ModelRef::Name(n) => resolve_model(n),
            ModelRef::Model(m) => Ok(m.clone()),
        }
    }
}

/// Resolves a `"vendor/model"` string to a model.
///
/// | string | model |
/// | --- | --- |
/// | `test`, `test/<anything>` | [`TestModel`] |
pub fn resolve_model(model: &str) -> Result<Arc<dyn Model>, ModelError> {
    let (vendor, rest) = model.split_once('/').unwrap_or((model, ""));
    match vendor {
        "test" => Ok(Arc::new(TestModel::new().named(if rest.is_empty() {
            "test".to_owned()
        } else {
            model.to_owned()
        }))),
        _ => Err(ModelError::UnknownModel {
            model: model.to_owned(),
        }),
    }
}
