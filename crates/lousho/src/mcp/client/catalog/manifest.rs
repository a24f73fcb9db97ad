//! One server's tool manifest: what its last `tools/list` returned, with
//! the server's info and a fingerprint per tool, and (format 2 on) its
//! resources, resource templates and prompts.

use crate::mcp::client::ToolFingerprint;
use crate::mcp::client::identity::ServerIdentity;
use crate::mcp::client::offers::Offers;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The manifest file format this version writes. It reads this one and
/// format 1 (tools only: listing such a server's resources or prompts
/// connects it, and the next listing rewrites the file); a file of any other
/// format is ignored (and rewritten on the next listing).
pub const MANIFEST_FORMAT: u32 = 2;

/// The oldest manifest format this version reads.
const OLDEST_FORMAT: u32 = 1;

/// What a server offered when it was last listed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolManifest {
    /// The file format ([`MANIFEST_FORMAT`]).
    pub format: u32,
    /// Whose manifest this is.
    pub identity: ServerIdentity,
    /// The server's `serverInfo` (name, version, …) as it sent it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_info: Option<Value>,
    /// The server's `instructions`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// The protocol version the connection negotiated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    /// When the listing was fetched, in milliseconds since the Unix epoch.
    pub fetched_at_ms: u64,
    /// Every tool the server listed (before the entry's tool filter).
    pub tools: Vec<ManifestTool>,
    /// Its resources, templates and prompts (format 2 on; `None` in a
    /// format-1 manifest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offers: Option<ManifestOffers>,
    /// How long the server said its lists stay valid (`ttlMs` of
    /// 2026-07-28 list results, the shortest of them): the manifest is fresh
    /// for at most this long, however long the catalog's max age.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// `private` when a list result said `cacheScope: private` (only the
    /// requesting user's client may keep it: a store shared between users
    /// should not), else `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<String>,
}

/// The cache hints of a server's 2026-07-28 list results (`ttlMs`,
/// `cacheScope`), merged over its lists: the shortest time to live, and
/// private when any list is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct CacheHint {
    /// Milliseconds the lists stay valid; `None`: no list said.
    pub(crate) ttl_ms: Option<u64>,
    /// Whether a list was `cacheScope: private`.
    pub(crate) private: bool,
}

impl CacheHint {
    /// The hint of one merged (every page) listing.
    pub(crate) fn of<T>(list: &rmcp::service::MergedList<T>) -> Self {
        Self {
            ttl_ms: list.ttl_ms,
            private: list.cache_scope == Some(rmcp::model::CacheScope::Private),
        }
    }

    /// Both hints at once: the shorter time to live, private if either is.
    pub(crate) fn and(self, other: Self) -> Self {
        let ttl_ms = match (self.ttl_ms, other.ttl_ms) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        Self {
            ttl_ms,
            private: self.private || other.private,
        }
    }
}

/// What a server offered besides tools when it was last listed, as it sent
/// it (MCP's wire shape). A list is `None` when the server does not declare
/// that capability.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ManifestOffers {
    /// `resources/list`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<Vec<Value>>,
    /// `resources/templates/list`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_templates: Option<Vec<Value>>,
    /// `prompts/list`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts: Option<Vec<Value>>,
    /// Whether the server takes `resources/subscribe`.
    #[serde(default)]
    pub subscribe: bool,
    /// Whether the server answers `completion/complete`.
    #[serde(default)]
    pub completions: bool,
    /// `skills/list` (the Skills extension, SEP-2640).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skills: Option<Vec<Value>>,
}

impl ManifestOffers {
    /// The wire shape of `offers`.
    pub(crate) fn of(offers: &Offers) -> Self {
        fn values<T: Serialize>(list: &Option<Vec<T>>) -> Option<Vec<Value>> {
            list.as_ref().map(|l| {
                l.iter()
                    .filter_map(|x| serde_json::to_value(x).ok())
                    .collect()
            })
        }
        Self {
            resources: values(&offers.resources),
            resource_templates: values(&offers.templates),
            prompts: values(&offers.prompts),
            subscribe: offers.subscribe,
            completions: offers.completions,
            skills: values(&offers.skills),
        }
    }

