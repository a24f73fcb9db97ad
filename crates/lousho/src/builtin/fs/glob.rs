//! `glob {pattern, path?}`: files whose path matches a glob.

use super::walk::{walk_parallel, walker};
use super::{FsToolError, Workspace, run_blocking};
use crate::tool::{DefinedTool, ToolContext, ToolOrigin, ToolOutput, define_tool_with_context};
use globset::{GlobBuilder, GlobMatcher};
use ignore::WalkState;
use schemars::JsonSchema;
use serde::Deserialize;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio_util::sync::CancellationToken;

const DESCRIPTION: &str = "Find files in the workspace whose path matches a glob pattern, e.g. \
`**/*.rs`, `src/**/test_*.py` or `*.{json,yaml}`. The pattern is matched against paths relative \
to `path` (default: the workspace root); `*` and `?` stay within one folder, `**` crosses folders. \
Returns matching file paths relative to the workspace root, sorted. Hidden files and files \
ignored by .gitignore/.ignore are skipped.";

/// `glob`'s input.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GlobInput {
    /// The glob, e.g. `**/*.rs`.
    #[schemars(example = "**/*.md")]
    pattern: String,
    /// The folder to search from, relative to the workspace root (default: the root).
    path: Option<String>,
}

/// Matches collected at most, whatever the cap, before the walk stops.
const HARD_LIMIT: usize = 100_000;

/// The `glob` tool bound to `workspace`.
pub fn glob_tool(workspace: &Workspace) -> DefinedTool {
    let ws = workspace.clone();
    define_tool_with_context(
        "glob",
        DESCRIPTION,
        move |input: GlobInput, ctx: ToolContext| {
            let ws = ws.clone();
            async move { run_blocking(&ctx.cancel, move |cancel| glob(&ws, &input, &cancel)).await }
        },
    )
    .read_only()
    .origin(ToolOrigin::Builtin)
}

/// Builds a glob where `*` does not cross `/`.
pub(crate) fn compile_glob(pattern: &str) -> Result<GlobMatcher, FsToolError> {
    let trimmed = pattern.strip_prefix("./").unwrap_or(pattern);
    GlobBuilder::new(trimmed)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| FsToolError::InvalidGlob {
            pattern: pattern.to_owned(),
            message: e.kind().to_string(),
        })
}

fn glob(
    ws: &Workspace,
    input: &GlobInput,
    cancel: &CancellationToken,
) -> Result<ToolOutput, FsToolError> {
    let matcher = compile_glob(&input.pattern)?;
    let resolved = ws.resolve_path(input.path.as_deref().unwrap_or("."))?;
    if !resolved.real.is_dir() {
        return Err(FsToolError::NotADirectory {
            path: resolved.display,
        });
    }
    let base = resolved.real.as_path();
    let found = AtomicUsize::new(0);
    let per_thread = walk_parallel(
        &walker(ws, base),
        cancel,
        Vec::new,
        |hits: &mut Vec<String>, entry| {
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return WalkState::Continue;
            }
            let rel = entry.path().strip_prefix(base).unwrap_or(entry.path());
            // The walk lists folders by path: a name is kept only if it is a
            // regular file beneath the root right now (a folder swapped for a
            // symlink mid-walk cannot contribute names from outside).
            if matcher.is_match(rel) && ws.is_file(entry.path()) {
                hits.push(ws.display(entry.path()));
                if found.fetch_add(1, Ordering::Relaxed) + 1 >= HARD_LIMIT {
                    return WalkState::Quit;
                }
            }
            WalkState::Continue
        },
    );
    let mut hits: Vec<String> = per_thread.into_iter().flatten().collect();
    hits.sort_unstable();
    Ok(ToolOutput::text(render(
        ws,
        &input.pattern,
        &resolved.display,
        &hits,
    )))
}

fn render(ws: &Workspace, pattern: &str, base: &str, hits: &[String]) -> String {
    let mut out = String::new();
    if hits.is_empty() {
        let _ = writeln!(
            out,
            "no files match `{pattern}` under `{base}` (hidden and .gitignore/.ignore'd files are skipped)"
        );
        return out;
    }
    let cap = ws.limits().glob_results;
    for hit in hits.iter().take(cap) {
        out.push_str(hit);
        out.push('\n');
    }
    if hits.len() >= HARD_LIMIT {
        let _ = writeln!(
            out,
            "[showing the first {cap} of more than {HARD_LIMIT} matching files; narrow the pattern or set `path`]"
        );
    } else if hits.len() > cap {
        let _ = writeln!(
            out,
            "[showing the first {cap} of {} matching files (sorted by path); narrow the pattern or set `path`]",
            hits.len()
        );
    }
    out
}
