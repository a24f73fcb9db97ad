//! Tool input schemas, normalised for what each provider accepts.
//!
//! schemars and MCP servers produce full JSON Schema: `$ref` into `$defs`,
//! `type: ["string", "null"]`, `anyOf` at the root, `additionalProperties`,
//! integer formats like `uint32`. Providers accept different subsets, so each
//! schema is rewritten for the provider before it is sent; every change is
//! logged at `debug` with the tool's name, and a schema that cannot be made
//! acceptable is an error naming the tool.

use crate::model::ToolDefinition;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Which JSON Schema subset a provider accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum SchemaProfile {
    /// OpenAI Chat Completions and most compatible servers (vLLM, llama.cpp,
    /// Ollama): `$ref`s are inlined, the root must be one object.
    #[default]
    OpenAi,
    /// Anthropic Messages: `$ref`s are inlined, the root must be one object
    /// (no `anyOf`/`oneOf`/`allOf` at the top level).
    Anthropic,
    /// The strict common subset, for routers that forward to many vendors
    /// (OpenRouter → Gemini and others): additionally no `type` arrays (they
    /// become `nullable`), no `additionalProperties`, no `const`, no
    /// non-standard `format`s, and no recursive schemas.
    Portable,
}

/// A schema that cannot be sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SchemaError(pub String);

/// Keywords whose value is a map of name → schema.
const SCHEMA_MAPS: &[&str] = &["properties", "patternProperties", "dependentSchemas"];
/// Keywords whose value is a schema (or, for `items`, possibly an array of them).
const SCHEMA_VALUES: &[&str] = &[
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "additionalItems",
];
/// Keywords whose value is an array of schemas.
const SCHEMA_ARRAYS: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems"];
/// `format`s the portable profile keeps.
const PORTABLE_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "email",
    "uri",
    "uuid",
    "int32",
    "int64",
    "float",
    "double",
    "enum",
];

/// Rewrites `schema` for `profile`, returning the new schema and what changed.
pub(crate) fn normalise(
    schema: &Value,
    profile: SchemaProfile,
) -> Result<(Value, Vec<String>), SchemaError> {
    let mut changes = Vec::new();
    let Some(root) = schema.as_object() else {
        return Err(SchemaError("the schema is not a JSON object".into()));
    };
    let defs = collect_defs(root);
    let mut root = root.clone();
    for key in ["$schema", "$id"] {
        if root.remove(key).is_some() {
            changes.push(format!("removed `{key}`"));
        }
    }
    let had_defs = root.remove("$defs").is_some() | root.remove("definitions").is_some();

    let mut value = Value::Object(root);
    match inline_refs(&value, &defs, &mut Vec::new(), "", &mut changes) {
        Ok(inlined) => {
            value = inlined;
            if had_defs {
                changes.push("removed `$defs` after inlining".into());
            }
        }
        Err(Inline::Recursive(name)) if profile != SchemaProfile::Portable => {
            // OpenAI and Anthropic resolve recursive `$ref`s themselves.
            changes.push(format!("kept `$ref`s: `{name}` is recursive"));
            value = schema.clone();
            if let Some(obj) = value.as_object_mut() {
                obj.remove("$schema");
                obj.remove("$id");
            }
        }
        Err(Inline::Recursive(name)) => {
            return Err(SchemaError(format!(
                "`$ref` to `{name}` is recursive and cannot be inlined for this provider; flatten the type"
            )));
        }
        Err(Inline::Unresolvable(r)) => {
            return Err(SchemaError(format!(
                "`$ref` `{r}` does not point into the schema's `$defs`"
            )));
        }
    }

    let Value::Object(mut root) = value else {
        return Err(SchemaError("the schema is not a JSON object".into()));
    };
    flatten_root_combinators(&mut root, &mut changes)?;
    match root.get("type") {
        Some(Value::String(t)) if t == "object" => {}
        None => {
            root.insert("type".into(), json!("object"));
            changes.push("added `type: object` at the root".into());
        }
        Some(other) => {
            return Err(SchemaError(format!(
                "the root must be `type: object`, found `type: {other}`"
            )));
        }
    }
    if !root.contains_key("properties") {
        root.insert("properties".into(), json!({}));
        changes.push("added empty `properties` at the root".into());
    }
    let mut value = Value::Object(root);
    if profile == SchemaProfile::Portable {
        portable(&mut value, "", &mut changes);
    }
    Ok((value, changes))
}

