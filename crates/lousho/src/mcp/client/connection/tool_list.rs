//! A connection's tool list: built from a listing (filtered, named, pinned),
//! installed, and refreshed when the server announces a change.

use super::Connection;
use crate::mcp::client::catalog::CacheHint;
use crate::mcp::client::error::McpError;
use crate::mcp::client::live::Live;
use crate::mcp::client::naming::ToolNames;
use crate::mcp::client::tool::{Listing, RemoteTool};
use crate::mcp::client::warnings;
use crate::mcp::protocol::carries_request_meta;
use crate::policy::{PinState, ServerPins, ToolDrift};
use crate::sync::RwLockExt;
use std::sync::Arc;

impl Connection {
    pub(super) fn set_tools(&self, (tools, drift): (Vec<Arc<RemoteTool>>, Vec<ToolDrift>)) {
        for d in &drift {
            warnings::pin_drift(d, self.pin_check.as_ref().map(|p| p.mode));
        }
        *self.drift.write_unpoisoned() = drift;
        *self.tools.write_unpoisoned() = Arc::from(tools);
        self.listed.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// The definitions of the last listing, as pins (`None` before any).
    pub(crate) fn live_pins(&self) -> Option<ServerPins> {
        if !self.listed.load(std::sync::atomic::Ordering::SeqCst) {
            return None;
        }
        let tools = self.tools.read_unpoisoned().clone();
        let mut pins = ServerPins::new();
        for t in tools.iter() {
            pins = pins.tool(t.bare_name(), t.definition.clone());
        }
        Some(pins)
    }

    /// The drift the last listing found.
    pub(crate) fn drift(&self) -> Vec<ToolDrift> {
        self.drift.read_unpoisoned().clone()
    }

    /// Turns a listing into tools: filtered, named, checked for collisions,
    /// compared with the pins; with the drift found.
    pub(super) fn build_tools(
        &self,
        remote: &[rmcp::model::Tool],
    ) -> Result<(Vec<Arc<RemoteTool>>, Vec<ToolDrift>), McpError> {
        let mut names = ToolNames::new();
        let mut out = Vec::with_capacity(remote.len());
        let allows = self.entry.tools.matcher();
        let listing = Listing {
            approval: &self.entry.approval,
            trust: self.entry.trust,
            identity: Some(&self.identity),
            pins: self.pin_check.as_ref(),
            defer: self.entry.defer,
        };
        let mut drift = Vec::new();
        for t in remote {
            if !allows(&t.name) || app_only(t) {
                continue;
            }
            let Some(name) = names.insert_listed(self.naming, &self.name, &t.name)? else {
                continue;
            };
            let tool = RemoteTool::new(name, &self.name, t, &listing);
            if let Some(pin) = &tool.spec_ref().pin
                && pin.state != PinState::Pinned
            {
                drift.push(ToolDrift::new(
                    &self.name,
                    tool.bare_name(),
                    pin.state,
                    pin.changes.clone(),
                ));
            }
            out.push(tool);
        }
        if let Some(check) = &self.pin_check {
            let listed: Vec<&str> = remote.iter().map(|t| t.name.as_ref()).collect();
            drift.extend(check.removed(&self.name, &listed, &allows));
        }
        Ok((out, drift))
    }

    /// Refreshes the tools when the server announces a change: the legacy
    /// notification reaches our handler; on 2026-07-28 a listen stream
    /// carries it.
    pub(super) async fn watch_list_changes(&self, live: &Live) {
        let wants = live
            .peer()
            .peer_info()
            .and_then(|info| {
                info.capabilities
                    .tools
                    .as_ref()
                    .and_then(|t| t.list_changed)
            })
            .unwrap_or(false);
        if !wants {
            return;
        }
        let changed = live.handler.tools_changed.clone();
        let seen = live.handler.changes_seen.clone();
        let applied = live.refreshed.clone();
        let modern = live
            .peer()
            .peer_info()
            .is_some_and(|info| carries_request_meta(&info.protocol_version));
        if modern {
            let filter = rmcp::model::SubscriptionFilter::builder()
                .tools_list_changed()
                .build();
            match live.peer().listen(filter).await {
                Ok(mut sub) => {
                    let signal = changed.clone();
                    let seen = seen.clone();
                    live.add_task(tokio::spawn(async move {
                        while let Ok(Some(_)) = sub.next().await {
                            seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                            signal.notify_one();
                        }
                    }));
                }
                Err(e) => {
                    tracing::debug!(server = %self.name, error = %e, "no tools list_changed stream")
                }
            }
        }
        let this = self.this.clone();
        let peer = live.peer().clone();
        live.add_task(tokio::spawn(async move {
            loop {
                changed.notified().await;
                let target = seen.load(std::sync::atomic::Ordering::SeqCst);
                let Some(conn) = this.upgrade() else { return };
                let listed = peer.list_all_tools_with_cache_hint().await;
                // Mark it handled even when listing failed: nobody waits forever.
                let _ = applied.send_replace(target);
                match listed {
                    Ok(listed) => match conn.build_tools(&listed.items) {
                        Ok(tools) => {
                            tracing::debug!(server = %conn.name, count = tools.0.len(), "MCP tools changed");
                            conn.set_tools(tools);
                            let hint = CacheHint::of(&listed);
                            conn.record(peer.peer_info().as_deref(), &listed.items, hint);
                        }
                        Err(e) => tracing::warn!(server = %conn.name, error = %e, "keeping the old tool list"),
                    },
                    Err(e) => {
                        tracing::debug!(server = %conn.name, error = %e, "could not refresh tools");
                        if peer.is_transport_closed() {
                            return;
                        }
                    }
                }
            }
        }));
    }
}

/// Whether MCP Apps marks the tool for the app only
/// (`_meta.ui.visibility` listed without `"model"`): hosts must not offer
/// such a tool to the model (ext-apps, 2026-01-26). A missing or malformed
/// visibility is the default, `["model", "app"]`.
pub(crate) fn app_only(tool: &rmcp::model::Tool) -> bool {
    let visibility = tool
        .meta
        .as_ref()
        .and_then(|m| m.0.get("ui"))
        .and_then(|ui| ui.get("visibility"))
        .and_then(serde_json::Value::as_array);
    visibility.is_some_and(|v| !v.iter().any(|x| x.as_str() == Some("model")))
}

#[cfg(test)]
mod tests {
    use super::app_only;
    use serde_json::json;

    fn tool(meta: serde_json::Value) -> rmcp::model::Tool {
        serde_json::from_value(json!({
            "name": "t", "inputSchema": {"type": "object"}, "_meta": meta
        }))
        .unwrap()
    }

    #[test]
    fn tools_the_apps_extension_keeps_for_the_app_are_app_only() {
        assert!(app_only(&tool(json!({"ui": {"visibility": ["app"]}}))));
        assert!(app_only(&tool(json!({"ui": {"visibility": []}}))));
        assert!(!app_only(&tool(
            json!({"ui": {"visibility": ["model", "app"]}})
        )));
        assert!(!app_only(&tool(json!({"ui": {"visibility": ["model"]}}))));
        assert!(!app_only(&tool(json!({"ui": {"resourceUri": "ui://x"}}))));
        assert!(!app_only(&tool(json!({"ui": {"visibility": "app"}}))));
        assert!(!app_only(&tool(json!({}))));
    }
}
