//! Token estimates of tool definitions.
//!
//! Not the model's tokenizer: one token per 4 bytes of the definition's JSON
//! (`{"name", "description", "input_schema"}`, as providers receive it). For
//! English text and JSON schemas the common tokenizers come within about
//! ±25 % of it, which is enough to compare configurations and to decide when
//! tool search pays off. The same rule as the context budget's.

use super::super::ToolSpec;
use serde_json::{Value, json};

/// Bytes per token in the estimate.
pub const BYTES_PER_TOKEN: usize = 4;

/// The estimated tokens of a definition with this name, description and
/// input schema.
pub fn estimate_definition_tokens(name: &str, description: &str, input_schema: &Value) -> usize {
    let json = json!({ "name": name, "description": description, "input_schema": input_schema });
    serde_json::to_vec(&json)
        .map_or(0, |v| v.len())
        .div_ceil(BYTES_PER_TOKEN)
}

/// The estimated tokens of `spec`'s definition as the model is sent it.
pub fn estimate_tool_tokens(spec: &ToolSpec) -> usize {
    estimate_definition_tokens(&spec.name, &spec.description, &spec.input_schema)
}
