//! A connection's offers (resources, templates, prompts, instructions):
//! kept as last listed, and listed again when the server says its resource
//! or prompt list changed (the legacy notification reaches our handler; on
//! 2026-07-28 a listen stream carries it), then recorded in the catalog.

use super::{Connection, Phase};
use crate::mcp::client::live::Live;
use crate::mcp::client::offers::Offers;
use crate::mcp::protocol::carries_request_meta;
use crate::sync::RwLockExt;
use std::sync::Arc;

impl Connection {
    /// The offers as last listed (live or from the manifest).
    pub(crate) fn offers(&self) -> Option<Arc<Offers>> {
        self.offers.read_unpoisoned().clone()
    }

    pub(crate) fn set_offers(&self, offers: Offers) {
        *self.offers.write_unpoisoned() = Some(Arc::new(offers));
    }

    /// The live connection when there is a usable one now (connects
    /// nothing).
    pub(crate) fn live_now(&self) -> Option<Arc<Live>> {
        match &self.lock().state {
            Phase::Connected(live) if live.dead_reason().is_none() => Some(live.clone()),
            _ => None,
        }
    }

    /// Follows `list_changed` of resources and prompts when the server
    /// declares it.
    pub(super) async fn watch_offer_changes(&self, live: &Live) {
        let Some(info) = live.peer().peer_info() else {
            return;
        };
        let caps = &info.capabilities;
        let resources = caps
            .resources
            .as_ref()
            .and_then(|r| r.list_changed)
            .unwrap_or(false);
        let prompts = caps
            .prompts
            .as_ref()
            .and_then(|p| p.list_changed)
            .unwrap_or(false);
        if !resources && !prompts {
            return;
        }
        let changed = live.handler.offers_changed.clone();
        if carries_request_meta(&info.protocol_version) {
            let mut filter = rmcp::model::SubscriptionFilter::builder();
            if resources {
                filter = filter.resources_list_changed();
            }
            if prompts {
                filter = filter.prompts_list_changed();
            }
            match live.peer().listen(filter.build()).await {
                Ok(mut sub) => {
                    let signal = changed.clone();
                    live.add_task(tokio::spawn(async move {
                        while let Ok(Some(_)) = sub.next().await {
                            signal.notify_one();
                        }
                    }));
                }
                Err(e) => {
                    tracing::debug!(server = %self.name, error = %e, "no resource/prompt list_changed stream")
                }
            }
        }
        let this = self.this.clone();
        let peer = live.peer().clone();
        live.add_task(tokio::spawn(async move {
            loop {
                changed.notified().await;
                let Some(conn) = this.upgrade() else { return };
                let info = peer.peer_info();
                let offers = Offers::list(&conn.name, &peer, info.as_deref()).await;
                if peer.is_transport_closed() {
                    return;
                }
                tracing::debug!(server = %conn.name, "MCP resources or prompts changed");
                if let Some(catalog) = &conn.catalog {
                    catalog.record_offers(&conn.name, &offers);
                }
                conn.set_offers(offers);
            }
        }));
    }
}
