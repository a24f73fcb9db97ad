//! The catalog: what each server offered when it was last listed (its tool
//! manifest), so a run can offer a server's tools without starting it and
//! connect the server only when one of its tools is called.
//!
//! - After every successful `tools/list` (at connect and after every
//!   `list_changed` refresh) the connection records a [`ToolManifest`]: the
//!   tools with every field, server info, instructions, protocol version,
//!   the time it was fetched and a [`ToolFingerprint`](super::ToolFingerprint)
//!   per tool. It is keyed by the server's [`ServerIdentity`](super::ServerIdentity),
//!   so a changed entry (command, arguments, environment, URL, headers) never
//!   reuses a stale manifest.
//! - A [`ManifestStore`] keeps them: [`DiskManifestStore`] (one JSON file per
//!   identity under the user's cache directory; atomic writes) or
//!   [`MemoryManifestStore`].
//! - With a store in [`ConnectOptions`](super::ConnectOptions), a server with a
//!   fresh manifest (younger than the max age, [`DEFAULT_MANIFEST_MAX_AGE`] unless set)
//!   is `Cataloged`: not spawned or dialled at `ready()` or the first run; it
//!   connects (once, shared by concurrent callers) when one of its tools is
//!   first called. A server without one, or with `preload: true`, connects
//!   as without a store.
//!
//! The library never writes a cache unless given a store; the `lousho` CLI
//! uses [`DiskManifestStore::from_env`] by default.

mod disk;
mod link;
mod manifest;
mod memory;
mod store;

pub use disk::DiskManifestStore;
pub(crate) use link::CatalogLink;
pub use manifest::{MANIFEST_FORMAT, ManifestTool, ToolManifest};
pub use memory::MemoryManifestStore;
pub use store::{ManifestStore, ManifestStoreError};

use std::time::Duration;

/// How old a manifest may be and still be used (7 days); older ones are
/// ignored and the server connects as without a store.
pub const DEFAULT_MANIFEST_MAX_AGE: Duration = Duration::from_secs(7 * 24 * 60 * 60);
