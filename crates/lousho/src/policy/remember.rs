//! Remembered approvals ("always allow"): keyed by the server, the tool and
//! the tool's definition, so a tool whose definition changed asks again.

use super::ApprovalRequest;
use crate::sync::MutexExt;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

/// What a remembered approval is keyed by: the tool's server (the digest of
/// its [`ServerIdentity`](crate::mcp::ServerIdentity); none for local
/// tools), the tool's full name, and its definition's fingerprint (none for
/// local tools). The same name on another server, or a changed definition,
/// is another key.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ApprovalKey {
    /// The server identity's digest, for an MCP tool lousho connected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// The tool's full name as the model sees it.
    pub tool: String,
    /// The definition's fingerprint, for an MCP tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
}

impl ApprovalKey {
    /// The key of the tool a request asks about.
    pub fn of(request: &ApprovalRequest) -> Self {
        Self {
            server: request.server_identity.clone(),
            tool: request.tool_name.clone(),
            fingerprint: request.fingerprint.clone(),
        }
    }
}

/// Approvals given "for the rest of the session": once a human allows a
/// tool always, later requests with the same [`ApprovalKey`] are approved
/// without asking; a request for the same tool after its definition changed
/// (or from another server) is not. Cheap to clone (shared).
///
/// ```
/// use lousho::policy::{ApprovalDecision, RememberedApprovals, approval_handler};
/// let always = RememberedApprovals::new();
/// let handler = approval_handler(move |request| {
///     let always = always.clone();
///     async move {
///         if always.allows(&request) {
///             return ApprovalDecision::Approve;
///         }
///         // … ask a human; on "always": always.remember(&request);
///         ApprovalDecision::deny("not now")
///     }
/// });
/// # let _ = handler;
/// ```
#[derive(Debug, Clone, Default)]
pub struct RememberedApprovals {
    keys: Arc<Mutex<BTreeSet<ApprovalKey>>>,
}

impl RememberedApprovals {
    /// Nothing remembered.
    pub fn new() -> Self {
        Self::default()
    }

    /// Remembers that the tool of `request` (this server, this definition)
    /// is always allowed.
    pub fn remember(&self, request: &ApprovalRequest) {
        self.keys.lock_unpoisoned().insert(ApprovalKey::of(request));
    }

    /// Whether the tool of `request` was always allowed, with this
    /// definition on this server.
    pub fn allows(&self, request: &ApprovalRequest) -> bool {
        self.keys
            .lock_unpoisoned()
            .contains(&ApprovalKey::of(request))
    }

    /// The remembered keys.
    pub fn keys(&self) -> Vec<ApprovalKey> {
        self.keys.lock_unpoisoned().iter().cloned().collect()
    }
}
