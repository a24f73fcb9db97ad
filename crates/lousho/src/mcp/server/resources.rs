//! Resources a server offers (`resources/list`, `resources/read`): fixed
//! ones ([`define_resource`]) and URI templates
//! ([`define_resource_template`]), built like tools.

use super::completion::{Completer, CompletionRequest, completer};
use super::uri_template::{UriTemplate, UriTemplateError};
use crate::tool::ToolContext;
use futures::future::BoxFuture;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::sync::Arc;

/// What reading a resource gives: text or bytes, with a MIME type (`None`:
/// the one the resource was defined with).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResourceContent {
    /// Text (sent as `text`).
    Text {
        /// The text.
        text: String,
        /// Its MIME type, e.g. `text/markdown`.
        mime_type: Option<String>,
    },
    /// Bytes (sent base64-encoded as `blob`).
    Bytes {
        /// The bytes.
        data: Vec<u8>,
        /// Their MIME type, e.g. `image/png`.
        mime_type: Option<String>,
    },
}

impl ResourceContent {
    /// Text content.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text {
            text: text.into(),
            mime_type: None,
        }
    }

    /// Binary content.
    pub fn bytes(data: impl Into<Vec<u8>>) -> Self {
        Self::Bytes {
            data: data.into(),
            mime_type: None,
        }
    }

    /// With this MIME type (instead of the resource's).
    #[must_use]
    pub fn with_mime_type(mut self, mime: impl Into<String>) -> Self {
        match &mut self {
            Self::Text { mime_type, .. } | Self::Bytes { mime_type, .. } => {
                *mime_type = Some(mime.into());
            }
        }
        self
    }
}

/// Why a resource could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ResourceError {
    /// Nothing is served at this URI (MCP's `-32002`, resource not found).
    #[error(
        "no resource at `{uri}`; list resources (resources/list) and templates (resources/templates/list) for what this server offers"
    )]
    NotFound {
        /// The URI asked for.
        uri: String,
    },
    /// The resource exists but may not be read as asked (too large, not a
    /// regular file, …); the reason says what would work.
    #[error("`{uri}` cannot be read: {reason}")]
    Refused {
        /// The URI asked for.
        uri: String,
        /// Why, and what to do instead.
        reason: String,
    },
    /// Reading failed (the reader's own error).
    #[error("{0}")]
    Failed(String),
}

/// What a resource reader may return: [`ResourceContent`], `String` or
/// `&'static str` (text), `Vec<u8>` (bytes), or `Result<T, E>` of those with
/// any error (a [`ResourceError`] passes through, any other becomes
/// [`ResourceError::Failed`]).
pub trait IntoResourceContent: Send {
    /// Converts into the content read.
    fn into_resource_content(self) -> Result<ResourceContent, ResourceError>;
}

impl IntoResourceContent for ResourceContent {
    fn into_resource_content(self) -> Result<ResourceContent, ResourceError> {
        Ok(self)
    }
}

impl IntoResourceContent for String {
    fn into_resource_content(self) -> Result<ResourceContent, ResourceError> {
        Ok(ResourceContent::text(self))
    }
}

impl IntoResourceContent for &'static str {
    fn into_resource_content(self) -> Result<ResourceContent, ResourceError> {
        Ok(ResourceContent::text(self))
    }
}

impl IntoResourceContent for Vec<u8> {
    fn into_resource_content(self) -> Result<ResourceContent, ResourceError> {
        Ok(ResourceContent::bytes(self))
    }
}

impl<T, E> IntoResourceContent for Result<T, E>
where
    T: IntoResourceContent,
    E: Into<Box<dyn std::error::Error + Send + Sync>> + Send,
{
    fn into_resource_content(self) -> Result<ResourceContent, ResourceError> {
        match self {
            Ok(v) => v.into_resource_content(),
            Err(e) => match e.into().downcast::<ResourceError>() {
                Ok(own) => Err(*own),
                Err(other) => Err(ResourceError::Failed(other.to_string())),
            },
        }
    }
}

/// The code behind a resource or template: the URI read, the template's
/// variables (empty for a fixed resource), the call's context.
pub(crate) type ResourceReader = Arc<
    dyn Fn(
            String,
            BTreeMap<String, String>,
            ToolContext,
        ) -> BoxFuture<'static, Result<ResourceContent, ResourceError>>
        + Send
        + Sync,
>;

/// How a resource or template is listed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Listing {
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) mime_type: Option<String>,
    pub(crate) size: Option<u64>,
    pub(crate) icons: Vec<crate::tool::Icon>,
}

/// A resource at a fixed URI: [`define_resource`].
#[derive(Clone)]
#[must_use]
pub struct DefinedResource {
    pub(crate) uri: String,
    pub(crate) listing: Listing,
    pub(crate) reader: ResourceReader,
}

