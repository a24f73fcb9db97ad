//! One connection's tie to the catalog: its identity, the store, the max
//! age; loads the fresh manifest and records new listings.

use super::manifest::{CacheHint, ManifestOffers, ToolManifest};
use super::store::ManifestStore;
use crate::mcp::client::LOG_TARGET;
use crate::mcp::client::identity::ServerIdentity;
use crate::mcp::client::offers::Offers;
use std::sync::Arc;
use std::time::Duration;

/// Where one server's manifest lives.
pub(crate) struct CatalogLink {
    store: Arc<dyn ManifestStore>,
    identity: ServerIdentity,
    max_age: Duration,
}

impl CatalogLink {
    pub(crate) fn new(
        store: Arc<dyn ManifestStore>,
        identity: ServerIdentity,
        max_age: Duration,
    ) -> Self {
        Self {
            store,
            identity,
            max_age,
        }
    }

    /// The recorded manifest and its tools when it is fresh and sound; a
    /// stale one is left alone (debug log), an unsound one ignored with a
    /// warning.
    pub(crate) fn fresh(&self, server: &str) -> Option<(ToolManifest, Vec<rmcp::model::Tool>)> {
        let Some(manifest) = self.store.load(&self.identity) else {
            tracing::debug!(
                server,
                "catalog miss: no tool manifest recorded for this server; connecting"
            );
            return None;
        };
        if manifest.identity != self.identity {
            tracing::debug!(
                server,
                "catalog miss: the recorded manifest is of another server identity; connecting"
            );
            return None;
        }
        let age = manifest.age();
        let max_age = manifest.fresh_for(self.max_age);
        if age > max_age {
            tracing::debug!(server, ?age, ?max_age, ttl_ms = ?manifest.ttl_ms, "catalog miss: the tool manifest is too old; connecting");
            return None;
        }
        match manifest.checked_tools() {
            Ok(tools) => {
                tracing::debug!(
                    server,
                    ?age,
                    tools = tools.len(),
                    "catalog hit: the server's tools come from its manifest; it connects on its first call"
                );
                Some((manifest, tools))
            }
            Err(reason) => {
                tracing::warn!(
                    target: LOG_TARGET,
                    server,
                    "ignoring the tool manifest of MCP server `{server}`: {reason} (connecting instead)"
                );
                None
            }
        }
    }

    /// Records a listing; a failed write is a warning (the run goes on).
    pub(crate) fn record(
        &self,
        server: &str,
        info: Option<&rmcp::model::ServerPeerInfo>,
        tools: &[rmcp::model::Tool],
        offers: Option<&Offers>,
        hint: CacheHint,
    ) -> ToolManifest {
        let manifest = ToolManifest::from_listing(self.identity.clone(), info, tools, offers, hint);
        if let Err(e) = self.store.save(&self.identity, &manifest) {
            tracing::warn!(
                target: LOG_TARGET,
                server,
                "could not record the tool manifest of MCP server `{server}`: {e}"
            );
        }
        manifest
    }

    /// Replaces the recorded offers (after a resource or prompt list
    /// changed); nothing when no manifest is recorded.
    pub(crate) fn record_offers(&self, server: &str, offers: &Offers) {
        let Some(mut manifest) = self.store.load(&self.identity) else {
            return;
        };
        manifest.offers = Some(ManifestOffers::of(offers));
        let hint = CacheHint {
            ttl_ms: manifest.ttl_ms,
            private: manifest.cache_scope.is_some(),
        }
        .and(offers.cache);
        manifest.ttl_ms = hint.ttl_ms;
        manifest.cache_scope = hint.private.then(|| "private".to_owned());
        if let Err(e) = self.store.save(&self.identity, &manifest) {
            tracing::warn!(
                target: LOG_TARGET,
                server,
                "could not record the tool manifest of MCP server `{server}`: {e}"
            );
        }
    }
}
