//! What a server offers besides tools — its resources, resource templates,
//! prompts and skills (every page), and its `instructions` — as last listed live or
//! recorded in its manifest. Listed at connect beside the tools (only what
//! the server's capabilities declare), and again when the server says a
//! list changed.

use super::catalog::CacheHint;
use rmcp::model::{Prompt, Resource, ResourceTemplate, ServerPeerInfo, Skill};
use rmcp::service::{Peer, RoleClient};

/// One server's resources, templates and prompts. `None` means the server
/// does not declare the capability (or its listing failed).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Offers {
    /// `resources/list`, every page.
    pub(crate) resources: Option<Vec<Resource>>,
    /// `resources/templates/list`, every page.
    pub(crate) templates: Option<Vec<ResourceTemplate>>,
    /// `prompts/list`, every page.
    pub(crate) prompts: Option<Vec<Prompt>>,
    /// The server's `instructions`.
    pub(crate) instructions: Option<String>,
    /// Whether the server takes `resources/subscribe`.
    pub(crate) subscribe: bool,
    /// Whether the server answers `completion/complete`.
    pub(crate) completions: bool,
    /// `skills/list`, every page, when the server offers the Skills
    /// extension (SEP-2640; `mcp/client/skills.rs`).
    pub(crate) skills: Option<Vec<Skill>>,
    /// The lists' cache hints (2026-07-28 `ttlMs` / `cacheScope`).
    pub(crate) cache: CacheHint,
}

impl Offers {
    /// Lists what `info`'s capabilities declare, the three lists at once.
    /// A listing that fails leaves its list `None` (debug log): tools still
    /// work, and a later request asks the server again.
    pub(crate) async fn list(
        server: &str,
        peer: &Peer<RoleClient>,
        info: Option<&ServerPeerInfo>,
    ) -> Self {
        let caps = info.map(|i| &i.capabilities);
        let resources = caps.is_some_and(|c| c.resources.is_some());
        let prompts = caps.is_some_and(|c| c.prompts.is_some());
        let skills = caps.is_some_and(|c| c.supports_skills());
        let (r, t, p, k) = tokio::join!(
            async {
                if !resources {
                    return None;
                }
                peer.list_all_resources_with_cache_hint()
                    .await
                    .map_err(|e| tracing::debug!(server, error = %e, "could not list resources"))
                    .ok()
            },
            async {
                if !resources {
                    return None;
                }
                // Servers without templates may answer method-not-found.
                peer.list_all_resource_templates_with_cache_hint()
                    .await
                    .map_err(|e| tracing::debug!(server, error = %e, "could not list resource templates"))
                    .ok()
            },
            async {
                if !prompts {
                    return None;
                }
                peer.list_all_prompts_with_cache_hint()
                    .await
                    .map_err(|e| tracing::debug!(server, error = %e, "could not list prompts"))
                    .ok()
            },
            async {
                if !skills {
                    return None;
                }
                peer.list_all_skills()
                    .await
                    .map_err(|e| tracing::debug!(server, error = %e, "could not list skills"))
                    .ok()
            },
        );
        let cache = [
            r.as_ref().map(CacheHint::of),
            t.as_ref().map(CacheHint::of),
            p.as_ref().map(CacheHint::of),
        ]
        .into_iter()
        .flatten()
        .fold(CacheHint::default(), CacheHint::and);
        Self {
            resources: r.map(|l| l.items),
            templates: t.map(|l| l.items),
            prompts: p.map(|l| l.items),
            cache,
            instructions: info.and_then(|i| i.instructions.clone()),
            subscribe: caps
                .and_then(|c| c.resources.as_ref())
                .and_then(|r| r.subscribe)
                .unwrap_or(false),
            completions: caps.is_some_and(|c| c.completions.is_some()),
            skills: k,
        }
    }
}