fn collect_defs(root: &Map<String, Value>) -> HashMap<String, Value> {
    let mut defs = HashMap::new();
    for (prefix, key) in [("#/$defs/", "$defs"), ("#/definitions/", "definitions")] {
        if let Some(Value::Object(map)) = root.get(key) {
            for (name, schema) in map {
                defs.insert(format!("{prefix}{}", escape_pointer(name)), schema.clone());
            }
        }
    }
    defs
}

fn escape_pointer(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

enum Inline {
    Recursive(String),
    Unresolvable(String),
}

fn inline_refs(
    node: &Value,
    defs: &HashMap<String, Value>,
    stack: &mut Vec<String>,
    path: &str,
    changes: &mut Vec<String>,
) -> Result<Value, Inline> {
    let Value::Object(obj) = node else {
        return Ok(node.clone());
    };
    if let Some(Value::String(r)) = obj.get("$ref") {
        if stack.contains(r) || r == "#" {
            return Err(Inline::Recursive(
                r.rsplit('/').next().unwrap_or(r).to_owned(),
            ));
        }
        let target = defs.get(r).ok_or_else(|| Inline::Unresolvable(r.clone()))?;
        stack.push(r.clone());
        let resolved = inline_refs(target, defs, stack, path, changes)?;
        stack.pop();
        changes.push(format!("inlined `{r}` at `{}`", display_path(path)));
        let mut merged = match resolved {
            Value::Object(m) => m,
            other => return Ok(other),
        };
        // Keywords beside the `$ref` (a description, a default) refine it.
        for (k, v) in obj {
            if k != "$ref" {
                merged.insert(k.clone(), inline_refs(v, defs, stack, path, changes)?);
            }
        }
        return Ok(Value::Object(merged));
    }
    let mut out = Map::with_capacity(obj.len());
    for (key, value) in obj {
        let child = format!("{path}/{key}");
        let new = if SCHEMA_MAPS.contains(&key.as_str()) {
            match value {
                Value::Object(props) => {
                    let mut m = Map::with_capacity(props.len());
                    for (name, s) in props {
                        m.insert(
                            name.clone(),
                            inline_refs(s, defs, stack, &format!("{child}/{name}"), changes)?,
                        );
                    }
                    Value::Object(m)
                }
                other => other.clone(),
            }
        } else if SCHEMA_ARRAYS.contains(&key.as_str()) || (key == "items" && value.is_array()) {
            match value {
                Value::Array(items) => Value::Array(
                    items
                        .iter()
                        .enumerate()
                        .map(|(i, s)| inline_refs(s, defs, stack, &format!("{child}/{i}"), changes))
                        .collect::<Result<_, _>>()?,
                ),
                other => other.clone(),
            }
        } else if SCHEMA_VALUES.contains(&key.as_str()) {
            inline_refs(value, defs, stack, &child, changes)?
        } else {
            value.clone()
        };
        out.insert(key.clone(), new);
    }
    Ok(Value::Object(out))
}

fn display_path(path: &str) -> &str {
    if path.is_empty() { "/" } else { path }
}

/// A root `anyOf`/`oneOf` of object variants becomes one object whose
/// properties are the union and whose `required` is what every variant
/// requires; a root `allOf` of objects is merged.
fn flatten_root_combinators(
    root: &mut Map<String, Value>,
    changes: &mut Vec<String>,
) -> Result<(), SchemaError> {
    for key in ["anyOf", "oneOf", "allOf"] {
        let Some(variants) = root.remove(key) else {
            continue;
        };
        let Value::Array(variants) = variants else {
            return Err(SchemaError(format!("root `{key}` is not an array")));
        };
        let mut properties = match root.remove("properties") {
            Some(Value::Object(p)) => p,
            _ => Map::new(),
        };
        let mut required: Option<Vec<Value>> = root.remove("required").and_then(|r| match r {
            Value::Array(a) => Some(a),
            _ => None,
        });
        let base_required = required.clone().unwrap_or_default();
        let mut shared: Option<Vec<Value>> = None;
        for (i, variant) in variants.iter().enumerate() {
            let Some(v) = variant.as_object() else {
                return Err(SchemaError(format!(
                    "root `{key}` variant {i} is not a schema object"
                )));
            };
            let is_object = match v.get("type") {
                Some(Value::String(t)) => t == "object",
                None => v.contains_key("properties"),
                _ => false,
            };
            if !is_object {
                return Err(SchemaError(format!(
                    "root `{key}` variant {i} is not an object schema; the provider needs one object at the root"
                )));
            }
            if let Some(Value::Object(p)) = v.get("properties") {
                for (name, s) in p {
                    properties.entry(name.clone()).or_insert_with(|| s.clone());
                }
            }
            let req: Vec<Value> = match v.get("required") {
                Some(Value::Array(a)) => a.clone(),
                _ => Vec::new(),
            };
            if key == "allOf" {
                let all = required.get_or_insert_with(Vec::new);
                for r in req {
                    if !all.contains(&r) {
                        all.push(r);
                    }
                }
            } else {
                shared = Some(match shared {
                    None => req,
                    Some(s) => s.into_iter().filter(|r| req.contains(r)).collect(),
                });
            }
        }
        if key != "allOf" {
            let mut all = base_required;
            for r in shared.unwrap_or_default() {
                if !all.contains(&r) {
                    all.push(r);
                }
            }
            required = Some(all);
        }
        root.insert("type".into(), json!("object"));
        root.insert("properties".into(), Value::Object(properties));
        if let Some(r) = required.filter(|r| !r.is_empty()) {
            root.insert("required".into(), Value::Array(r));
        }
        changes.push(format!(
            "merged the root `{key}` of {} object variants into one object",
            variants.len()
        ));
    }
    Ok(())
}

/// The strict subset: no type arrays, no `additionalProperties`, no `const`,
/// only standard `format`s, null variants of `anyOf` become `nullable`.
fn portable(node: &mut Value, path: &str, changes: &mut Vec<String>) {
    let Value::Object(obj) = node else { return };
    if let Some(Value::Array(types)) = obj.get("type").cloned() {
        let non_null: Vec<Value> = types
            .iter()
            .filter(|t| t.as_str() != Some("null"))
            .cloned()
            .collect();
        let nullable = non_null.len() != types.len();
        match non_null.as_slice() {
            [one] => {
                obj.insert("type".into(), one.clone());
            }
            [] => {
                obj.insert("type".into(), json!("null"));
            }
            many => {
                obj.remove("type");
                let variants = many.iter().map(|t| json!({ "type": t })).collect();
                obj.insert("anyOf".into(), Value::Array(variants));
            }
        }
        if nullable {
            obj.insert("nullable".into(), json!(true));
        }
        changes.push(format!(
            "rewrote the `type` array at `{}`",
            display_path(path)
        ));
    }
    for key in ["anyOf", "oneOf"] {
        let Some(Value::Array(variants)) = obj.get(key) else {
            continue;
        };
        let is_null = |v: &Value| v.get("type").and_then(Value::as_str) == Some("null");
        if !variants.iter().any(is_null) {
            continue;
        }
        let rest: Vec<Value> = variants.iter().filter(|v| !is_null(v)).cloned().collect();
        obj.remove(key);
        if let [Value::Object(only)] = rest.as_slice() {
            for (k, v) in only {
                obj.entry(k.clone()).or_insert_with(|| v.clone());
            }
        } else {
            obj.insert(key.into(), Value::Array(rest));
        }
        obj.insert("nullable".into(), json!(true));
        changes.push(format!(
            "turned the null variant of `{key}` at `{}` into `nullable`",
            display_path(path)
        ));
    }
    for key in [
        "additionalProperties",
        "unevaluatedProperties",
        "$comment",
        "$id",
        "$schema",
    ] {
        if obj.remove(key).is_some() {
            changes.push(format!("removed `{key}` at `{}`", display_path(path)));
        }
    }
    if let Some(c) = obj.remove("const") {
        obj.insert("enum".into(), Value::Array(vec![c]));
        changes.push(format!(
            "turned `const` into `enum` at `{}`",
            display_path(path)
        ));
    }
    if let Some(Value::String(f)) = obj.get("format")
        && !PORTABLE_FORMATS.contains(&f.as_str())
    {
        changes.push(format!("removed `format: {f}` at `{}`", display_path(path)));
        obj.remove("format");
    }
    for (key, value) in obj.iter_mut() {
        let child = format!("{path}/{key}");
        if SCHEMA_MAPS.contains(&key.as_str()) {
            if let Value::Object(props) = value {
                for (name, s) in props.iter_mut() {
                    portable(s, &format!("{child}/{name}"), changes);
                }
            }
        } else if SCHEMA_ARRAYS.contains(&key.as_str()) || SCHEMA_VALUES.contains(&key.as_str()) {
            match value {
                Value::Array(items) => {
                    for (i, s) in items.iter_mut().enumerate() {
                        portable(s, &format!("{child}/{i}"), changes);
                    }
                }
                other => portable(other, &child, changes),
            }
        }
    }
}

/// Normalised schemas by tool name, so each schema is rewritten (and its
/// changes logged) once, not on every turn.
#[derive(Debug, Default)]
pub(crate) struct SchemaCache {
    profile: SchemaProfile,
    entries: Mutex<HashMap<String, (Value, Value)>>,
    /// The last tool list serialised, by the definitions it was built from.
    serialized: Mutex<Option<SerializedTools>>,
}

/// Builds a provider's `tools` array from the request's definitions, their
/// normalised schemas (in order) and whether the last tool carries the
/// provider's prompt-cache breakpoint.
pub(crate) type ToolList<'a> = &'a dyn Fn(&[ToolDefinition], Vec<Value>, bool) -> Value;

/// A tool list as sent, the definitions it was built from, and whether it
/// ends with the provider's cache breakpoint.
type SerializedTools = (Arc<[ToolDefinition]>, bool, Arc<str>);

impl SchemaCache {
    pub(crate) fn new(profile: SchemaProfile) -> Self {
        Self {
            profile,
            entries: Mutex::default(),
            serialized: Mutex::default(),
        }
    }

    /// The provider's `tools` array for `tools`, serialised: `render` builds
    /// it from the definitions and their normalised schemas. Reused while
    /// requests carry the same `Arc` of definitions — an agent's turns and
    /// runs with an unchanged tool set — so a turn's cost does not grow with
    /// the number of tools beyond copying the bytes. `cache_breakpoint` is
    /// passed to `render` (a provider that marks where its prompt cache
    /// ends puts the mark on the last tool) and kept with the memo. `None`
    /// without tools; the first schema that cannot be made acceptable is the
    /// error.
    pub(crate) fn tools_json(
        &self,
        provider: &str,
        tools: &Arc<[ToolDefinition]>,
        cache_breakpoint: bool,
        render: ToolList<'_>,
    ) -> Result<Option<Arc<str>>, crate::model::ModelError> {
        if tools.is_empty() {
            return Ok(None);
        }
        if let Ok(last) = self.serialized.lock()
            && let Some((built_from, marked, json)) = last.as_ref()
            && Arc::ptr_eq(built_from, tools)
            && *marked == cache_breakpoint
        {
            return Ok(Some(json.clone()));
        }
        let schemas = tools
            .iter()
            .map(|t| self.get(provider, &t.name, &t.input_schema))
            .collect::<Result<Vec<_>, _>>()?;
        let json: Arc<str> = render(tools, schemas, cache_breakpoint).to_string().into();
        if let Ok(mut last) = self.serialized.lock() {
            *last = Some((tools.clone(), cache_breakpoint, json.clone()));
        }
        Ok(Some(json))
    }

    /// The schema to send for `tool`.
    pub(crate) fn get(
        &self,
        provider: &str,
        tool: &str,
        schema: &Value,
    ) -> Result<Value, crate::model::ModelError> {
        if let Ok(entries) = self.entries.lock()
            && let Some((original, normalised)) = entries.get(tool)
            && original == schema
        {
            return Ok(normalised.clone());
        }
        let (normalised, changes) = normalise(schema, self.profile).map_err(|e| {
            crate::model::ModelError::InvalidToolSchema {
                provider: provider.to_owned(),
                tool: tool.to_owned(),
                message: e.0,
            }
        })?;
        if !changes.is_empty() {
            tracing::debug!(
                provider,
                tool,
                ?changes,
                "normalised the tool's input schema"
            );
        }
        if let Ok(mut entries) = self.entries.lock() {
            entries.insert(tool.to_owned(), (schema.clone(), normalised.clone()));
        }
        Ok(normalised)
    }
}
