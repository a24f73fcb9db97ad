//! A workspace's files served as `file://` resources ([`WorkspaceFiles`],
//! spec: `serve.resources`): each file a walk finds is listed, a template
//! `file:///<root>/{+path}` reads files made later, and every read goes
//! through the built-in file tools' sandbox — the same refusals (`..`,
//! paths outside, symbolic links out, FIFOs and devices), a size cap
//! ([`FsLimits::resource_bytes`](crate::builtin::FsLimits)). Hidden files
//! and folders (a name starting with `.`) and files the globs leave out are
//! neither listed nor read. Subscribed files are checked for changes once a
//! second.

use super::catalog::ServerCatalog;
use super::completion::CompletionRequest;
use super::resources::{
    DefinedResource, DefinedResourceTemplate, Listing, ResourceContent, ResourceError,
    ResourceReader,
};
use crate::builtin::fs::files::{FileGlobs, WholeFile, find_files, read_whole};
use crate::builtin::{FsToolError, SandboxError, Workspace};
use crate::mcp::file_uri::PATH;
use futures::future::BoxFuture;
use percent_encoding::{percent_decode_str, utf8_percent_encode};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use tokio_util::sync::CancellationToken;

/// The most files one [`WorkspaceFiles`] lists (reads are not capped).
pub const MAX_LISTED_FILES: usize = 10_000;

/// How often subscribed files are checked for changes.
const POLL: Duration = Duration::from_secs(1);

/// Files of a workspace to serve as `file://` resources:
/// [`ServeOptions::files`](crate::ServeOptions::files).
#[derive(Debug, Clone)]
pub struct WorkspaceFiles {
    ws: Workspace,
    globs: FileGlobs,
    /// `file:///<root>/`, encoded.
    prefix: String,
}

impl WorkspaceFiles {
    /// Every file of `workspace` (as the file tools see it: ignore files
    /// respected, hidden entries skipped).
    pub fn all(workspace: &Workspace) -> Self {
        Self::with(workspace, FileGlobs::default())
    }

    /// The files of `workspace` that fit one of `patterns` (globs relative
    /// to the root, `docs/**/*.md`; `*` does not cross `/`).
    pub fn matching(
        workspace: &Workspace,
        patterns: &[impl AsRef<str>],
    ) -> Result<Self, FsToolError> {
        let patterns: Vec<String> = patterns.iter().map(|p| p.as_ref().to_owned()).collect();
        Ok(Self::with(workspace, FileGlobs::new(&patterns)?))
    }

    fn with(ws: &Workspace, globs: FileGlobs) -> Self {
        let root = ws.root().to_string_lossy();
        let root = root.trim_end_matches('/');
        let prefix = format!("file://{}/", utf8_percent_encode(root, PATH));
        Self {
            ws: ws.clone(),
            globs,
            prefix,
        }
    }

    /// The `file://` URI of `rel` (relative to the root).
    fn uri(&self, rel: &str) -> String {
        format!("{}{}", self.prefix, utf8_percent_encode(rel, PATH))
    }

    /// The path (relative to the root) `uri` names, when it is one of
    /// these files' URIs: under the root, not hidden, fitting the globs.
    fn path_of(&self, uri: &str) -> Option<String> {
        let rel = uri.strip_prefix(&self.prefix)?;
        let rel = percent_decode_str(rel).decode_utf8().ok()?.into_owned();
        let hidden = rel
            .split('/')
            .any(|part| part.starts_with('.') && part != "." && part != "..");
        (!hidden && self.globs.fits(&rel)).then_some(rel)
    }

    /// The listed resources (a walk, run off the async threads) and the
    /// template for the rest.
    pub(crate) async fn offers(
        self,
        cancel: &CancellationToken,
    ) -> (Vec<DefinedResource>, DefinedResourceTemplate) {
        let this = Arc::new(self);
        let walk = {
            let this = this.clone();
            let cancel = cancel.clone();
            tokio::task::spawn_blocking(move || {
                find_files(&this.ws, &this.globs, MAX_LISTED_FILES, &cancel)
            })
        };
        let found = walk.await.unwrap_or_default();
        let reader = reader(this.clone());
        let resources = found
            .into_iter()
            .map(|f| {
                let listing = Listing {
                    mime_type: Some(mime_type(&f.path, None).to_owned()),
                    size: Some(f.size),
                    name: f.path.clone(),
                    ..Listing::default()
                };
                DefinedResource::from_reader(this.uri(&f.path), listing, reader.clone())
            })
            .collect();
        let template = DefinedResourceTemplate::from_reader(
            format!("{}{{+path}}", this.prefix),
            Listing {
                name: "workspace-files".to_owned(),
                description: Some(format!(
                    "Files of the workspace {}",
                    this.ws.root().display()
                )),
                ..Listing::default()
            },
            reader,
        )
        .complete(completer(this));
        (resources, template)
    }

