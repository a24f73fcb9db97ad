//! The live side of pins: a listed tool's definition as a [`PinnedTool`],
//! and one server's listing compared with its pins.

use super::fingerprint::ToolFingerprint;
use crate::policy::{PinMode, PinState, PinnedTool, ServerPins, ToolDrift, ToolPin};
use serde_json::Value;

/// The parts of `tool` its fingerprint covers, with the fingerprint.
pub(crate) fn definition_of(tool: &rmcp::model::Tool) -> PinnedTool {
    let mut definition = PinnedTool::new(
        ToolFingerprint::of(tool).as_str(),
        Value::Object((*tool.input_schema).clone()),
    );
    definition.title.clone_from(&tool.title);
    definition.description = tool.description.as_deref().map(str::to_owned);
    definition.output_schema = tool
        .output_schema
        .as_ref()
        .map(|s| Value::Object((**s).clone()));
    definition.annotations = tool
        .annotations
        .as_ref()
        .and_then(|a| serde_json::to_value(a).ok());
    definition
}

/// How one server compares its tools with its pins.
#[derive(Debug, Clone)]
pub(crate) struct PinCheck {
    pub(crate) mode: PinMode,
    pub(crate) pins: ServerPins,
}

impl PinCheck {
    /// The check for an entry: its mode (default `warn` with pins, `off`
    /// without); `None` when off.
    pub(crate) fn new(mode: Option<PinMode>, pins: Option<&ServerPins>) -> Option<Self> {
        let mode = mode.unwrap_or(PinMode::default_for(pins.is_some()));
        (mode != PinMode::Off).then(|| Self {
            mode,
            pins: pins.cloned().unwrap_or_default(),
        })
    }

    /// The pin state of the listed tool `name`.
    pub(crate) fn check(&self, name: &str, definition: &PinnedTool) -> ToolPin {
        self.pins.check(self.mode, name, definition)
    }

    /// Pinned tools missing from `listed` (names the filter lets through).
    pub(crate) fn removed<'a>(
        &'a self,
        server: &'a str,
        listed: &'a [&str],
        allows: &'a dyn Fn(&str) -> bool,
    ) -> impl Iterator<Item = ToolDrift> + 'a {
        self.pins
            .tools
            .keys()
            .filter(move |name| allows(name) && !listed.contains(&name.as_str()))
            .map(move |name| ToolDrift {
                server: server.to_owned(),
                tool: name.clone(),
                state: PinState::Removed,
                changes: Vec::new(),
            })
    }
}
