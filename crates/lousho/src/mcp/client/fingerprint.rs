//! The fingerprint of an MCP tool definition: one function, shared by the
//! tool manifests (catalog) and the pins (drift detection, remembered
//! approvals).
//!
//! A fingerprint is the SHA-256 of the canonical JSON of the parts of a
//! definition that the model or an approval depends on: name, title,
//! description, input schema, output schema and annotations. Canonical means
//! object keys sorted at every depth and no insignificant whitespace, so the
//! same definition hashes the same whatever order a server sends its keys in
//! (and whether or not some crate in the build enables serde_json's
//! `preserve_order`). `_meta` and `icons` are left out: they change nothing
//! the model reads or a user approves.

use crate::mcp::digest::sha256_hex;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;

/// SHA-256 of a tool definition's canonical JSON, as 64 lowercase hex digits.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ToolFingerprint(String);

impl ToolFingerprint {
    /// The fingerprint of `tool`: of its name, title, description, input and
    /// output schemas and annotations (object keys sorted at every depth;
    /// `_meta` and `icons` left out).
    pub fn of(tool: &rmcp::model::Tool) -> Self {
        let mut parts = Map::new();
        parts.insert("name".into(), Value::String(tool.name.to_string()));
        if let Some(title) = &tool.title {
            parts.insert("title".into(), Value::String(title.clone()));
        }
        if let Some(description) = &tool.description {
            parts.insert("description".into(), Value::String(description.to_string()));
        }
        parts.insert(
            "inputSchema".into(),
            Value::Object((*tool.input_schema).clone()),
        );
        if let Some(schema) = &tool.output_schema {
            parts.insert("outputSchema".into(), Value::Object((**schema).clone()));
        }
        if let Some(annotations) = &tool.annotations
            && let Ok(value) = serde_json::to_value(annotations)
        {
            parts.insert("annotations".into(), value);
        }
        Self::of_value(&Value::Object(parts))
    }

    /// The fingerprint of any JSON value, by its canonical form.
    pub fn of_value(value: &Value) -> Self {
        let mut text = String::new();
        write_canonical(value, &mut text);
        Self(sha256_hex(text.as_bytes()))
    }

    /// The 64 hex digits.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The first 12 hex digits, for tables and messages.
    pub fn short(&self) -> &str {
        self.0.get(..12).unwrap_or(&self.0)
    }
}

impl fmt::Display for ToolFingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for ToolFingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ToolFingerprint({})", self.short())
    }
}

/// Writes `value` as compact JSON with object keys sorted at every depth.
fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                if let Some(item) = map.get(key) {
                    write_canonical(item, out);
                }
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(value: Value) -> rmcp::model::Tool {
        serde_json::from_value(value).expect("a valid tool")
    }

    #[test]
    fn key_order_does_not_matter_but_content_does() {
        let a = tool(json!({"name": "t", "description": "d",
            "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "number"}}}}));
        let b = tool(
            json!({"inputSchema": {"properties": {"b": {"type": "number"}, "a": {"type": "string"}}, "type": "object"},
            "description": "d", "name": "t"}),
        );
        assert_eq!(ToolFingerprint::of(&a), ToolFingerprint::of(&b));
        let changed = tool(json!({"name": "t", "description": "d!",
            "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "number"}}}}));
        assert_ne!(ToolFingerprint::of(&a), ToolFingerprint::of(&changed));
        let hinted = tool(json!({"name": "t", "description": "d",
            "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "number"}}},
            "annotations": {"readOnlyHint": true}}));
        assert_ne!(ToolFingerprint::of(&a), ToolFingerprint::of(&hinted));
        let with_meta = tool(json!({"name": "t", "description": "d",
            "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "number"}}},
            "_meta": {"x": 1}}));
        assert_eq!(ToolFingerprint::of(&a), ToolFingerprint::of(&with_meta));
    }

    #[test]
    fn canonical_form_is_compact_and_sorted() {
        let mut out = String::new();
        write_canonical(
            &json!({"b": [1, {"d": "x\"", "c": null}], "a": true}),
            &mut out,
        );
        assert_eq!(out, r#"{"a":true,"b":[1,{"c":null,"d":"x\""}]}"#);
        let fp = ToolFingerprint::of_value(&json!({}));
        // SHA-256 of "{}".
        assert_eq!(
            fp.as_str(),
            "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
        );
        assert_eq!(fp.short().len(), 12);
    }
}
