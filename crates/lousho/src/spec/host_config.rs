//! The MCP configs users already have, read as they are and translated to
//! lousho's entry format (`${VAR}` references kept, not yet expanded):
//!
//! - Claude Code's `.mcp.json`, Cursor's `.cursor/mcp.json` and Claude
//!   Desktop's `claude_desktop_config.json`: `{"mcpServers": {...}}` (the
//!   file's other top-level keys are ignored);
//! - VS Code's `.vscode/mcp.json`: `{"servers": {...}, "inputs": [...]}`;
//! - Codex's `config.toml`: `[mcp_servers.<name>]` tables.
//!
//! The hosts' own variables become lousho's: `${env:X}` → `${X}`,
//! `${userHome}` → `${HOME}`, `${input:api-key}` → `${API_KEY}` (VS Code asks
//! for an input; lousho reads the variable named after its id),
//! `${workspaceFolder}` → the folder holding `.vscode` / `.cursor` (else the
//! file's folder).

use super::locate::{line_of_key, line_of_offset};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Which host's format a file is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HostFormat {
    /// `{"mcpServers": {...}}` (Claude Code, Claude Desktop, Cursor) or a bare map.
    Claude,
    /// `{"servers": {...}, "inputs": [...]}`.
    VsCode,
    /// `[mcp_servers.<name>]` in TOML.
    Codex,
}

/// A translation failure: the line in the host file, the key path, what.
#[derive(Debug)]
pub(crate) struct HostError {
    pub line: Option<usize>,
    pub key: String,
    pub message: String,
}

/// The servers of a host file, in lousho's entry format, by name; and the
/// key that held them (`mcpServers`, `servers`, `mcp_servers` or none), for
/// locating later errors.
pub(crate) struct HostServers {
    pub format: HostFormat,
    pub container: Option<&'static str>,
    pub servers: Map<String, Value>,
}

/// Reads `text` (the file at `path`) in whichever host format it is.
pub(crate) fn translate(text: &str, path: &Path) -> Result<HostServers, HostError> {
    let is_toml = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("toml"));
    if is_toml {
        return codex(text);
    }
    let value: Value = serde_json::from_str(text).map_err(|e| HostError {
        line: Some(e.line()),
        key: String::new(),
        message: format!("not valid JSON: {e}"),
    })?;
    let Value::Object(mut top) = value else {
        return Err(HostError {
            line: Some(1),
            key: String::new(),
            message:
                "expected a JSON object with `mcpServers` (Claude, Cursor) or `servers` (VS Code)"
                    .into(),
        });
    };
    let folder = workspace_folder(path);
    let (format, container, servers) = if let Some(servers) = top.remove("mcpServers") {
        (HostFormat::Claude, Some("mcpServers"), servers)
    } else if let Some(servers) = top.remove("servers") {
        (HostFormat::VsCode, Some("servers"), servers)
    } else {
        (HostFormat::Claude, None, Value::Object(top))
    };
    let Value::Object(servers) = servers else {
        let key = container.unwrap_or_default();
        return Err(HostError {
            line: line_of_key(text, key),
            key: key.to_owned(),
            message: "expected a map of servers by name".into(),
        });
    };
    let mut out = Map::new();
    for (name, entry) in servers {
        let key = match container {
            Some(c) => format!("{c}.{name}"),
            None => name.clone(),
        };
        let entry = match (format, entry) {
            (HostFormat::VsCode, Value::Object(entry)) => vscode_entry(entry, text, &key)?,
            (_, entry) => entry,
        };
        out.insert(name, rewrite_values(entry, &folder));
    }
    Ok(HostServers {
        format,
        container,
        servers: out,
    })
}

/// A VS Code entry: `sse` is refused, `envFile` too (lousho does not read
/// it), `dev` and `gallery` (VS Code's own) are dropped.
fn vscode_entry(mut entry: Map<String, Value>, text: &str, key: &str) -> Result<Value, HostError> {
    let fail = |field: &str, message: &str| {
        let key = format!("{key}.{field}");
        HostError {
            line: line_of_key(text, &key),
            key,
            message: message.to_owned(),
        }
    };
    if entry.get("type").and_then(Value::as_str) == Some("sse") {
        return Err(fail(
            "type",
            "`sse` (the old HTTP+SSE transport) is not supported; use the server's Streamable HTTP endpoint with `\"type\": \"http\"`",
        ));
    }
    if entry.contains_key("envFile") {
        return Err(fail(
            "envFile",
            "`envFile` is not read by lousho; list the variables under `env` instead",
        ));
    }
    for own in ["dev", "gallery", "version"] {
        entry.remove(own);
    }
    Ok(Value::Object(entry))
}

