//! Token estimates of tool definitions.
//!
//! Not the model's tokenizer: one token per 4 bytes of the definition's JSON
//! (`{"name", "description", "input_schema"}`, as providers receive it). For
//! English text and JSON schemas the common tokenizers come within about
//! ±25 % of it, which is enough to compare configurations and to decide when
//! tool search pays off. The same rule as the context budget's.

use super::super::ToolSpec;
use serde_json::Value;

/// Bytes per token in the estimate.
pub const BYTES_PER_TOKEN: usize = 4;

/// The estimated tokens of a definition with this name, description and
/// input schema.
pub fn estimate_definition_tokens(name: &str, description: &str, input_schema: &Value) -> usize {
    #[derive(serde::Serialize)]
    struct Definition<'a> {
        name: &'a str,
        description: &'a str,
        input_schema: &'a Value,
    }
    let definition = Definition {
        name,
        description,
        input_schema,
    };
    json_len(&definition).div_ceil(BYTES_PER_TOKEN)
}

/// The length of `value`'s JSON, counted as it is written (nothing is
/// cloned or kept).
pub(crate) fn json_len(value: &impl serde::Serialize) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    serde_json::to_writer(&mut count, value).map_or(0, |()| count.0)
}

/// The estimated tokens of `spec`'s definition as the model is sent it.
pub fn estimate_tool_tokens(spec: &ToolSpec) -> usize {
    estimate_definition_tokens(&spec.name, &spec.description, &spec.input_schema)
}