/// Defines a resource at `uri`, listed as `name`, read by an async closure
/// that gets the request's [`ToolContext`] (cancellation, log messages to
/// the client). Serve it with
/// [`ServeOptions::resource`](crate::ServeOptions::resource).
///
/// ```
/// use lousho::mcp::define_resource;
///
/// let readme = define_resource("docs://readme", "readme", |_ctx| async {
///     "# Hello"
/// })
/// .mime_type("text/markdown")
/// .description("The project's README");
/// ```
pub fn define_resource<F, Fut, R>(
    uri: impl Into<String>,
    name: impl Into<String>,
    f: F,
) -> DefinedResource
where
    F: Fn(ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
    R: IntoResourceContent,
{
    let reader: ResourceReader = Arc::new(move |_uri, _vars, ctx| {
        let fut = f(ctx);
        Box::pin(async move { fut.await.into_resource_content() })
    });
    DefinedResource {
        uri: uri.into(),
        listing: Listing {
            name: name.into(),
            ..Listing::default()
        },
        reader,
    }
}

impl DefinedResource {
    /// The resource's URI.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.listing.description = Some(description.into());
        self
    }

    /// Sets the display title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.listing.title = Some(title.into());
        self
    }

    /// Adds an icon clients may show next to it.
    pub fn icon(mut self, icon: crate::tool::Icon) -> Self {
        self.listing.icons.push(icon);
        self
    }

    /// Sets the MIME type (listed, and sent with content that names none).
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.listing.mime_type = Some(mime_type.into());
        self
    }

    /// Sets the size in bytes, when known ahead of a read.
    pub fn size(mut self, size: u64) -> Self {
        self.listing.size = Some(size);
        self
    }

    /// A resource from a reader of its own kind (a workspace's files).
    #[cfg_attr(not(feature = "builtin"), allow(dead_code))] // read by workspace files
    pub(crate) fn from_reader(uri: String, listing: Listing, reader: ResourceReader) -> Self {
        Self {
            uri,
            listing,
            reader,
        }
    }
}

impl fmt::Debug for DefinedResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DefinedResource")
            .field("uri", &self.uri)
            .field("name", &self.listing.name)
            .finish_non_exhaustive()
    }
}

/// Resources under an RFC 6570 URI template: [`define_resource_template`].
#[derive(Clone)]
#[must_use]
pub struct DefinedResourceTemplate {
    pub(crate) template: String,
    pub(crate) parsed: Result<UriTemplate, UriTemplateError>,
    pub(crate) listing: Listing,
    pub(crate) reader: ResourceReader,
    pub(crate) completer: Option<Completer>,
}

/// Defines the resources whose URIs fit `uri_template`, listed as `name`
/// (`resources/templates/list`). A read of a fitting URI deserializes the
/// template's variables into `A` (a struct of `String` fields named after
/// them) and calls the closure with it and the request's [`ToolContext`].
///
/// Templates use RFC 6570's `{name}` (one path segment, percent-decoded)
/// and `{+name}` (a path, `/` included); a template with other expressions
/// makes [`serve_mcp`](crate::serve_mcp) fail with
/// [`ServeError::InvalidUriTemplate`](super::ServeError::InvalidUriTemplate).
///
/// ```
/// use lousho::mcp::{CompletionRequest, define_resource_template};
/// use serde::Deserialize;
///
/// #[derive(Deserialize)]
/// struct Issue {
///     id: String,
/// }
///
/// let issues = define_resource_template("issues://{id}", "issue", |issue: Issue, _ctx| async move {
///     format!("Issue {} is open.", issue.id)
/// })
/// .mime_type("text/plain")
/// .complete(|r: CompletionRequest| async move {
///     ["1", "2", "10"].into_iter().filter(|id| id.starts_with(&r.value)).map(String::from).collect()
/// });
/// ```
pub fn define_resource_template<A, F, Fut, R>(
    uri_template: impl Into<String>,
    name: impl Into<String>,
    f: F,
) -> DefinedResourceTemplate
where
    A: DeserializeOwned + Send + 'static,
    F: Fn(A, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
    R: IntoResourceContent,
{
    let template = uri_template.into();
    let f = Arc::new(f);
    let reader: ResourceReader = Arc::new(move |uri, vars, ctx| {
        let map = vars
            .into_iter()
            .map(|(k, v)| (k, Value::String(v)))
            .collect();
        match serde_path_to_error::deserialize::<_, A>(Value::Object(map)) {
            Ok(args) => {
                let fut = f(args, ctx);
                Box::pin(async move { fut.await.into_resource_content() })
            }
            Err(e) => Box::pin(async move {
                Err(ResourceError::Refused {
                    uri,
                    reason: format!("its variables do not fit: {e}"),
                })
            }),
        }
    });
    DefinedResourceTemplate {
        parsed: UriTemplate::parse(&template),
        template,
        listing: Listing {
            name: name.into(),
            ..Listing::default()
        },
        reader,
        completer: None,
    }
}

impl DefinedResourceTemplate {
    /// The URI template as written.
    pub fn uri_template(&self) -> &str {
        &self.template
    }

    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.listing.description = Some(description.into());
        self
    }

    /// Sets the display title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.listing.title = Some(title.into());
        self
    }

    /// Adds an icon clients may show next to it.
    pub fn icon(mut self, icon: crate::tool::Icon) -> Self {
        self.listing.icons.push(icon);
        self
    }

    /// Sets the MIME type of the resources (listed, and sent with content
    /// that names none).
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.listing.mime_type = Some(mime_type.into());
        self
    }

    /// Suggests values for the template's variables while a client's user
    /// types one (`completion/complete` with a `ref/resource`).
    pub fn complete<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(CompletionRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Vec<String>> + Send + 'static,
    {
        self.completer = Some(completer(f));
        self
    }

    /// A template from a reader of its own kind (a workspace's files).
    #[cfg_attr(not(feature = "builtin"), allow(dead_code))] // read by workspace files
    pub(crate) fn from_reader(template: String, listing: Listing, reader: ResourceReader) -> Self {
        Self {
            parsed: UriTemplate::parse(&template),
            template,
            listing,
            reader,
            completer: None,
        }
    }
}

impl fmt::Debug for DefinedResourceTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DefinedResourceTemplate")
            .field("uri_template", &self.template)
            .field("name", &self.listing.name)
            .finish_non_exhaustive()
    }
}
