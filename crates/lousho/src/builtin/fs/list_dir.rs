//! `list_dir {path?}`: a folder's entries with kind and size.

use super::walk::walker;
use super::{FsToolError, Workspace, run_blocking};
use crate::tool::{DefinedTool, ToolContext, ToolOutput, define_tool_with_context};
use schemars::JsonSchema;
use serde::Deserialize;
use std::fmt::Write as _;

const DESCRIPTION: &str = "List a folder in the workspace: one entry per line with its kind \
(`dir`, `file`, `link`) and, for files, its size in bytes; folders end with `/`. Sorted by name. \
Hidden entries and those ignored by .gitignore/.ignore are left out (a note counts them). \
Use glob to find files deeper down.";

/// `list_dir`'s input.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListDirInput {
    /// The folder to list, relative to the workspace root (default: the root).
    #[schemars(example = ".")]
    path: Option<String>,
}

/// The `list_dir` tool bound to `workspace`.
pub fn list_dir_tool(workspace: &Workspace) -> DefinedTool {
    let ws = workspace.clone();
    define_tool_with_context(
        "list_dir",
        DESCRIPTION,
        move |input: ListDirInput, ctx: ToolContext| {
            let ws = ws.clone();
            async move {
                run_blocking(&ctx.cancel, move |_| {
                    list_dir(&ws, input.path.as_deref().unwrap_or("."))
                })
                .await
            }
        },
    )
    .read_only()
}

struct Entry {
    name: String,
    kind: &'static str,
    detail: String,
}

fn list_dir(ws: &Workspace, requested: &str) -> Result<ToolOutput, FsToolError> {
    let resolved = ws.resolve_path(requested)?;
    let path = resolved.display;
    if !resolved.real.is_dir() {
        return Err(FsToolError::NotADirectory { path });
    }
    let mut builder = walker(ws, &resolved.real);
    builder.max_depth(Some(1));
    let mut entries = Vec::new();
    for entry in builder.build() {
        let Ok(entry) = entry else { continue };
        if entry.depth() == 0 {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(file_type) = entry.file_type() else {
            continue;
        };
        let entry = if file_type.is_dir() {
            Entry {
                name: format!("{name}/"),
                kind: "dir",
                detail: String::new(),
            }
        } else if file_type.is_symlink() {
            let detail = match ws.resolve_path(&ws.display(entry.path())) {
                Ok(target) if target.real.is_dir() => format!(" -> {}/", target.display),
                Ok(target) => format!(" -> {}", target.display),
                Err(_) => " -> (outside the workspace or missing; not readable)".to_owned(),
            };
            Entry {
                name,
                kind: "link",
                detail,
            }
        } else if file_type.is_file() {
            let size = entry.metadata().map(|m| m.len()).unwrap_or(0);
            Entry {
                name,
                kind: "file",
                detail: format!(" ({size} bytes)"),
            }
        } else {
            Entry {
                name,
                kind: "other",
                detail: String::new(),
            }
        };
        entries.push(entry);
    }
    entries.sort_by(|a, b| a.name.cmp(&b.name));

    let all = std::fs::read_dir(&resolved.real)
        .map_err(|source| FsToolError::Io {
            path: path.clone(),
            source,
        })?
        .count();
    let left_out = all.saturating_sub(entries.len());
    let total = entries.len();
    let cap = ws.limits().list_entries;

    let mut out = String::new();
    if total == 0 {
        let _ = writeln!(out, "(`{path}` has no entries to show)");
    }
    for e in entries.iter().take(cap) {
        let _ = writeln!(out, "{:<5} {}{}", e.kind, e.name, e.detail);
    }
    if total > cap {
        let _ = writeln!(
            out,
            "[showing the first {cap} of {total} entries; use glob with a pattern to find specific files]"
        );
    }
    if left_out > 0 {
        let _ = writeln!(
            out,
            "[{left_out} hidden or ignored (.gitignore/.ignore) entries not shown; glob and grep skip them too]"
        );
    }
    Ok(ToolOutput::text(out))
}