    /// The offers back, when every entry parses (else `None`: listing
    /// connects the server).
    pub(crate) fn to_offers(&self, instructions: Option<String>) -> Option<Offers> {
        fn parsed<T: serde::de::DeserializeOwned>(
            list: &Option<Vec<Value>>,
        ) -> Result<Option<Vec<T>>, serde_json::Error> {
            list.as_ref()
                .map(|l| l.iter().cloned().map(serde_json::from_value).collect())
                .transpose()
        }
        Some(Offers {
            resources: parsed(&self.resources).ok()?,
            templates: parsed(&self.resource_templates).ok()?,
            prompts: parsed(&self.prompts).ok()?,
            instructions,
            subscribe: self.subscribe,
            completions: self.completions,
            skills: parsed(&self.skills).ok()?,
            cache: CacheHint::default(),
        })
    }
}

/// One tool of a manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ManifestTool {
    /// [`ToolFingerprint::of`] the definition.
    pub fingerprint: ToolFingerprint,
    /// The definition as listed: name, title, description, input and output
    /// schema, annotations, `_meta`.
    pub definition: Value,
}

impl ToolManifest {
    /// A manifest of `tools` (as listed now) for `identity`.
    pub(crate) fn from_listing(
        identity: ServerIdentity,
        info: Option<&rmcp::model::ServerPeerInfo>,
        tools: &[rmcp::model::Tool],
        offers: Option<&Offers>,
        hint: CacheHint,
    ) -> Self {
        let hint = offers.map_or(hint, |o| hint.and(o.cache));
        Self {
            format: MANIFEST_FORMAT,
            identity,
            server_info: info
                .and_then(|i| i.server_info.as_ref())
                .and_then(|s| serde_json::to_value(s).ok()),
            instructions: info.and_then(|i| i.instructions.clone()),
            protocol_version: info.map(|i| i.protocol_version.to_string()),
            fetched_at_ms: millis_since_epoch(SystemTime::now()),
            tools: tools
                .iter()
                .filter_map(|t| {
                    Some(ManifestTool {
                        fingerprint: ToolFingerprint::of(t),
                        definition: serde_json::to_value(t).ok()?,
                    })
                })
                .collect(),
            offers: offers.map(ManifestOffers::of),
            ttl_ms: hint.ttl_ms,
            cache_scope: hint.private.then(|| "private".to_owned()),
        }
    }

    /// The longest this manifest stays fresh: `max_age`, or the server's
    /// `ttlMs` when shorter.
    pub fn fresh_for(&self, max_age: Duration) -> Duration {
        self.ttl_ms
            .map_or(max_age, |ttl| max_age.min(Duration::from_millis(ttl)))
    }

    /// The recorded offers (resources, templates, prompts, instructions),
    /// when the manifest has them and they parse.
    pub(crate) fn checked_offers(&self) -> Option<Offers> {
        self.offers.as_ref()?.to_offers(self.instructions.clone())
    }

    /// When the listing was fetched.
    pub fn fetched_at(&self) -> SystemTime {
        UNIX_EPOCH + Duration::from_millis(self.fetched_at_ms)
    }

    /// How long ago the listing was fetched (zero for a time in the future).
    pub fn age(&self) -> Duration {
        SystemTime::now()
            .duration_since(self.fetched_at())
            .unwrap_or_default()
    }

    /// The names of the listed tools.
    pub fn tool_names(&self) -> impl Iterator<Item = &str> {
        self.tools
            .iter()
            .filter_map(|t| t.definition.get("name").and_then(Value::as_str))
    }

    /// The tools as rmcp definitions, when the manifest is sound: every
    /// definition parses and matches its fingerprint. `Err` says what is
    /// wrong (the manifest is then not used).
    pub(crate) fn checked_tools(&self) -> Result<Vec<rmcp::model::Tool>, UnusableManifest> {
        if !(OLDEST_FORMAT..=MANIFEST_FORMAT).contains(&self.format) {
            return Err(UnusableManifest::Format { found: self.format });
        }
        self.tools
            .iter()
            .map(|t| {
                let tool: rmcp::model::Tool = serde_json::from_value(t.definition.clone())
                    .map_err(UnusableManifest::Definition)?;
                if ToolFingerprint::of(&tool) != t.fingerprint {
                    return Err(UnusableManifest::Fingerprint(tool.name.into()));
                }
                Ok(tool)
            })
            .collect()
    }
}

