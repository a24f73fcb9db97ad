//! Pins: the tool definitions a team reviewed, kept in a lock file, and what
//! happens when a server's live definitions drift from them.
//!
//! A [`Pins`] value holds, per MCP server and tool, the definition's
//! fingerprint (SHA-256 of its canonical JSON, the one
//! [`ToolFingerprint`](crate::mcp::ToolFingerprint)) and the parts a
//! reviewer reads: title, description, schemas, annotations. It is read from
//! and written to a lock file (`lousho pin agent.yaml` writes
//! `agent.lock.json` next to the spec; [`lock_path`]), or built in code.
//!
//! On connect, and when a server announces a tool-list change, each live
//! tool is compared with its pin ([`PinState`]): `pinned`, `new` (not in the
//! lock file), `changed` (another fingerprint, with a short readable diff),
//! and pinned tools the server no longer lists are `removed`. Per server,
//! [`PinMode`] says what drift does: `off` nothing, `warn` a `tracing`
//! warning and the state in `lousho tools`, `enforce` a new or changed tool
//! is never offered to the model and a call of it is denied ("definition
//! changed since pinned: description +120 chars; run `lousho pin` to
//! accept"). The default is `warn` when pins are given (a lock file exists)
//! and `off` otherwise.

mod diff;
mod lock;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;

pub use crate::tool::pin::{PinMode, PinState, ToolPin};
pub use lock::{LOCK_FILE_VERSION, PinsError, lock_path};

/// One tool's definition as pinned (or as listed live): the parts its
/// fingerprint covers. Serialises in MCP's spelling (`inputSchema`, …).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct PinnedTool {
    /// SHA-256 (64 hex digits) of the definition's canonical JSON.
    pub fingerprint: String,
    /// The tool's `title`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the model reads about the tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The input's JSON Schema.
    pub input_schema: Value,
    /// The structured output's JSON Schema, if declared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// The MCP annotations as the server sent them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
}

impl PinnedTool {
    /// A definition with its fingerprint and input schema; the other parts unset.
    pub fn new(fingerprint: impl Into<String>, input_schema: Value) -> Self {
        Self {
            fingerprint: fingerprint.into(),
            title: None,
            description: None,
            input_schema,
            output_schema: None,
            annotations: None,
        }
    }

    /// What changed from `self` (the pin) to `live`, one short phrase per
    /// change (`description +120 chars`, `annotations: readOnlyHint unset →
    /// true`, `input schema: property cc added`).
    pub fn changes_to(&self, live: &PinnedTool) -> Vec<String> {
        diff::changes(self, live)
    }
}

/// One server's pins, by the tool's name as the server lists it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ServerPins {
    /// The pinned tools.
    pub tools: BTreeMap<String, PinnedTool>,
}

impl ServerPins {
    /// No tools pinned.
    pub fn new() -> Self {
        Self::default()
    }

    /// Pins `tool` (its name as the server lists it) to `definition`.
    #[must_use]
    pub fn tool(mut self, name: impl Into<String>, definition: PinnedTool) -> Self {
        self.tools.insert(name.into(), definition);
        self
    }

    /// How the live `definition` of the tool `name` compares with its pin,
    /// under `mode`.
    pub fn check(&self, mode: PinMode, name: &str, definition: &PinnedTool) -> ToolPin {
        let (state, changes) = match self.tools.get(name) {
            None => (PinState::New, Vec::new()),
            Some(pinned) if pinned.fingerprint == definition.fingerprint => {
                (PinState::Pinned, Vec::new())
            }
            Some(pinned) => (PinState::Changed, pinned.changes_to(definition)),
        };
        ToolPin {
            mode,
            state,
            changes,
        }
    }
}

/// Pinned tool definitions for several servers, by server name: the content
/// of a lock file.
///
/// ```
/// use lousho::policy::{Pins, PinnedTool, ServerPins};
/// let pins = Pins::new().server(
///     "files",
///     ServerPins::new().tool("read", PinnedTool::new("ab12…", serde_json::json!({"type": "object"}))),
/// );
/// let text = pins.to_json_string();
/// assert_eq!(Pins::from_json_str(&text).unwrap(), pins);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Pins {
    /// The lock file format's version ([`LOCK_FILE_VERSION`]).
    pub version: u32,
    /// Each server's pins.
    pub servers: BTreeMap<String, ServerPins>,
}

impl Default for Pins {
    fn default() -> Self {
        Self {
            version: LOCK_FILE_VERSION,
            servers: BTreeMap::new(),
        }
    }
}

impl Pins {
    /// No servers pinned.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the pins of `server`.
    #[must_use]
    pub fn server(mut self, server: impl Into<String>, pins: ServerPins) -> Self {
        self.servers.insert(server.into(), pins);
        self
    }

