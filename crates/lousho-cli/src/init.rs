//! `lousho init`: a commented starter spec, and the MCP client entries that
//! serve it (Claude Code, Cursor, VS Code).

use crate::cli::InitArgs;
use crate::exit::Usage;
use anyhow::Context;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

/// The starter spec; `{name}` is replaced by the agent's name (a YAML string).
const TEMPLATE: &str = r#"# A lousho agent (written by `lousho init`; the format: docs/cli.md).
#
#   lousho run {file} "What is in this folder?"     # answer once
#   lousho run {file}                               # chat (Ctrl-D quits)
#   lousho tools {file}                             # what the agent sees
#   lousho mcp {file}                               # serve it over MCP (stdio)

name: {name}                       # its tool name when served over MCP
description: Answers questions about the files in this folder
# `test` is the offline test model (it calls each tool once, then reports).
# A real one: openai/gpt-4o-mini (OPENAI_API_KEY), anthropic/claude-sonnet-4-5
# (ANTHROPIC_API_KEY), openrouter/<vendor>/<model>, ollama/<model>.
model: ${LOUSHO_MODEL:-test}
prompt: |
  You answer questions about the files in this folder. Use the tools; say
  which files your answer comes from.
# Built-ins: read_file list_dir glob grep todo_read todo_write current_date day_name
tools: [read_file, list_dir, grep, current_date]
workspace: .                        # the file tools' folder (relative to this file)
maxTurns: 10

# MCP servers the agent uses (their tools are named <server>__<tool>).
# mcpServers:
#   files:
#     command: npx
#     args: [-y, "@modelcontextprotocol/server-filesystem", "."]
#   docs:
#     url: https://example.com/mcp
#     headers: { Authorization: "Bearer ${DOCS_TOKEN}" }
# Or the file another client already uses: mcpServers: ./.mcp.json

# Which tools run unasked: rules first (first match wins), then each tool's
# annotations (read-only tools run; others are asked on the terminal).
# permissions:
#   rules:
#     - { tool: "docs__*", decision: allow }
#     - { tool: files__write_file, decision: deny }
"#;

/// Writes the spec (never over an existing file) and prints the entries.
pub fn run(args: InitArgs) -> anyhow::Result<ExitCode> {
    let path = &args.spec;
    let name = match &args.name {
        Some(name) => name.clone(),
        None => default_name(path),
    };
    let file_name = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_else(|| "agent.yaml".to_owned());
    let text = TEMPLATE
        .replace("{name}", &serde_json::to_string(&name)?)
        .replace("{file}", &file_name);
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create the folder {}", parent.display()))?;
    }
    let mut file = match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
    {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            return Err(anyhow::Error::new(Usage(format!(
                "{} exists; lousho init never overwrites a file: pass another path (lousho init other.yaml)",
                path.display()
            ))));
        }
        Err(e) => {
            return Err(anyhow::Error::new(e).context(format!("cannot write {}", path.display())));
        }
    };
    file.write_all(text.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))?;
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.clone());
    let mut out = std::io::stdout().lock();
    writeln!(out, "wrote {}", path.display())?;
    writeln!(out, "\ntry it:\n  lousho run {} \"hello\"", path.display())?;
    writeln!(out, "\n{}", snippets(&name, &absolute.to_string_lossy())?)?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// The file's stem, in the characters a served tool name allows.
fn default_name(path: &Path) -> String {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    if name.is_empty() {
        "agent".to_owned()
    } else {
        name
    }
}

/// The entries for Claude Code, Cursor and VS Code that serve the spec
/// (written by hand for the keys' order: `command` before `args`).
fn snippets(name: &str, spec: &str) -> anyhow::Result<String> {
    let name = serde_json::to_string(name)?;
    let args = serde_json::to_string(&["mcp", spec])?;
    Ok(format!(
        "serve it to an MCP client (lousho on PATH: cargo install --path crates/lousho-cli):\n\n\
         Claude Code (.mcp.json) and Cursor (.cursor/mcp.json):\n\
         {{\n  \"mcpServers\": {{\n    {name}: {{\"command\": \"lousho\", \"args\": {args}}}\n  }}\n}}\n\n\
         VS Code (.vscode/mcp.json):\n\
         {{\n  \"servers\": {{\n    {name}: {{\"type\": \"stdio\", \"command\": \"lousho\", \"args\": {args}}}\n  }}\n}}"
    ))
}
