use super::schema::schema_for;
use super::{Approval, ToolOrigin};
use super::{Tool, ToolAnnotations, ToolContext, ToolError, ToolOutput, ToolSpec};
use async_trait::async_trait;
use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::fmt;
use std::future::Future;
use std::sync::Arc;

/// The code behind a [`DefinedTool`]: JSON in, output out.
pub type ToolHandler = Arc<
    dyn Fn(Value, ToolContext) -> BoxFuture<'static, Result<ToolOutput, ToolError>> + Send + Sync,
>;

/// A tool made from a closure: [`define_tool`], [`define_tool_with_context`]
/// or [`DefinedTool::from_json`]. Builder methods set annotations, approval
/// and the rest of the spec.
#[derive(Clone)]
#[must_use]
pub struct DefinedTool {
    spec: ToolSpec,
    handler: ToolHandler,
}

/// Defines a tool from an async closure over a typed input.
///
/// The input type derives `Deserialize` and `JsonSchema` (the latter through
/// [`#[lousho::tool_input]`](macro@crate::tool_input), so your crate needs no
/// `schemars` of its own); its schema (JSON Schema 2020-12, object root) is
/// what the model sees. Arguments that do not fit become an error result
/// naming the field, so the model can retry.
///
/// ```
/// use lousho::define_tool;
/// use serde::Deserialize;
///
/// #[lousho::tool_input]
/// #[derive(Deserialize)]
/// struct Search {
///     /// What to look for.
///     query: String,
/// }
///
/// let search_docs = define_tool("search_docs", "Search the docs", |input: Search| async move {
///     format!("results for {}", input.query)
/// });
/// ```
pub fn define_tool<I, F, Fut, R>(
    name: impl Into<String>,
    description: impl Into<String>,
    f: F,
) -> DefinedTool
where
    I: DeserializeOwned + JsonSchema + Send + 'static,
    F: Fn(I) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
    R: IntoToolOutput,
{
    define_tool_with_context(name, description, move |input: I, _ctx| f(input))
}

/// Like [`define_tool`], for closures that also take the [`ToolContext`]
/// (cancellation token, call id, conversation state).
pub fn define_tool_with_context<I, F, Fut, R>(
    name: impl Into<String>,
    description: impl Into<String>,
    f: F,
) -> DefinedTool
where
    I: DeserializeOwned + JsonSchema + Send + 'static,
    F: Fn(I, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
    R: IntoToolOutput,
{
    let name = name.into();
    let tool_name = name.clone();
    let f = Arc::new(f);
    let handler: ToolHandler = Arc::new(move |input: Value, ctx: ToolContext| {
        let parsed: Result<I, _> = serde_path_to_error::deserialize(input);
        match parsed {
            Ok(input) => {
                let fut = f(input, ctx);
                Box::pin(async move { fut.await.into_tool_output() })
            }
            Err(err) => {
                let message = describe_input_error(&err);
                let tool = tool_name.clone();
                Box::pin(async move { Err(ToolError::InvalidInput { tool, message }) })
            }
        }
    });
    DefinedTool {
        spec: ToolSpec::new(name, description, schema_for::<I>()),
        handler,
    }
}

fn describe_input_error(err: &serde_path_to_error::Error<serde_json::Error>) -> String {
    let path = err.path().to_string();
    let inner = err.inner().to_string();
    if path == "." || path.is_empty() {
        inner
    } else {
        format!("`{path}`: {inner}")
    }
}

impl DefinedTool {
    /// A tool from a raw JSON Schema and a closure over the JSON input (the
    /// input is passed as the model sent it, unchecked).
    pub fn from_json<F, Fut, R>(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
        f: F,
    ) -> Self
    where
        F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoToolOutput,
    {
        let handler: ToolHandler = Arc::new(move |input, ctx| {
            let fut = f(input, ctx);
            Box::pin(async move { fut.await.into_tool_output() })
        });
        Self {
            spec: ToolSpec::new(name, description, input_schema),
            handler,
        }
    }

    /// A tool from a full spec and a handler.
    pub fn from_parts(spec: ToolSpec, handler: ToolHandler) -> Self {
        Self { spec, handler }
    }

    /// Sets the MCP annotations (a `title` also becomes the display name).
    pub fn annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.spec = self.spec.annotations(annotations);
        self
    }

    /// Marks the tool read-only (`readOnlyHint: true, destructiveHint: false`).
    pub fn read_only(self) -> Self {
        let a = self
            .spec
            .annotations
            .clone()
            .read_only(true)
            .destructive(false);
        self.annotations(a)
    }

    /// Requires approval for every call (`true`) or none (`false`, the default).
    pub fn needs_approval(mut self, needs: bool) -> Self {
        self.spec.approval = if needs {
            Approval::Always
        } else {
            Approval::Never
        };
        self
    }

    /// Sets the approval policy.
    pub fn approval(mut self, approval: Approval) -> Self {
        self.spec.approval = approval;
        self
    }

    /// Sets the display name.
    pub fn display_name(mut self, display_name: impl Into<String>) -> Self {
        self.spec.display_name = Some(display_name.into());
        self
    }

    /// Adds an icon MCP clients may show next to the tool when it is served
    /// (`tools/list`'s `icons`); the display name is its `title`.
    pub fn icon(mut self, icon: super::Icon) -> Self {
        self.spec.icons.push(icon);
        self
    }

    /// Sets the output schema.
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.spec.output_schema = Some(schema);
        self
    }

    /// Sets where the tool comes from (default [`ToolOrigin::Local`]).
    pub fn origin(mut self, origin: ToolOrigin) -> Self {
        self.spec.origin = origin;
        self
    }

    /// Served over MCP, its calls run as tasks for clients with the tasks
    /// extension (SEP-2663): the client gets a task at once and polls it
    /// for the tool's progress messages and result, so a long tool does not
    /// outlive the client's request timeout. Default false.
    pub fn serve_as_task(mut self, as_task: bool) -> Self {
        self.spec.serve_as_task = as_task;
        self
    }

    /// Adds a metadata entry.
    pub fn metadata(mut self, key: impl Into<String>, value: Value) -> Self {
        self.spec.metadata.insert(key.into(), value);
        self
    }
}

