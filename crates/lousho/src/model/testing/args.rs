use serde_json::{Map, Value, json};

const MAX_DEPTH: usize = 16;

/// Arguments that satisfy a JSON Schema: every property of objects, the first
/// `enum`/`const` value, else the first of `examples`, else `default`, numbers inside their bounds (exclusive ones too, and
/// `multipleOf`), strings of a valid length and common `format`s, arrays with
/// `minItems` items. `$ref`s into `$defs`/`definitions` are followed.
///
/// [`TestModel`](crate::model::testing::TestModel) calls tools with these.
pub fn arguments_for_schema(schema: &Value) -> Value {
    generate(schema, schema, 0)
}

fn generate(schema: &Value, root: &Value, depth: usize) -> Value {
    if depth > MAX_DEPTH {
        return Value::Null;
    }
    let Some(obj) = schema.as_object() else {
        // `true` or anything else: any value is fine.
        return json!("test");
    };
    if let Some(r) = obj.get("$ref").and_then(Value::as_str) {
        let pointer = r.trim_start_matches('#');
        return match root.pointer(pointer) {
            Some(target) => generate(target, root, depth + 1),
            None => Value::Null,
        };
    }
    if let Some(c) = obj.get("const") {
        return c.clone();
    }
    if let Some(first) = obj
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|a| a.first())
    {
        return first.clone();
    }
    if let Some(example) = obj
        .get("examples")
        .and_then(Value::as_array)
        .and_then(|a| a.first())
    {
        return example.clone();
    }
    if let Some(d) = obj.get("default") {
        return d.clone();
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(variants) = obj.get(key).and_then(Value::as_array) {
            let pick = variants
                .iter()
                .find(|v| v.get("type").and_then(Value::as_str) != Some("null"))
                .or_else(|| variants.first());
            if let Some(v) = pick {
                return generate(v, root, depth + 1);
            }
        }
    }
    if let Some(parts) = obj.get("allOf").and_then(Value::as_array) {
        let mut merged = Map::new();
        for part in parts {
            if let Value::Object(m) = generate(part, root, depth + 1) {
                merged.extend(m);
            }
        }
        return Value::Object(merged);
    }
    let ty = match obj.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null"),
        _ if obj.contains_key("properties") => "object",
        _ if obj.contains_key("items") => "array",
        _ => "string",
    };
    match ty {
        "object" => object(obj, root, depth),
        "array" => array(obj, root, depth),
        "string" => string(obj),
        "integer" => integer(obj),
        "number" => number(obj),
        "boolean" => Value::Bool(true),
        _ => Value::Null,
    }
}

fn object(obj: &Map<String, Value>, root: &Value, depth: usize) -> Value {
    let mut out = Map::new();
    if let Some(props) = obj.get("properties").and_then(Value::as_object) {
        for (name, schema) in props {
            out.insert(name.clone(), generate(schema, root, depth + 1));
        }
    }
    Value::Object(out)
}

fn array(obj: &Map<String, Value>, root: &Value, depth: usize) -> Value {
    let min = obj.get("minItems").and_then(Value::as_u64).unwrap_or(1);
    let max = obj
        .get("maxItems")
        .and_then(Value::as_u64)
        .unwrap_or(u64::MAX);
    let mut out = Vec::new();
    if let Some(prefix) = obj.get("prefixItems").and_then(Value::as_array) {
        for schema in prefix {
            out.push(generate(schema, root, depth + 1));
        }
    }
    let count = min.max(1).min(max).min(8) as usize;
    let items = obj
        .get("items")
        .filter(|i| !matches!(i, Value::Bool(false)));
    while out.len() < count {
        match items {
            Some(schema) => {
                let mut v = generate(schema, root, depth + 1);
                // uniqueItems: vary strings and numbers by index.
                if !out.is_empty() {
                    v = vary(v, out.len());
                }
                out.push(v);
            }
            None if obj.contains_key("prefixItems") => break,
            None => out.push(json!("test")),
        }
    }
    Value::Array(out)
}

