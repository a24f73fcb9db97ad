//! Manifests kept in memory (tests, or one process that builds many agents).

use super::manifest::ToolManifest;
use super::store::{ManifestStore, ManifestStoreError};
use crate::mcp::client::identity::ServerIdentity;
use crate::sync::MutexExt;
use std::collections::HashMap;
use std::sync::Mutex;

/// A [`ManifestStore`] in memory; clones share nothing (wrap it in an `Arc`).
#[derive(Debug, Default)]
pub struct MemoryManifestStore {
    manifests: Mutex<HashMap<ServerIdentity, ToolManifest>>,
}

impl MemoryManifestStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many manifests it holds.
    pub fn len(&self) -> usize {
        self.manifests.lock_unpoisoned().len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.manifests.lock_unpoisoned().is_empty()
    }
}

impl ManifestStore for MemoryManifestStore {
    fn load(&self, server: &ServerIdentity) -> Option<ToolManifest> {
        self.manifests.lock_unpoisoned().get(server).cloned()
    }

    fn save(
        &self,
        server: &ServerIdentity,
        manifest: &ToolManifest,
    ) -> Result<(), ManifestStoreError> {
        self.manifests
            .lock_unpoisoned()
            .insert(server.clone(), manifest.clone());
        Ok(())
    }

    fn remove(&self, server: &ServerIdentity) -> Result<(), ManifestStoreError> {
        self.manifests.lock_unpoisoned().remove(server);
        Ok(())
    }
}
