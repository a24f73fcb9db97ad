//! The catalog: tool manifests, so a run can offer a server's tools without
//! starting it. The user-facing description is in the `lousho::mcp` docs
//! ("Catalog").

mod disk;
mod link;
mod manifest;
mod memory;
mod store;

pub use disk::DiskManifestStore;
pub(crate) use link::CatalogLink;
pub(crate) use manifest::CacheHint;
pub use manifest::{MANIFEST_FORMAT, ManifestOffers, ManifestTool, ToolManifest};
pub use memory::MemoryManifestStore;
pub use store::{ManifestStore, ManifestStoreError};

use std::time::Duration;

/// How old a manifest may be and still be used (7 days); older ones are
/// ignored and the server connects as without a store.
pub const DEFAULT_MANIFEST_MAX_AGE: Duration = Duration::from_secs(7 * 24 * 60 * 60);