fn vary(v: Value, i: usize) -> Value {
    match v {
        Value::String(s) => Value::String(format!("{s}{i}")),
        Value::Number(n) if n.is_i64() => json!(n.as_i64().unwrap_or(0) + i as i64),
        other => other,
    }
}

fn string(obj: &Map<String, Value>) -> Value {
    let base = match obj.get("format").and_then(Value::as_str) {
        Some("date-time") => "2026-01-01T00:00:00Z",
        Some("date") => "2026-01-01",
        Some("time") => "12:00:00Z",
        Some("email") => "test@example.com",
        Some("uri" | "url" | "iri") => "https://example.com/",
        Some("uuid") => "00000000-0000-4000-8000-000000000000",
        Some("ipv4") => "127.0.0.1",
        Some("ipv6") => "::1",
        Some("hostname") => "example.com",
        _ => "test",
    };
    let mut s = base.to_owned();
    let min = obj.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
    while s.chars().count() < min {
        s.push('x');
    }
    if let Some(max) = obj.get("maxLength").and_then(Value::as_u64) {
        s = s.chars().take(max as usize).collect();
    }
    Value::String(s)
}

struct Bounds {
    lo: Option<f64>,
    lo_exclusive: bool,
    hi: Option<f64>,
    hi_exclusive: bool,
}

fn bounds(obj: &Map<String, Value>) -> Bounds {
    let num = |k: &str| obj.get(k).and_then(Value::as_f64);
    // Draft 4 used booleans for exclusiveMinimum/Maximum.
    let bool_flag = |k: &str| obj.get(k).and_then(Value::as_bool).unwrap_or(false);
    let (lo, lo_exclusive) = match (num("minimum"), num("exclusiveMinimum")) {
        (Some(m), Some(e)) if e >= m => (Some(e), true),
        (Some(m), _) => (Some(m), bool_flag("exclusiveMinimum")),
        (None, Some(e)) => (Some(e), true),
        (None, None) => (None, false),
    };
    let (hi, hi_exclusive) = match (num("maximum"), num("exclusiveMaximum")) {
        (Some(m), Some(e)) if e <= m => (Some(e), true),
        (Some(m), _) => (Some(m), bool_flag("exclusiveMaximum")),
        (None, Some(e)) => (Some(e), true),
        (None, None) => (None, false),
    };
    Bounds {
        lo,
        lo_exclusive,
        hi,
        hi_exclusive,
    }
}

fn integer(obj: &Map<String, Value>) -> Value {
    let b = bounds(obj);
    let lo = b.lo.map(|l| {
        if b.lo_exclusive {
            l.floor() as i64 + 1
        } else {
            l.ceil() as i64
        }
    });
    let hi = b.hi.map(|h| {
        if b.hi_exclusive {
            h.ceil() as i64 - 1
        } else {
            h.floor() as i64
        }
    });
    let mut v: i64 = match (lo, hi) {
        (Some(l), _) => l,
        (None, Some(h)) => h.min(1),
        (None, None) => 1,
    };
    if let Some(m) = obj
        .get("multipleOf")
        .and_then(Value::as_i64)
        .filter(|m| *m > 0)
    {
        let r = v.rem_euclid(m);
        if r != 0 {
            v += m - r;
        }
    }
    json!(v)
}

fn number(obj: &Map<String, Value>) -> Value {
    let b = bounds(obj);
    let v = match (b.lo, b.hi) {
        (Some(l), Some(h)) => {
            if b.lo_exclusive || b.hi_exclusive {
                (l + h) / 2.0
            } else {
                l
            }
        }
        (Some(l), None) => {
            if b.lo_exclusive {
                l + 1.0
            } else {
                l
            }
        }
        (None, Some(h)) => {
            if b.hi_exclusive {
                h - 1.0
            } else {
                h.min(1.5)
            }
        }
        (None, None) => 1.5,
    };
    if let Some(m) = obj
        .get("multipleOf")
        .and_then(Value::as_f64)
        .filter(|m| *m > 0.0)
    {
        let k = (v / m).ceil();
        return json!(k * m);
    }
    json!(v)
}