    /// The pins of `server`, if it has any.
    pub fn get(&self, server: &str) -> Option<&ServerPins> {
        self.servers.get(server)
    }

    /// Every difference between these pins and `live` (the definitions the
    /// servers list now, e.g. [`McpClient::live_pins`](crate::mcp::McpClient::live_pins)),
    /// for the servers in `live`: new, changed and removed tools, by server
    /// then tool. Empty when nothing drifted.
    pub fn drift(&self, live: &Pins) -> Vec<ToolDrift> {
        let empty = ServerPins::default();
        let mut out = Vec::new();
        for (server, now) in &live.servers {
            let pinned = self.servers.get(server).unwrap_or(&empty);
            out.extend(server_drift(server, pinned, now));
        }
        out
    }
}

/// The drift of one server: its live tools against its pins.
pub(crate) fn server_drift(server: &str, pinned: &ServerPins, live: &ServerPins) -> Vec<ToolDrift> {
    let mut out = Vec::new();
    for (name, definition) in &live.tools {
        let pin = pinned.check(PinMode::Warn, name, definition);
        if pin.state != PinState::Pinned {
            out.push(ToolDrift {
                server: server.to_owned(),
                tool: name.clone(),
                state: pin.state,
                changes: pin.changes,
            });
        }
    }
    for name in pinned.tools.keys() {
        if !live.tools.contains_key(name) {
            out.push(ToolDrift {
                server: server.to_owned(),
                tool: name.clone(),
                state: PinState::Removed,
                changes: Vec::new(),
            });
        }
    }
    out.sort_by(|a, b| (&a.server, &a.tool).cmp(&(&b.server, &b.tool)));
    out
}

/// A tool whose live definition is not the pinned one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolDrift {
    /// The server's name.
    pub server: String,
    /// The tool's name as the server lists it.
    pub tool: String,
    /// `new`, `changed` or `removed`.
    pub state: PinState,
    /// For `changed`: what changed, one short phrase each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<String>,
}

impl ToolDrift {
    /// The drift of `server`'s tool `tool`.
    pub fn new(
        server: impl Into<String>,
        tool: impl Into<String>,
        state: PinState,
        changes: Vec<String>,
    ) -> Self {
        Self {
            server: server.into(),
            tool: tool.into(),
            state,
            changes,
        }
    }
}

/// `server/tool: changed (description +120 chars)`.
impl fmt::Display for ToolDrift {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}: {}", self.server, self.tool, self.state)?;
        if !self.changes.is_empty() {
            write!(f, " ({})", self.changes.join("; "))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn def(fp: &str, description: &str) -> PinnedTool {
        PinnedTool {
            description: Some(description.into()),
            ..PinnedTool::new(fp, json!({"type": "object"}))
        }
    }

    #[test]
    fn states_and_the_enforce_message() {
        let pins = ServerPins::new().tool("a", def("1", "short"));
        let same = pins.check(PinMode::Enforce, "a", &def("1", "short"));
        assert_eq!(same.state, PinState::Pinned);
        assert!(!same.blocks());
        let longer = "short".to_owned() + &"x".repeat(120);
        let changed = pins.check(PinMode::Enforce, "a", &def("2", &longer));
        assert_eq!(changed.state, PinState::Changed);
        assert!(changed.blocks());
        assert_eq!(
            changed.denial(),
            "definition changed since pinned: description +120 chars; run `lousho pin` to accept"
        );
        let warned = pins.check(PinMode::Warn, "a", &def("2", &longer));
        assert!(!warned.blocks());
        let new = pins.check(PinMode::Enforce, "b", &def("3", "x"));
        assert_eq!(new.state, PinState::New);
        assert!(new.blocks() && new.denial().contains("new since pinned"));
    }

    #[test]
    fn drift_lists_new_changed_and_removed_by_server_and_tool() {
        let pinned = Pins::new().server(
            "s",
            ServerPins::new()
                .tool("keep", def("1", "k"))
                .tool("gone", def("2", "g"))
                .tool("edit", def("3", "e")),
        );
        let live = Pins::new().server(
            "s",
            ServerPins::new()
                .tool("keep", def("1", "k"))
                .tool("edit", def("4", "e!"))
                .tool("added", def("5", "a")),
        );
        let drift = pinned.drift(&live);
        let states: Vec<(String, PinState)> =
            drift.iter().map(|d| (d.tool.clone(), d.state)).collect();
        assert_eq!(
            states,
            [
                ("added".into(), PinState::New),
                ("edit".into(), PinState::Changed),
                ("gone".into(), PinState::Removed)
            ]
        );
        assert_eq!(
            drift[1].to_string(),
            "s/edit: changed (description +1 char)"
        );
        assert!(pinned.drift(&pinned).is_empty());
    }
}
