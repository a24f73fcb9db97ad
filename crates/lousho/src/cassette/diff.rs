//! What changed between a recorded request and the one a replay made, as
//! lines a person reads: `system: "…" → "…"`,
//! `tools["search"].description: "…" → "…"`, `tools: added "x"`,
//! `messages[0].parts[0].text: "…" → "…"`.

use serde_json::Value;

/// The most differences listed (the rest are counted).
const MAX_LINES: usize = 12;
/// The most characters of a value shown.
const MAX_SHOWN: usize = 160;

/// The differences from `recorded` to `now`, one per line; empty when equal.
pub(crate) fn diff(recorded: &Value, now: &Value) -> String {
    let mut lines = Vec::new();
    walk("", recorded, now, &mut lines);
    let more = lines.len().saturating_sub(MAX_LINES);
    lines.truncate(MAX_LINES);
    if more > 0 {
        lines.push(format!("… and {more} more difference(s)"));
    }
    lines
        .iter()
        .map(|l| format!("  {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn walk(path: &str, recorded: &Value, now: &Value, out: &mut Vec<String>) {
    if recorded == now {
        return;
    }
    match (recorded, now) {
        (Value::Object(a), Value::Object(b)) => {
            for (key, va) in a {
                let child = join(path, key);
                match b.get(key) {
                    Some(vb) => walk(&child, va, vb, out),
                    None => out.push(format!("{child}: removed (was {})", show(va))),
                }
            }
            for (key, vb) in b {
                if !a.contains_key(key) {
                    out.push(format!("{}: added {}", join(path, key), show(vb)));
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if named(a) && named(b) => by_name(path, a, b, out),
        (Value::Array(a), Value::Array(b)) => {
            for (i, (va, vb)) in a.iter().zip(b).enumerate() {
                walk(&format!("{path}[{i}]"), va, vb, out);
            }
            if a.len() != b.len() {
                let label = if path.is_empty() { "the list" } else { path };
                out.push(format!("{label}: {} recorded, {} now", a.len(), b.len()));
                for (i, v) in b.iter().enumerate().skip(a.len()) {
                    out.push(format!("{path}[{i}]: new {}", show(v)));
                }
                for (i, v) in a.iter().enumerate().skip(b.len()) {
                    out.push(format!("{path}[{i}]: gone (was {})", show(v)));
                }
            }
        }
        _ => out.push(format!(
            "{}: {} → {}",
            if path.is_empty() { "value" } else { path },
            show(recorded),
            show(now)
        )),
    }
}

/// Arrays of objects with a `name` (tool lists) are compared by name.
fn named(items: &[Value]) -> bool {
    !items.is_empty()
        && items
            .iter()
            .all(|v| v.get("name").is_some_and(Value::is_string))
}

fn by_name(path: &str, a: &[Value], b: &[Value], out: &mut Vec<String>) {
    let name = |v: &Value| {
        v.get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let names_a: Vec<String> = a.iter().map(name).collect();
    let names_b: Vec<String> = b.iter().map(name).collect();
    let added: Vec<&String> = names_b.iter().filter(|n| !names_a.contains(n)).collect();
    let removed: Vec<&String> = names_a.iter().filter(|n| !names_b.contains(n)).collect();
    let label = if path.is_empty() { "the list" } else { path };
    for n in &added {
        out.push(format!("{label}: added {n:?}"));
    }
    for n in &removed {
        out.push(format!("{label}: removed {n:?}"));
    }
    for (va, na) in a.iter().zip(&names_a) {
        if let Some(vb) = b.iter().find(|v| name(v) == *na) {
            walk(&format!("{path}[{na:?}]"), va, vb, out);
        }
    }
    let common_a: Vec<&String> = names_a.iter().filter(|n| names_b.contains(n)).collect();
    let common_b: Vec<&String> = names_b.iter().filter(|n| names_a.contains(n)).collect();
    if common_a != common_b {
        out.push(format!("{label}: order changed"));
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

/// A value as JSON, cut to [`MAX_SHOWN`] characters.
fn show(v: &Value) -> String {
    let text = v.to_string();
    if text.chars().count() <= MAX_SHOWN {
        return text;
    }
    let cut: String = text.chars().take(MAX_SHOWN).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::diff;
    use serde_json::json;

    #[test]
    fn names_what_changed() {
        let recorded = json!({
            "system": "Be terse.",
            "tools": [{"name": "a", "description": "A"}, {"name": "b", "description": "B"}],
            "messages": [{"role": "user", "parts": [{"type": "text", "text": "hi"}]}],
        });
        let now = json!({
            "system": "Be terse.",
            "tools": [{"name": "a", "description": "A!"}, {"name": "c", "description": "C"}],
            "messages": [{"role": "user", "parts": [{"type": "text", "text": "hello"}]}],
        });
        let d = diff(&recorded, &now);
        assert!(d.contains(r#"tools: added "c""#), "{d}");
        assert!(d.contains(r#"tools: removed "b""#), "{d}");
        assert!(d.contains(r#"tools["a"].description: "A" → "A!""#), "{d}");
        assert!(
            d.contains(r#"messages[0].parts[0].text: "hi" → "hello""#),
            "{d}"
        );
        assert_eq!(diff(&recorded, &recorded), "");
    }
}
