use serde::{Deserialize, Serialize};

/// The MCP tool hints (`readOnlyHint`, `destructiveHint`, …) plus a title.
///
/// Every field is optional: an unset hint means "not stated", and the MCP
/// defaults apply where a decision is needed (`destructiveHint` defaults to
/// true, `readOnlyHint` to false). Serialises in MCP's wire shape.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// Human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not modify its environment.
    #[serde(
        default,
        rename = "readOnlyHint",
        skip_serializing_if = "Option::is_none"
    )]
    pub read_only: Option<bool>,
    /// The tool may perform destructive updates (meaningful when not read-only).
    #[serde(
        default,
        rename = "destructiveHint",
        skip_serializing_if = "Option::is_none"
    )]
    pub destructive: Option<bool>,
    /// Calling the tool twice with the same arguments has no further effect.
    #[serde(
        default,
        rename = "idempotentHint",
        skip_serializing_if = "Option::is_none"
    )]
    pub idempotent: Option<bool>,
    /// The tool talks to an open world of external entities.
    #[serde(
        default,
        rename = "openWorldHint",
        skip_serializing_if = "Option::is_none"
    )]
    pub open_world: Option<bool>,
}

impl ToolAnnotations {
    /// No hints at all.
    pub fn new() -> Self {
        Self::default()
    }

    /// Hints for a tool that only reads: `readOnlyHint: true, destructiveHint: false`.
    pub fn read_only_tool() -> Self {
        Self::new().read_only(true).destructive(false)
    }

    /// Sets the title.
    #[must_use]
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets `readOnlyHint`.
    #[must_use]
    pub fn read_only(mut self, value: bool) -> Self {
        self.read_only = Some(value);
        self
    }

    /// Sets `destructiveHint`.
    #[must_use]
    pub fn destructive(mut self, value: bool) -> Self {
        self.destructive = Some(value);
        self
    }

    /// Sets `idempotentHint`.
    #[must_use]
    pub fn idempotent(mut self, value: bool) -> Self {
        self.idempotent = Some(value);
        self
    }

    /// Sets `openWorldHint`.
    #[must_use]
    pub fn open_world(mut self, value: bool) -> Self {
        self.open_world = Some(value);
        self
    }

    /// True when no hint and no title is set.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// `readOnlyHint`, with MCP's default (false).
    pub fn is_read_only(&self) -> bool {
        self.read_only.unwrap_or(false)
    }

    /// `destructiveHint`, with MCP's default (true).
    pub fn is_destructive(&self) -> bool {
        self.destructive.unwrap_or(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialises_in_mcp_wire_shape() {
        let a = ToolAnnotations::read_only_tool().title("Look up");
        let v = serde_json::to_value(&a).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"title": "Look up", "readOnlyHint": true, "destructiveHint": false})
        );
        assert_eq!(
            serde_json::to_value(ToolAnnotations::new()).unwrap(),
            serde_json::json!({})
        );
    }

    #[test]
    fn defaults_follow_mcp() {
        let a = ToolAnnotations::new();
        assert!(!a.is_read_only());
        assert!(a.is_destructive());
        assert!(a.is_empty());
    }
}