fn millis_since_epoch(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// Why a stored manifest is not used (logged as a warning; the server then
/// connects instead).
#[derive(Debug, thiserror::Error)]
pub(crate) enum UnusableManifest {
    /// The file could not be read.
    #[error("it could not be read: {0}")]
    Read(#[source] std::io::Error),
    /// The file is larger than any manifest lousho writes.
    #[error("it is larger than {0} bytes")]
    TooLarge(u64),
    /// The file is not a manifest.
    #[error("it is not a manifest: {0}")]
    NotAManifest(#[source] serde_json::Error),
    /// Written by a lousho with another manifest format.
    #[error("it has format {found} (this lousho reads {OLDEST_FORMAT} to {MANIFEST_FORMAT})")]
    Format {
        /// The file's format.
        found: u32,
    },
    /// A tool definition does not parse.
    #[error("a tool definition does not parse: {0}")]
    Definition(#[source] serde_json::Error),
    /// A tool definition does not match its fingerprint.
    #[error("tool `{0}` does not match its fingerprint")]
    Fingerprint(String),
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn manifest(format: u32) -> ToolManifest {
        let tool: rmcp::model::Tool = serde_json::from_value(
            json!({"name": "t", "description": "d", "inputSchema": {"type": "object"}}),
        )
        .unwrap();
        let identity = ServerIdentity::of(&crate::McpServer::stdio("srv"));
        serde_json::from_value(json!({
            "format": format, "identity": identity, "fetchedAtMs": 1,
            "tools": [{"fingerprint": ToolFingerprint::of(&tool), "definition": tool}]
        }))
        .unwrap()
    }

    #[test]
    fn a_format_1_manifest_still_gives_its_tools_but_no_offers() {
        let old = manifest(1);
        assert_eq!(old.checked_tools().unwrap().len(), 1);
        assert!(old.checked_offers().is_none(), "listing offers connects");
        assert!(matches!(
            manifest(MANIFEST_FORMAT + 1).checked_tools(),
            Err(UnusableManifest::Format { .. })
        ));
    }

    #[test]
    fn offers_round_trip_through_the_wire_shape() {
        let offers = Offers {
            resources: Some(vec![rmcp::model::Resource::new("file:///a", "a")]),
            templates: None,
            prompts: Some(Vec::new()),
            instructions: Some("be nice".into()),
            subscribe: true,
            completions: false,
            skills: Some(vec![rmcp::model::Skill::new(
                "skill://a/SKILL.md",
                rmcp::model::SkillFrontmatter::new("a", "does a"),
                rmcp::model::SkillResources::Dynamic,
            )]),
            cache: CacheHint::default(),
        };
        let mut m = manifest(MANIFEST_FORMAT);
        m.offers = Some(ManifestOffers::of(&offers));
        m.instructions = Some("be nice".into());
        let back: ToolManifest = serde_json::from_value(serde_json::to_value(&m).unwrap()).unwrap();
        assert_eq!(back.checked_offers(), Some(offers));
    }

    #[test]
    fn a_servers_ttl_shortens_how_long_its_manifest_is_fresh() {
        let week = Duration::from_secs(7 * 24 * 3600);
        let mut m = manifest(MANIFEST_FORMAT);
        assert_eq!(m.fresh_for(week), week);
        m.ttl_ms = Some(60_000);
        assert_eq!(m.fresh_for(week), Duration::from_secs(60));
        m.ttl_ms = Some(u64::MAX);
        assert_eq!(m.fresh_for(week), week);
        let hint = CacheHint {
            ttl_ms: Some(5),
            private: false,
        }
        .and(CacheHint {
            ttl_ms: None,
            private: true,
        });
        assert_eq!(
            hint,
            CacheHint {
                ttl_ms: Some(5),
                private: true
            }
        );
    }
}
