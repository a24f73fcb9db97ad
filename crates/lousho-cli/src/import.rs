//! `lousho mcp import FILE [--into SPEC]`: another client's MCP servers as
//! spec entries, printed or added to a spec's `mcpServers`.

use crate::cli::ImportArgs;
use crate::exit::Usage;
use anyhow::Context;
use lousho::spec::SpecLoader;
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

/// Runs the command.
pub fn run(args: ImportArgs) -> anyhow::Result<ExitCode> {
    let entries = SpecLoader::new().import_mcp_servers(&args.file)?;
    if entries.is_empty() {
        return Err(anyhow::Error::new(Usage(format!(
            "{}: no MCP servers in it (no `mcpServers`, `servers` or `[mcp_servers.*]` entries)",
            args.file.display()
        ))));
    }
    let Some(spec) = &args.into else {
        let mut out = std::io::stdout().lock();
        out.write_all(block(&entries, "  ", true)?.as_bytes())?;
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    };
    let text =
        std::fs::read_to_string(spec).with_context(|| format!("cannot read {}", spec.display()))?;
    let updated = insert(&text, &entries)
        .map_err(|m| anyhow::Error::new(Usage(format!("{}: {m}", spec.display()))))?;
    // Only a spec that still loads is written (the variables need not be set).
    check(&updated, spec)?;
    std::fs::write(spec, updated).with_context(|| format!("cannot write {}", spec.display()))?;
    let names: Vec<&str> = entries.keys().map(String::as_str).collect();
    #[allow(clippy::print_stderr)]
    {
        eprintln!(
            "added to {} mcpServers: {}",
            spec.display(),
            names.join(", ")
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `name: {…}` lines (JSON flow maps, which are YAML), under `mcpServers:`
/// when `header`.
fn block(entries: &BTreeMap<String, Value>, indent: &str, header: bool) -> anyhow::Result<String> {
    let mut out = String::new();
    if header {
        out.push_str("mcpServers:\n");
    }
    for (name, entry) in entries {
        out.push_str(&format!(
            "{indent}{}: {}\n",
            serde_json::to_string(name)?,
            flow_map(entry)?
        ));
    }
    Ok(out)
}

/// An entry as a one-line map, its keys in the order people write them
/// (`command` before `args`), the rest sorted.
fn flow_map(entry: &Value) -> anyhow::Result<String> {
    const FIRST: [&str; 7] = ["type", "command", "args", "env", "cwd", "url", "headers"];
    let Value::Object(map) = entry else {
        return Ok(serde_json::to_string(entry)?);
    };
    let mut keys: Vec<&String> = map.keys().collect();
    keys.sort_by_key(|k| (FIRST.iter().position(|f| f == k).unwrap_or(FIRST.len()), *k));
    let fields = keys
        .into_iter()
        .map(|k| {
            Ok(format!(
                "{}: {}",
                serde_json::to_string(k)?,
                serde_json::to_string(&map[k])?
            ))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok(format!("{{{}}}", fields.join(", ")))
}

/// The spec's text with the entries added to its block `mcpServers:` (or a
/// new one at the end).
fn insert(text: &str, entries: &BTreeMap<String, Value>) -> Result<String, String> {
    let lines: Vec<&str> = text.lines().collect();
    let Some(start) = lines
        .iter()
        .position(|l| l.starts_with("mcpServers:") || l.starts_with("\"mcpServers\":"))
    else {
        let mut out = text.to_owned();
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&block(entries, "  ", true).map_err(|e| e.to_string())?);
        return Ok(out);
    };
    let rest = lines[start]
        .split_once(':')
        .map(|(_, r)| r.trim())
        .unwrap_or_default();
    if !(rest.is_empty() || rest.starts_with('#')) {
        return Err(format!(
            "its `mcpServers: {rest}` is not a block of entries; add these by hand under it, or run without --into to print them"
        ));
    }
    // The block: the indented (or blank, or comment) lines after the key.
    let mut end = start + 1;
    let mut indent: Option<String> = None;
    while end < lines.len() {
        let line = lines[end];
        let trimmed = line.trim_start();
        if !(line.is_empty() || line.starts_with([' ', '\t']) || trimmed.starts_with('#')) {
            break;
        }
        if indent.is_none() && !trimmed.is_empty() && !trimmed.starts_with('#') {
            indent = Some(line[..line.len() - trimmed.len()].to_owned());
            let name = trimmed
                .split(':')
                .next()
                .unwrap_or_default()
                .trim_matches(['"', '\'']);
            if entries.contains_key(name) {
                return Err(format!("it already has an MCP server named `{name}`"));
            }
        } else if let Some(ind) = &indent
            && line.starts_with(ind.as_str())
            && !line[ind.len()..].starts_with([' ', '\t', '#'])
        {
            let name = line[ind.len()..]
                .split(':')
                .next()
                .unwrap_or_default()
                .trim_matches(['"', '\'']);
            if entries.contains_key(name) {
                return Err(format!("it already has an MCP server named `{name}`"));
            }
        }
        end += 1;
    }
    // Trailing blank lines stay after the new entries.
    while end > start + 1 && lines[end - 1].trim().is_empty() {
        end -= 1;
    }
    let indent = indent.unwrap_or_else(|| "  ".to_owned());
    let mut out: Vec<String> = lines[..end].iter().map(|l| (*l).to_owned()).collect();
    out.push(
        block(entries, &indent, false)
            .map_err(|e| e.to_string())?
            .trim_end()
            .to_owned(),
    );
    out.extend(lines[end..].iter().map(|l| (*l).to_owned()));
    Ok(out.join("\n") + "\n")
}

/// Loads the new text as the spec would be loaded (unset variables count
/// as set: they are for the run, not for the import).
fn check(text: &str, spec: &Path) -> anyhow::Result<()> {
    let mut loader = SpecLoader::new();
    for name in referenced_variables(text) {
        if std::env::var_os(&name).is_none() {
            loader = loader.var(name, "x");
        }
    }
    loader.parse(text, spec).map(|_| ()).with_context(|| {
        format!(
            "{} would not load with these entries; left as it was",
            spec.display()
        )
    })
}

/// The `NAME`s of `${NAME}` and `${NAME:-…}` in `text`.
fn referenced_variables(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("${") {
        let tail = &rest[i + 2..];
        let name: String = tail
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() {
            names.push(name);
        }
        rest = tail;
    }
    names
}
