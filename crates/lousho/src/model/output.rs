//! Structured output: a JSON Schema the model's answer must match, sent as
//! the provider's native structured output (OpenAI `response_format:
//! json_schema` strict; Anthropic `output_config.format`).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A JSON Schema the final answer must match (see
/// [`ModelSettings::output`](crate::model::ModelSettings::output)). Tools
/// stay callable: the schema applies to the answer's text, not to the turns
/// that call tools.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct OutputSchema {
    /// A name for it (OpenAI's `json_schema.name`: a-z, A-Z, 0-9, `_`, `-`).
    pub name: String,
    /// The schema (an object schema).
    pub schema: Value,
}

impl OutputSchema {
    /// A schema named `name`.
    pub fn new(name: impl Into<String>, schema: Value) -> Self {
        Self {
            name: name.into(),
            schema,
        }
    }

    /// The schema of `T` (schemars), named after the type.
    pub fn of<T: schemars::JsonSchema>() -> Self {
        let name: String = T::schema_name()
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .take(64)
            .collect();
        let schema = schemars::SchemaGenerator::default().into_root_schema_for::<T>();
        Self::new(name, schema.to_value())
    }

    /// The schema as strict structured output takes it: every object closed
    /// (`additionalProperties: false`) with every property required (an
    /// optional field's type already allows `null` in a generated schema),
    /// `$schema` and `title` at the root left out.
    pub fn strict(&self) -> Value {
        let mut schema = self.schema.clone();
        if let Some(root) = schema.as_object_mut() {
            root.remove("$schema");
            root.remove("title");
        }
        close(&mut schema);
        schema
    }
}

/// Closes every object schema within `schema`.
fn close(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            if let Some(Value::Object(props)) = map.get("properties") {
                let names: Vec<Value> = props.keys().cloned().map(Value::String).collect();
                map.insert("required".into(), Value::Array(names));
                map.insert("additionalProperties".into(), Value::Bool(false));
            } else if map.get("type") == Some(&Value::String("object".into())) {
                map.entry("additionalProperties")
                    .or_insert(Value::Bool(false));
                map.entry("properties")
                    .or_insert_with(|| Value::Object(Map::new()));
            }
            for (key, value) in map.iter_mut() {
                if key != "required" && key != "enum" && key != "const" {
                    close(value);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(close),
        _ => {}
    }
}

/// The JSON in a model's answer: the text itself, or the body of a
/// Markdown code fence around it.
pub(crate) fn answer_json(text: &str) -> Result<Value, serde_json::Error> {
    let trimmed = text.trim();
    let body = trimmed
        .strip_prefix("```json")
        .or_else(|| trimmed.strip_prefix("```"))
        .and_then(|rest| rest.strip_suffix("```"))
        .unwrap_or(trimmed);
    serde_json::from_str(body.trim())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strict_closes_objects_and_requires_every_property() {
        let schema = OutputSchema::new(
            "x",
            json!({"$schema": "s", "title": "X", "type": "object",
                   "properties": {"a": {"type": "string"}, "b": {"type": "object",
                   "properties": {"c": {"type": ["integer", "null"]}}}},
                   "required": ["a"]}),
        );
        let strict = schema.strict();
        assert_eq!(strict.get("$schema"), None);
        assert_eq!(strict["required"], json!(["a", "b"]));
        assert_eq!(strict["additionalProperties"], false);
        assert_eq!(strict["properties"]["b"]["required"], json!(["c"]));
        assert_eq!(strict["properties"]["b"]["additionalProperties"], false);
    }

    #[test]
    fn answers_in_a_code_fence_are_read() {
        assert_eq!(
            answer_json("```json\n{\"a\": 1}\n```").unwrap(),
            json!({"a": 1})
        );
        assert_eq!(answer_json(" {\"a\": 1} ").unwrap(), json!({"a": 1}));
        assert!(answer_json("sure! {\"a\": 1}").is_err());
    }
}
