use schemars::JsonSchema;
use serde_json::Value;

/// The input schema a model sees for `T`: JSON Schema 2020-12 with an object
/// root, without the root `title`, `description` and `$schema` (the tool's
/// own description says what it is).
pub fn schema_for<T: JsonSchema>() -> Value {
    let schema = schemars::SchemaGenerator::default().into_root_schema_for::<T>();
    let mut value = schema.to_value();
    if let Value::Object(map) = &mut value {
        map.remove("title");
        map.remove("description");
        map.remove("$schema");
    }
    value
}

/// True when the schema's root is an object schema (`"type": "object"`).
pub(crate) fn is_object_schema(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Search input.
    #[derive(schemars::JsonSchema, serde::Deserialize)]
    #[allow(dead_code)]
    struct Search {
        /// What to look for.
        query: String,
        limit: Option<u32>,
    }

    #[test]
    fn root_is_an_object_without_title_or_description() {
        let s = schema_for::<Search>();
        assert!(is_object_schema(&s));
        assert!(s.get("title").is_none());
        assert!(s.get("description").is_none());
        assert_eq!(s["required"], serde_json::json!(["query"]));
        assert_eq!(s["properties"]["query"]["description"], "What to look for.");
    }
}