    /// Tells subscribers when a subscribed file of these changes (its
    /// modification time or size), checking once a second until `stop`.
    pub(crate) async fn watch(self, catalog: ServerCatalog, stop: CancellationToken) {
        let mut seen: HashMap<String, (Option<SystemTime>, u64)> = HashMap::new();
        let mut every = tokio::time::interval(POLL);
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                _ = every.tick() => {}
            }
            let uris = catalog.listeners().subscribed();
            let mut now = HashMap::new();
            for uri in uris {
                let Some(rel) = self.path_of(&uri) else {
                    continue;
                };
                let Ok(real) = self.ws.resolve(&rel) else {
                    continue;
                };
                let Ok(meta) = std::fs::metadata(&real) else {
                    continue;
                };
                now.insert(uri, (meta.modified().ok(), meta.len()));
            }
            for (uri, stamp) in &now {
                if seen.get(uri).is_some_and(|before| before != stamp) {
                    catalog.resource_updated(uri).await;
                }
            }
            seen = now;
        }
    }
}

/// Completes the template's `path`: the files (as listed) whose path
/// starts with what the user typed, found by a walk off the async threads.
fn completer(
    files: Arc<WorkspaceFiles>,
) -> impl Fn(CompletionRequest) -> BoxFuture<'static, Vec<String>> + Send + Sync + 'static {
    move |request: CompletionRequest| {
        let files = files.clone();
        Box::pin(async move {
            if request.argument != "path" {
                return Vec::new();
            }
            let walk = tokio::task::spawn_blocking(move || {
                let cancel = CancellationToken::new();
                find_files(&files.ws, &files.globs, MAX_LISTED_FILES, &cancel)
            });
            walk.await
                .unwrap_or_default()
                .into_iter()
                .map(|f| f.path)
                .filter(|p| p.starts_with(&request.value))
                .collect()
        })
    }
}

/// Reads a URI of `files` through the sandbox.
fn reader(files: Arc<WorkspaceFiles>) -> ResourceReader {
    Arc::new(move |uri, _vars, ctx| {
        let files = files.clone();
        Box::pin(async move {
            let Some(rel) = files.path_of(&uri) else {
                return Err(ResourceError::NotFound { uri });
            };
            let ws = files.ws.clone();
            let path = rel.clone();
            let read = tokio::task::spawn_blocking(move || read_whole(&ws, &path));
            let whole = tokio::select! {
                () = ctx.cancel.cancelled() => {
                    return Err(ResourceError::Failed("the read was cancelled".to_owned()));
                }
                r = read => r.map_err(|e| ResourceError::Failed(e.to_string()))?,
            };
            match whole {
                Ok(WholeFile::Text(text)) => {
                    Ok(ResourceContent::text(text).with_mime_type(mime_type(&rel, Some(true))))
                }
                Ok(WholeFile::Bytes(data)) => {
                    Ok(ResourceContent::bytes(data).with_mime_type(mime_type(&rel, Some(false))))
                }
                Err(FsToolError::Sandbox(SandboxError::NotFound { .. })) => {
                    Err(ResourceError::NotFound { uri })
                }
                Err(e) => Err(ResourceError::Refused {
                    uri,
                    reason: e.to_string(),
                }),
            }
        })
    })
}

/// A MIME type from the file's extension; `text`: whether it read as text
/// (unknown: decide by extension alone).
fn mime_type(path: &str, text: Option<bool>) -> &'static str {
    let ext = path
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    let known = match ext.as_str() {
        "md" | "markdown" => Some("text/markdown"),
        "html" | "htm" => Some("text/html"),
        "css" => Some("text/css"),
        "csv" => Some("text/csv"),
        "json" => Some("application/json"),
        "yaml" | "yml" => Some("application/yaml"),
        "toml" => Some("application/toml"),
        "xml" => Some("application/xml"),
        "js" | "mjs" => Some("text/javascript"),
        "png" => Some("image/png"),
        "jpg" | "jpeg" => Some("image/jpeg"),
        "gif" => Some("image/gif"),
        "webp" => Some("image/webp"),
        "svg" => Some("image/svg+xml"),
        "pdf" => Some("application/pdf"),
        "wav" => Some("audio/wav"),
        "mp3" => Some("audio/mpeg"),
        "zip" => Some("application/zip"),
        _ => None,
    };
    match (known, text) {
        (Some(m), _) => m,
        (None, Some(false)) => "application/octet-stream",
        (None, _) => "text/plain",
    }
}
