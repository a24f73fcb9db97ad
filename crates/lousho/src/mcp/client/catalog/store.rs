//! Where manifests are kept.

use super::manifest::ToolManifest;
use crate::mcp::client::identity::ServerIdentity;
use std::path::PathBuf;

/// Keeps tool manifests, one per server identity. Implementations must be
/// safe to share between threads; `load` should be cheap (it runs when an
/// agent is built).
///
/// A store that cannot read an entry (a corrupt file) returns `None` and
/// warns: a missing manifest only means the server connects as it would
/// without a store.
pub trait ManifestStore: Send + Sync + 'static {
    /// The manifest recorded for `server`, if any.
    fn load(&self, server: &ServerIdentity) -> Option<ToolManifest>;

    /// Records `manifest` for `server`, replacing the one before.
    fn save(
        &self,
        server: &ServerIdentity,
        manifest: &ToolManifest,
    ) -> Result<(), ManifestStoreError>;

    /// Forgets `server`'s manifest (no error when there is none).
    fn remove(&self, server: &ServerIdentity) -> Result<(), ManifestStoreError>;
}

/// A manifest could not be written or removed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ManifestStoreError {
    /// A file operation failed.
    #[error(
        "the tool manifest `{}` could not be written: {source}; check the cache directory's permissions, or set LOUSHO_CACHE_DIR",
        path.display()
    )]
    Io {
        /// The file (or its directory).
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// No cache directory could be found (no home directory).
    #[error("no cache directory for tool manifests (no home directory); set LOUSHO_CACHE_DIR")]
    NoCacheDir,
    /// The manifest could not be serialised.
    #[error("the tool manifest could not be serialised: {0}")]
    Serialize(#[source] serde_json::Error),
}
