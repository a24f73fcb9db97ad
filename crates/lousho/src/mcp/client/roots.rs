//! Roots: the folders the client offers its servers to work in
//! (`roots/list`). A client's roots ([`ConnectOptions::roots`], an agent
//! spec's `workspace`) are offered to every server, a server's own
//! ([`McpServer::roots`], `roots:` in its entry) to it alone.
//!
//! The client declares the `roots` capability (with `listChanged`) when it
//! has roots to offer: client roots were set, or the entry has roots of its
//! own. [`McpClient::set_roots`] changes the client's roots and sends
//! `notifications/roots/list_changed` to every connected 2025-11-25 server
//! that was offered roots; a 2026-07-28 server asks for them in an
//! input-required round whenever it needs them.
//!
//! [`ConnectOptions::roots`]: super::ConnectOptions::roots
//! [`McpServer::roots`]: super::McpServer::roots
//! [`McpClient::set_roots`]: super::McpClient::set_roots

// Roots are deprecated by SEP-2577 but spoken by 2025-11-25 servers.
#![allow(deprecated)]

use crate::mcp::file_uri::file_uri;
use crate::sync::RwLockExt;
use rmcp::model::Root;
use std::path::Path;
use std::sync::{Arc, RwLock};

/// One root offered to MCP servers: a `file://` URI (a folder they may work
/// in) and an optional name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct McpRoot {
    /// The root's URI (`file:///home/me/project`).
    pub uri: String,
    /// A name for people (the folder's name by default).
    pub name: Option<String>,
}

impl McpRoot {
    /// The folder `path` as a root: made absolute against the working
    /// directory, as a `file://` URI, named by its last component.
    ///
    /// ```
    /// use lousho::mcp::McpRoot;
    /// let root = McpRoot::folder("/srv/my docs");
    /// assert_eq!(root.uri, "file:///srv/my%20docs");
    /// assert_eq!(root.name.as_deref(), Some("my docs"));
    /// ```
    pub fn folder(path: impl AsRef<Path>) -> Self {
        let path = path.as_ref();
        let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        let clean: std::path::PathBuf = absolute
            .components()
            .filter(|c| !matches!(c, std::path::Component::CurDir))
            .collect();
        Self {
            uri: file_uri(&clean),
            name: clean.file_name().map(|n| n.to_string_lossy().into_owned()),
        }
    }

    /// A root of any URI, without a name.
    pub fn uri(uri: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            name: None,
        }
    }

    /// Sets the name.
    #[must_use]
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    fn to_wire(&self) -> Root {
        let root = Root::new(self.uri.clone());
        match &self.name {
            Some(name) => root.with_name(name.clone()),
            None => root,
        }
    }
}

/// A client's roots, shared by its connections (`None`: none set).
#[derive(Clone, Default)]
pub(crate) struct SharedRoots(Arc<RwLock<Option<Arc<[McpRoot]>>>>);

impl SharedRoots {
    pub(crate) fn new(roots: Option<Vec<McpRoot>>) -> Self {
        Self(Arc::new(RwLock::new(roots.map(Arc::from))))
    }

    /// Replaces them.
    pub(crate) fn set(&self, roots: Vec<McpRoot>) {
        *self.0.write_unpoisoned() = Some(Arc::from(roots));
    }

    fn get(&self) -> Option<Arc<[McpRoot]>> {
        self.0.read_unpoisoned().clone()
    }
}

/// What one connection offers: the client's roots and the server's own.
#[derive(Clone, Default)]
pub(crate) struct OfferedRoots {
    shared: SharedRoots,
    own: Arc<[McpRoot]>,
}

impl OfferedRoots {
    pub(crate) fn new(shared: SharedRoots, own: &[std::path::PathBuf]) -> Self {
        Self {
            shared,
            own: own.iter().map(McpRoot::folder).collect(),
        }
    }

    /// Whether the client declares `roots` to the server.
    pub(crate) fn declared(&self) -> bool {
        !self.own.is_empty() || self.shared.get().is_some()
    }

    /// The roots as `roots/list` answers them: the client's, then the
    /// server's own; each URI once.
    pub(crate) fn list(&self) -> Vec<Root> {
        let shared = self.shared.get().unwrap_or_default();
        let mut seen = std::collections::HashSet::new();
        shared
            .iter()
            .chain(self.own.iter())
            .filter(|r| seen.insert(r.uri.clone()))
            .map(McpRoot::to_wire)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clients_roots_come_first_and_each_uri_once() {
        let shared = SharedRoots::new(Some(vec![McpRoot::folder("/w")]));
        let offered = OfferedRoots::new(shared.clone(), &["/w".into(), "/data/./x".into()]);
        assert!(offered.declared());
        let uris: Vec<String> = offered.list().into_iter().map(|r| r.uri).collect();
        assert_eq!(uris, ["file:///w", "file:///data/x"]);
        shared.set(vec![McpRoot::uri("file:///v").with_name("v")]);
        let listed = offered.list();
        assert_eq!(listed[0].uri, "file:///v");
        assert_eq!(listed[0].name.as_deref(), Some("v"));
        assert!(!OfferedRoots::new(SharedRoots::default(), &[]).declared());
    }
}