impl fmt::Debug for DefinedTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DefinedTool")
            .field("spec", &self.spec)
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl Tool for DefinedTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, input: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        (self.handler)(input, ctx).await
    }
}

/// What a tool closure may return.
///
/// Implemented for [`ToolOutput`], `String`, `&'static str`, `serde_json::Value`,
/// [`Json`]`<T: Serialize>`, `()` and `Result<T, E>` where `T` is one of those and
/// `E` is any error (`&str`, `String`, `std::io::Error`, `anyhow::Error`, …): an
/// `Err` becomes an error result with its message; a [`ToolError`] passes
/// through unchanged.
pub trait IntoToolOutput: Send {
    /// Converts into the tool's result.
    fn into_tool_output(self) -> Result<ToolOutput, ToolError>;
}

impl IntoToolOutput for ToolOutput {
    fn into_tool_output(self) -> Result<ToolOutput, ToolError> {
        Ok(self)
    }
}

impl IntoToolOutput for String {
    fn into_tool_output(self) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(self))
    }
}

impl IntoToolOutput for &'static str {
    fn into_tool_output(self) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(self))
    }
}

impl IntoToolOutput for Value {
    fn into_tool_output(self) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::json(self))
    }
}

impl IntoToolOutput for () {
    fn into_tool_output(self) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::default())
    }
}

/// Wraps any `Serialize` value as a JSON tool result.
#[derive(Debug, Clone)]
pub struct Json<T>(pub T);

impl<T: Serialize + Send> IntoToolOutput for Json<T> {
    fn into_tool_output(self) -> Result<ToolOutput, ToolError> {
        serde_json::to_value(self.0)
            .map(ToolOutput::json)
            .map_err(|e| ToolError::failed(format!("could not serialise the result: {e}")))
    }
}

impl<T, E> IntoToolOutput for Result<T, E>
where
    T: IntoToolOutput,
    E: Into<Box<dyn std::error::Error + Send + Sync>> + Send,
{
    fn into_tool_output(self) -> Result<ToolOutput, ToolError> {
        match self {
            Ok(v) => v.into_tool_output(),
            // A `ToolError` passes through unchanged (`Cancelled` stays `Cancelled`);
            // any other error becomes `Failed` with its message.
            Err(e) => match e.into().downcast::<ToolError>() {
                Ok(tool_error) => Err(*tool_error),
                Err(other) => Err(ToolError::Failed(other.to_string())),
            },
        }
    }
}
