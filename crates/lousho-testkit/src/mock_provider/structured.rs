//! Structured output as the APIs check it: OpenAI's `response_format`
//! (`json_schema` with `strict: true`) and Anthropic's
//! `output_config.format` (`json_schema`) each refuse a schema with an
//! object that is not closed (`additionalProperties: false`) or, for
//! OpenAI strict mode, a property left out of `required`.

use serde_json::Value;

/// 400's message for a bad OpenAI `response_format`, if any.
pub(crate) fn check_openai(request: &Value) -> Option<String> {
    let format = request.get("response_format")?;
    if format.get("type").and_then(Value::as_str) != Some("json_schema") {
        return None;
    }
    let spec = format.get("json_schema")?;
    let name = spec.get("name").and_then(Value::as_str).unwrap_or_default();
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Some(format!(
            "Invalid 'response_format.json_schema.name': string does not match pattern '^[a-zA-Z0-9_-]+$' ({name:?})"
        ));
    }
    let strict = spec.get("strict").and_then(Value::as_bool) == Some(true);
    let schema = spec.get("schema")?;
    if strict {
        return closed(schema, true, "schema")
            .map(|why| format!("Invalid schema for response_format '{name}': {why}"));
    }
    None
}

/// 400's message for a bad Anthropic `output_config.format`, if any.
pub(crate) fn check_anthropic(request: &Value) -> Option<String> {
    if request.get("output_format").is_some() {
        // The beta field, moved to output_config.format.
        return Some("output_format: the parameter moved to output_config.format".into());
    }
    let format = request.get("output_config")?.get("format")?;
    if format.get("type").and_then(Value::as_str) != Some("json_schema") {
        return Some("output_config.format.type: Input should be 'json_schema'".into());
    }
    let Some(schema) = format.get("schema") else {
        return Some("output_config.format.schema: Field required".into());
    };
    closed(schema, false, "output_config.format.schema")
}

/// Why `schema` is not closed (every object `additionalProperties: false`,
/// with `all_required`, every property required), if it is not.
fn closed(schema: &Value, all_required: bool, at: &str) -> Option<String> {
    match schema {
        Value::Object(map) => {
            let is_object = map.get("type").and_then(Value::as_str) == Some("object")
                || map.contains_key("properties");
            if is_object {
                if map.get("additionalProperties") != Some(&Value::Bool(false)) {
                    return Some(format!(
                        "In context={at}, 'additionalProperties' is required to be supplied and to be false"
                    ));
                }
                if all_required && let Some(Value::Object(props)) = map.get("properties") {
                    let required: Vec<&str> = map
                        .get("required")
                        .and_then(Value::as_array)
                        .map(|r| r.iter().filter_map(Value::as_str).collect())
                        .unwrap_or_default();
                    if let Some(missing) = props.keys().find(|k| !required.contains(&k.as_str())) {
                        return Some(format!(
                            "In context={at}, 'required' is required to be supplied and to be an array including every key in properties. Missing '{missing}'"
                        ));
                    }
                }
            }
            map.iter()
                .filter(|(k, _)| {
                    !matches!(
                        k.as_str(),
                        "required" | "enum" | "const" | "default" | "examples"
                    )
                })
                .find_map(|(k, v)| closed(v, all_required, &format!("{at}.{k}")))
        }
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, v)| closed(v, all_required, &format!("{at}.{i}"))),
        _ => None,
    }
}
