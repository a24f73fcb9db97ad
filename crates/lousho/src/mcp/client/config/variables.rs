//! `${VAR}` and `${VAR:-default}` in an MCP config's string values, from the
//! process environment (the same rules as spec files: the crate's one
//! implementation in `crate::interpolate`).

use super::ConfigError;
use crate::interpolate::interpolate;
use serde_json::Value;

/// Expands `${VAR}` and `${VAR:-default}` in every string value of `value`
/// (keys are left alone) with `lookup`, by the rules of spec files (`$${` is
/// a literal `${`; defaults nest). An unset variable without a default is
/// [`ConfigError::Variable`] naming the value's path
/// (`mcpServers.docs.headers.Authorization`).
///
/// [`parse_mcp_servers`](super::parse_mcp_servers) does this with the process
/// environment; call it yourself to take variables from elsewhere, then
/// [`servers_from_value`](super::servers_from_value).
pub fn expand_variables(
    value: Value,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Value, ConfigError> {
    expand_at(value, lookup, &mut String::new())
}

fn expand_at(
    value: Value,
    lookup: &dyn Fn(&str) -> Option<String>,
    path: &mut String,
) -> Result<Value, ConfigError> {
    Ok(match value {
        Value::String(s) => {
            Value::String(
                interpolate(&s, lookup).map_err(|reason| ConfigError::Variable {
                    path: path.clone(),
                    reason,
                })?,
            )
        }
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .enumerate()
                .map(|(i, item)| {
                    let len = path.len();
                    path.push_str(&format!("[{i}]"));
                    let expanded = expand_at(item, lookup, path);
                    path.truncate(len);
                    expanded
                })
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(key, item)| {
                    let len = path.len();
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(&key);
                    let expanded = expand_at(item, lookup, path);
                    path.truncate(len);
                    Ok((key, expanded?))
                })
                .collect::<Result<_, ConfigError>>()?,
        ),
        other => other,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interpolate::VariableError;
    use serde_json::json;

    fn env(name: &str) -> Option<String> {
        (name == "TOKEN").then(|| "s3cret".to_owned())
    }

    #[test]
    fn expands_string_values_and_names_the_path_of_an_unset_one() {
        let value = json!({"docs": {"headers": {"Authorization": "Bearer ${TOKEN}"}, "args": ["$${x}", 1]}});
        assert_eq!(
            expand_variables(value, &env).unwrap(),
            json!({"docs": {"headers": {"Authorization": "Bearer s3cret"}, "args": ["${x}", 1]}})
        );
        let err = expand_variables(json!({"docs": {"args": ["a", "${NOPE}"]}}), &env).unwrap_err();
        let ConfigError::Variable { path, reason } = &err else {
            panic!("{err:?}")
        };
        assert_eq!(path, "docs.args[1]");
        assert_eq!(*reason, VariableError::Unset("NOPE".into()));
        assert!(err.to_string().contains("`NOPE` is not set"), "{err}");
    }
}
