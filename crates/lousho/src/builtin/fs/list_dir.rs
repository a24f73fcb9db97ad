//! `list_dir {path?}`: a folder's entries with kind and size.

use super::walk::walker;
use super::{FsToolError, Workspace, run_blocking};
use crate::tool::{DefinedTool, ToolContext, ToolOrigin, ToolOutput, define_tool_with_context};
use rustix::fs::{AtFlags, Dir, FileType};
use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::fmt::Write as _;
use std::os::unix::ffi::OsStrExt;

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
    .origin(ToolOrigin::Builtin)
}

struct Entry {
    name: String,
    kind: &'static str,
    detail: String,
}

fn list_dir(ws: &Workspace, requested: &str) -> Result<ToolOutput, FsToolError> {
    let resolved = ws.resolve_path(requested)?;
    let path = resolved.display;
    // The folder is read through a descriptor opened beneath the root, so a
    // folder swapped for a symlink after the check shows nothing from
    // outside; the ignore rules only filter the names it holds.
    let dir = ws
        .open_dir(&resolved.real)
        .map_err(|e| e.into_tool_error(requested, &path))?;
    let mut walk = walker(ws, &resolved.real);
    walk.max_depth(Some(1));
    let shown: HashSet<OsString> = walk
        .build()
        .filter_map(Result::ok)
        .filter(|e| e.depth() == 1)
        .map(|e| e.file_name().to_owned())
        .collect();
    let io_err = |source: std::io::Error| FsToolError::Io {
        path: path.clone(),
        source,
    };
    let mut entries = Vec::new();
    let mut all = 0usize;
    for entry in Dir::read_from(&dir).map_err(|e| io_err(e.into()))? {
        let entry = entry.map_err(|e| io_err(e.into()))?;
        let name_bytes = entry.file_name().to_bytes();
        if name_bytes == b"." || name_bytes == b".." {
            continue;
        }
        all += 1;
        let name_os = OsStr::from_bytes(name_bytes);
        if !shown.contains(name_os) {
            continue;
        }
        let name = name_os.to_string_lossy().into_owned();
        let stat = || rustix::fs::statat(&dir, name_os, AtFlags::SYMLINK_NOFOLLOW).ok();
        let file_type = match entry.file_type() {
            FileType::Unknown => {
                stat().map_or(FileType::Unknown, |s| FileType::from_raw_mode(s.st_mode))
            }
            known => known,
        };
        entries.push(match file_type {
            FileType::Directory => Entry {
                name: format!("{name}/"),
                kind: "dir",
                detail: String::new(),
            },
            FileType::Symlink => {
                let link = ws.display(&resolved.real.join(name_os));
                let detail = match ws.resolve_path(&link) {
                    Ok(target) if target.real.is_dir() => format!(" -> {}/", target.display),
                    Ok(target) => format!(" -> {}", target.display),
                    Err(_) => " -> (outside the workspace or missing; not readable)".to_owned(),
                };
                Entry {
                    name,
                    kind: "link",
                    detail,
                }
            }
            FileType::RegularFile => {
                let size = stat().map_or(0, |s| s.st_size);
                Entry {
                    name,
                    kind: "file",
                    detail: format!(" ({size} bytes)"),
                }
            }
            _ => Entry {
                name,
                kind: "other",
                detail: String::new(),
            },
        });
    }
    entries.sort_by(|a, b| a.name.cmp(&b.name));

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
