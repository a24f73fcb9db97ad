//! Who hears about a catalog's changes: 2025-11-25 sessions that can
//! receive notifications (stdio, stateful HTTP) with the URIs each
//! subscribed to, and 2026-07-28 `subscriptions/listen` streams.

use crate::sync::MutexExt;
use rmcp::Peer;
use rmcp::service::{RoleServer, SubscriptionSink};
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// A change to announce.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Change {
    Tools,
    Prompts,
    Resources,
    /// The content at this URI changed.
    Updated(String),
}

/// The URIs one session subscribed to (`resources/subscribe`).
#[derive(Debug, Clone, Default)]
pub(crate) struct Subscribed(Arc<Mutex<BTreeSet<String>>>);

impl Subscribed {
    pub(crate) fn add(&self, uri: String) {
        self.0.lock_unpoisoned().insert(uri);
    }

    pub(crate) fn remove(&self, uri: &str) {
        self.0.lock_unpoisoned().remove(uri);
    }

    fn contains(&self, uri: &str) -> bool {
        self.0.lock_unpoisoned().contains(uri)
    }

    #[cfg_attr(not(feature = "builtin"), allow(dead_code))] // read by workspace files
    fn all(&self) -> Vec<String> {
        self.0.lock_unpoisoned().iter().cloned().collect()
    }
}

#[derive(Clone)]
enum Listener {
    /// A 2025-11-25 session and its subscriptions.
    Session {
        peer: Peer<RoleServer>,
        subscribed: Subscribed,
    },
    /// A 2026-07-28 listen stream (its sink applies the client's filter).
    Stream {
        id: u64,
        sink: SubscriptionSink,
        /// The URIs in its filter.
        #[cfg_attr(not(feature = "builtin"), allow(dead_code))] // read by workspace files
        uris: Vec<String>,
    },
}

/// The listeners of one server.
#[derive(Default)]
pub(crate) struct Listeners {
    all: Mutex<Vec<Listener>>,
    next_id: AtomicU64,
}

impl Listeners {
    /// Adds a session (on its `notifications/initialized`); sessions whose
    /// transport closed are dropped on the way.
    pub(crate) fn add_session(&self, peer: Peer<RoleServer>, subscribed: Subscribed) {
        let mut all = self.all.lock_unpoisoned();
        all.retain(|l| !matches!(l, Listener::Session { peer, .. } if peer.is_transport_closed()));
        all.push(Listener::Session { peer, subscribed });
    }

    /// Adds a listen stream; [`remove_stream`](Self::remove_stream) with the
    /// id returned when it ends.
    pub(crate) fn add_stream(&self, sink: SubscriptionSink, uris: Vec<String>) -> u64 {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        self.all
            .lock_unpoisoned()
            .push(Listener::Stream { id, sink, uris });
        id
    }

    /// Every URI some listener subscribed to.
    #[cfg_attr(not(feature = "builtin"), allow(dead_code))] // read by workspace files
    pub(crate) fn subscribed(&self) -> BTreeSet<String> {
        let all = self.all.lock_unpoisoned();
        let mut out = BTreeSet::new();
        for l in all.iter() {
            match l {
                Listener::Session { subscribed, .. } => out.extend(subscribed.all()),
                Listener::Stream { uris, .. } => out.extend(uris.iter().cloned()),
            }
        }
        out
    }

    pub(crate) fn remove_stream(&self, id: u64) {
        self.all
            .lock_unpoisoned()
            .retain(|l| !matches!(l, Listener::Stream { id: i, .. } if *i == id));
    }

    /// Sends `change` to every listener it concerns; one that cannot be
    /// reached is skipped (a closed session is dropped).
    pub(crate) async fn notify(&self, change: &Change) {
        let listeners: Vec<Listener> = {
            let mut all = self.all.lock_unpoisoned();
            all.retain(
                |l| !matches!(l, Listener::Session { peer, .. } if peer.is_transport_closed()),
            );
            all.clone()
        };
        for listener in listeners {
            let sent = match listener {
                Listener::Session { peer, subscribed } => match change {
                    Change::Tools => peer
                        .notify_tool_list_changed()
                        .await
                        .map_err(|e| e.to_string()),
                    Change::Prompts => peer
                        .notify_prompt_list_changed()
                        .await
                        .map_err(|e| e.to_string()),
                    Change::Resources => peer
                        .notify_resource_list_changed()
                        .await
                        .map_err(|e| e.to_string()),
                    Change::Updated(uri) if subscribed.contains(uri) => peer
                        .notify_resource_updated(
                            rmcp::model::ResourceUpdatedNotificationParam::new(uri.clone()),
                        )
                        .await
                        .map_err(|e| e.to_string()),
                    Change::Updated(_) => Ok(()),
                },
                Listener::Stream { sink, .. } => {
                    let r = match change {
                        Change::Tools => sink.notify_tool_list_changed().await,
                        Change::Prompts => sink.notify_prompt_list_changed().await,
                        Change::Resources => sink.notify_resource_list_changed().await,
                        Change::Updated(uri) => sink.notify_resource_updated(uri.clone()).await,
                    };
                    match r {
                        // The client did not ask for this kind (its filter).
                        Err(rmcp::service::SubscriptionSendError::NotificationNotAccepted(_)) => {
                            Ok(())
                        }
                        r => r.map_err(|e| e.to_string()),
                    }
                }
            };
            if let Err(error) = sent {
                tracing::debug!(%error, ?change, "a client could not be told of a change");
            }
        }
    }
}