/// The folder `${workspaceFolder}` names: the one holding `.vscode` or
/// `.cursor` when the file is in one, else the file's own folder.
pub(crate) fn workspace_folder(path: &Path) -> PathBuf {
    let dir = path.parent().unwrap_or(Path::new("."));
    let in_host_dir = dir
        .file_name()
        .is_some_and(|n| n == ".vscode" || n == ".cursor");
    let folder = if in_host_dir {
        dir.parent().unwrap_or(Path::new("."))
    } else {
        dir
    };
    std::path::absolute(folder).unwrap_or_else(|_| folder.to_path_buf())
}

fn rewrite_values(value: Value, folder: &Path) -> Value {
    match value {
        Value::String(s) => Value::String(rewrite(&s, folder)),
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .map(|v| rewrite_values(v, folder))
                .collect(),
        ),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (k, rewrite_values(v, folder)))
                .collect(),
        ),
        other => other,
    }
}

/// The hosts' `${…}` forms in lousho's syntax; anything else is kept.
pub(crate) fn rewrite(text: &str, folder: &Path) -> String {
    if !text.contains("${") {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("${") {
        out.push_str(&rest[..i]);
        let body_start = &rest[i + 2..];
        let Some(end) = body_start.find('}') else {
            out.push_str(&rest[i..]);
            return out;
        };
        let body = &body_start[..end];
        let folder_text = || folder.to_string_lossy().replace("${", "$${");
        match body.split_once(':') {
            Some(("env", name)) => out.push_str(&format!("${{{name}}}")),
            Some(("input", id)) => out.push_str(&format!("${{{}}}", input_variable(id))),
            _ => match body {
                "workspaceFolder" => out.push_str(&folder_text()),
                "workspaceFolderBasename" => out.push_str(
                    &folder
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                ),
                "userHome" => out.push_str("${HOME}"),
                "pathSeparator" | "/" => out.push('/'),
                _ => out.push_str(&rest[i..i + 2 + end + 1]),
            },
        }
        rest = &body_start[end + 1..];
    }
    out.push_str(rest);
    out
}

/// The environment variable a VS Code input is read from: its id upper-cased,
/// other characters as `_` (`github-token` → `GITHUB_TOKEN`).
pub(crate) fn input_variable(id: &str) -> String {
    let name: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    if name.starts_with(|c: char| c.is_ascii_digit()) || name.is_empty() {
        format!("_{name}")
    } else {
        name
    }
}

/// Codex's `config.toml`: the `[mcp_servers.*]` tables (the rest of the
/// file is Codex's own and ignored).
#[derive(Deserialize)]
struct CodexFile {
    #[serde(default)]
    mcp_servers: BTreeMap<String, toml::Spanned<CodexEntry>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CodexEntry {
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    /// Variables Codex passes through; lousho's children inherit the environment anyway.
    #[serde(default)]
    #[allow(dead_code)]
    env_vars: Vec<String>,
    cwd: Option<String>,
    url: Option<String>,
    bearer_token_env_var: Option<String>,
    #[serde(default)]
    http_headers: BTreeMap<String, String>,
    #[serde(default)]
    env_http_headers: BTreeMap<String, String>,
    startup_timeout_sec: Option<f64>,
    startup_timeout_ms: Option<u64>,
    tool_timeout_sec: Option<f64>,
    enabled: Option<bool>,
    enabled_tools: Option<Vec<String>>,
    disabled_tools: Option<Vec<String>>,
}

fn codex(text: &str) -> Result<HostServers, HostError> {
    let file: CodexFile = toml::from_str(text).map_err(|e| HostError {
        line: e.span().map(|s| line_of_offset(text, s.start)),
        key: String::new(),
        message: e.message().trim_end().to_owned(),
    })?;
    // A literal `${` in Codex's values (it expands nothing) stays literal.
    let lit = |s: &str| s.replace("${", "$${");
    let mut servers = Map::new();
    for (name, entry) in file.mcp_servers {
        let entry = entry.into_inner();
        if entry.enabled == Some(false) {
            continue;
        }
        let mut out = Map::new();
        if let Some(command) = &entry.command {
            out.insert("command".into(), json!(lit(command)));
            if !entry.args.is_empty() {
                out.insert(
                    "args".into(),
                    json!(entry.args.iter().map(|a| lit(a)).collect::<Vec<_>>()),
                );
            }
            if !entry.env.is_empty() {
                let env: Map<String, Value> = entry
                    .env
                    .iter()
                    .map(|(k, v)| (k.clone(), json!(lit(v))))
                    .collect();
                out.insert("env".into(), Value::Object(env));
            }
            if let Some(cwd) = &entry.cwd {
                out.insert("cwd".into(), json!(lit(cwd)));
            }
        }
        if let Some(url) = &entry.url {
            out.insert("url".into(), json!(lit(url)));
            let mut headers: Map<String, Value> = entry
                .http_headers
                .iter()
                .map(|(k, v)| (k.clone(), json!(lit(v))))
                .collect();
            for (header, var) in &entry.env_http_headers {
                headers.insert(header.clone(), json!(format!("${{{var}}}")));
            }
            if let Some(var) = &entry.bearer_token_env_var {
                headers.insert("Authorization".into(), json!(format!("Bearer ${{{var}}}")));
            }
            if !headers.is_empty() {
                out.insert("headers".into(), Value::Object(headers));
            }
        }
        let ms = |secs: f64| (secs * 1000.0).round() as u64;
        if let Some(t) = entry
            .startup_timeout_ms
            .or(entry.startup_timeout_sec.map(ms))
        {
            out.insert("startupTimeoutMs".into(), json!(t));
        }
        if let Some(t) = entry.tool_timeout_sec.map(ms) {
            out.insert("callTimeoutMs".into(), json!(t));
        }
        if entry.enabled_tools.is_some() || entry.disabled_tools.is_some() {
            let mut tools = Map::new();
            if let Some(allow) = entry.enabled_tools {
                tools.insert("allow".into(), json!(allow));
            }
            if let Some(deny) = entry.disabled_tools {
                tools.insert("deny".into(), json!(deny));
            }
            out.insert("tools".into(), Value::Object(tools));
        }
        servers.insert(name, Value::Object(out));
    }
    Ok(HostServers {
        format: HostFormat::Codex,
        container: Some("mcp_servers"),
        servers,
    })
}

/// The line of an entry's key path (`mcpServers.files.comand`) in the host
/// file: JSON keys are one per line in the files hosts write; a Codex
/// entry is found by its `[mcp_servers.<name>]` header.
pub(crate) fn line_of(text: &str, format: HostFormat, key: &str) -> Option<usize> {
    match format {
        HostFormat::Codex => {
            let name = key.strip_prefix("mcp_servers.")?.split('.').next()?;
            let header = format!("[mcp_servers.{name}]");
            let quoted = format!("[mcp_servers.\"{name}\"]");
            text.lines()
                .position(|l| {
                    let l = l.trim();
                    l == header || l == quoted
                })
                .map(|i| i + 1)
        }
        HostFormat::Claude | HostFormat::VsCode => line_of_key(text, key),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_variables_become_lousho_variables() {
        let folder = Path::new("/work/project");
        assert_eq!(rewrite("${env:TOKEN}", folder), "${TOKEN}");
        assert_eq!(rewrite("${input:github-token}", folder), "${GITHUB_TOKEN}");
        assert_eq!(
            rewrite("${workspaceFolder}/src", folder),
            "/work/project/src"
        );
        assert_eq!(rewrite("${userHome}/.x", folder), "${HOME}/.x");
        assert_eq!(
            rewrite("${PLAIN:-d} $${lit}", folder),
            "${PLAIN:-d} $${lit}"
        );
        assert_eq!(input_variable("1st key"), "_1ST_KEY");
    }
}
