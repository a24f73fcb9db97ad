//! A tool's pin state: how its live definition compares with the one a
//! team pinned, and what the server's mode makes of that. Checking pins is
//! [`crate::policy`]'s (`Pins`); the state rides on the tool's
//! [`ToolSpec::pin`](crate::tool::ToolSpec::pin). Public as
//! `lousho::policy::{PinMode, PinState, ToolPin}`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;

/// What drift from the pins does, per server (`pin:` in a spec entry).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum PinMode {
    /// Definitions are not compared.
    Off,
    /// Drift is a warning (and shown in `lousho tools`); tools work as before.
    Warn,
    /// A new or changed tool is not offered to the model and its calls are
    /// denied until the pins are updated.
    Enforce,
}

impl PinMode {
    /// The mode when none is set: `warn` with pins, `off` without.
    pub fn default_for(has_pins: bool) -> Self {
        if has_pins {
            PinMode::Warn
        } else {
            PinMode::Off
        }
    }

    /// `off`, `warn` or `enforce`.
    pub fn as_str(self) -> &'static str {
        match self {
            PinMode::Off => "off",
            PinMode::Warn => "warn",
            PinMode::Enforce => "enforce",
        }
    }
}

impl fmt::Display for PinMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a tool's live definition compares with its pin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum PinState {
    /// The live definition has the pinned fingerprint.
    Pinned,
    /// The tool is not in the pins.
    New,
    /// The live definition differs from the pinned one.
    Changed,
    /// Pinned, but the server no longer lists it.
    Removed,
}

impl PinState {
    /// `pinned`, `new`, `changed` or `removed`.
    pub fn as_str(self) -> &'static str {
        match self {
            PinState::Pinned => "pinned",
            PinState::New => "new",
            PinState::Changed => "changed",
            PinState::Removed => "removed",
        }
    }
}

impl fmt::Display for PinState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A live MCP tool's pin state, on its [`ToolSpec::pin`](crate::tool::ToolSpec::pin).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolPin {
    /// The server's mode.
    pub mode: PinMode,
    /// How the live definition compares with the pin.
    pub state: PinState,
    /// For `changed`: what changed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<String>,
}

impl ToolPin {
    /// Whether the tool is held back: `enforce` and the tool is new or changed.
    pub fn blocks(&self) -> bool {
        self.mode == PinMode::Enforce && matches!(self.state, PinState::New | PinState::Changed)
    }

    /// What drifted, in a few words: `description +120 chars; …`, `a new
    /// tool, not in the pins`, or `pinned`.
    pub fn summary(&self) -> String {
        match self.state {
            PinState::Changed if self.changes.is_empty() => "the definition changed".to_owned(),
            PinState::Changed => self.changes.join("; "),
            PinState::New => "a new tool, not in the pins".to_owned(),
            other => other.as_str().to_owned(),
        }
    }

    /// Why a call of a held-back tool is denied, with what to do.
    pub fn denial(&self) -> String {
        let what = match self.state {
            PinState::New => "the tool is new since pinned (not in the lock file)".to_owned(),
            _ => format!("definition changed since pinned: {}", self.summary()),
        };
        format!("{what}; run `lousho pin` to accept")
    }
}
