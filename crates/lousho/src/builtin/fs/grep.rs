//! `grep {pattern, path?, glob?, case_insensitive?, context?, max_results?}`:
//! a regex search over the workspace, on ripgrep's own search crates.

mod render;
mod sink;

use super::beneath::OpenError;
use super::walk::{walk_parallel, walker};
use super::{FsToolError, Workspace, run_blocking};
use crate::tool::{DefinedTool, ToolContext, ToolOrigin, ToolOutput, define_tool_with_context};
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder};
use ignore::WalkState;
use ignore::overrides::OverrideBuilder;
use schemars::JsonSchema;
use serde::Deserialize;
use sink::{Collect, FileHits, Outcome};
use std::fs::File;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio_util::sync::CancellationToken;

const DESCRIPTION: &str = "Search file contents in the workspace with a regular expression \
(Rust regex syntax, as in ripgrep). Returns matching lines as `path:line:text`, sorted by path \
then line; with `context`, surrounding lines appear as `path-line-text` and groups are separated \
by `--`. Hidden files, files ignored by .gitignore/.ignore and binary files are skipped. Narrow \
the search with `path` (a folder or file) and `glob` (e.g. `*.rs`, `src/**/*.ts`, or `!*.md` to \
exclude). A note at the end says how many matches there were and whether some were left out.";

/// `grep`'s input.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GrepInput {
    /// The regular expression to search for (one line at a time).
    #[schemars(example = &"TODO")]
    pattern: String,
    /// A folder or file to search, relative to the workspace root (default: the whole workspace).
    path: Option<String>,
    /// Only search files matching this glob, as ripgrep's `-g` (`*.rs` matches at any depth; a leading `!` excludes).
    glob: Option<String>,
    /// Match without regard to case (default false).
    #[serde(default)]
    case_insensitive: bool,
    /// Lines of context to show before and after each match (default 0, at most 10).
    context: Option<u32>,
    /// The most matching lines to return (default 100, at most 1000).
    #[schemars(range(min = 1))]
    max_results: Option<u32>,
}

/// The most memory one file's search may buffer (a line longer than this
/// makes the file unreadable rather than exhausting memory).
const HEAP_LIMIT: usize = 64 * 1024 * 1024;

/// Matching lines kept at most before the walk stops, whatever the cap.
const HARD_LIMIT: usize = 20_000;

/// The `grep` tool bound to `workspace`.
pub fn grep_tool(workspace: &Workspace) -> DefinedTool {
    let ws = workspace.clone();
    define_tool_with_context(
        "grep",
        DESCRIPTION,
        move |input: GrepInput, ctx: ToolContext| {
            let ws = ws.clone();
            async move { run_blocking(&ctx.cancel, move |cancel| grep(&ws, &input, &cancel)).await }
        },
    )
    .read_only()
    .origin(ToolOrigin::Builtin)
}

/// What one search found.
pub(crate) struct Found {
    /// Files with at least one match.
    pub files: Vec<FileHits>,
    /// Files searched.
    pub searched: usize,
    /// Binary files skipped.
    pub binary: usize,
    /// Files that could not be read (permissions, a line over the heap limit).
    pub unreadable: usize,
    /// The walk stopped at [`HARD_LIMIT`].
    pub stopped_early: bool,
}

fn grep(
    ws: &Workspace,
    input: &GrepInput,
    cancel: &CancellationToken,
) -> Result<ToolOutput, FsToolError> {
    let limits = ws.limits();
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(input.case_insensitive)
        .line_terminator(Some(b'\n'))
        .build(&input.pattern)
        .map_err(|e| FsToolError::InvalidRegex {
            pattern: input.pattern.clone(),
            message: e.to_string(),
        })?;
    let resolved = ws.resolve_path(input.path.as_deref().unwrap_or("."))?;
    let max_results = input.max_results.map_or(limits.grep_default_results, |n| {
        usize::try_from(n)
            .unwrap_or(usize::MAX)
            .clamp(1, limits.grep_max_results)
    });
    let context = input.context.map_or(0, |c| {
        usize::try_from(c)
            .unwrap_or(usize::MAX)
            .min(limits.grep_max_context)
    });
    let mut searcher = SearcherBuilder::new();
    searcher
        .line_number(true)
        .binary_detection(BinaryDetection::quit(b'\x00'))
        // A single line may not make the searcher buffer more than this.
        .heap_limit(Some(HEAP_LIMIT))
        .before_context(context)
        .after_context(context);

    let found = if resolved.real.is_file() {
        let requested = input.path.as_deref().unwrap_or(".");
        let file = ws
            .open_file(&resolved.real)
            .map_err(|e| e.into_tool_error(requested, &resolved.display))?;
        search_one(
            ws,
            &searcher.build(),
            &matcher,
            &file,
            &resolved.real,
            max_results,
        )
        .map_err(|source| FsToolError::Io {
            path: resolved.display.clone(),
            source,
        })?
    } else {
        let mut walk = walker(ws, &resolved.real);
        if let Some(glob) = &input.glob {
            let mut overrides = OverrideBuilder::new(&resolved.real);
            let invalid = |e: ignore::Error| FsToolError::InvalidGlob {
                pattern: glob.clone(),
                message: e.to_string(),
            };
            overrides.add(glob).map_err(invalid)?;
            walk.overrides(overrides.build().map_err(invalid)?);
        }
        search_tree(ws, &walk, &searcher, &matcher, max_results, cancel)
    };
    Ok(ToolOutput::text(render::render(
        &found,
        &input.pattern,
        &resolved.display,
        max_results,
    )))
}

/// Searches one opened file with `sink`; an error leaves the sink ready for
/// the next.
fn search_file(
    searcher: &mut Searcher,
    matcher: &RegexMatcher,
    sink: &mut Collect,
    file: &File,
    display: impl FnOnce() -> String,
) -> std::io::Result<Outcome> {
    if let Err(e) = searcher.search_file(matcher, file, &mut *sink) {
        sink.reset();
        return Err(e);
    }
    Ok(sink.finish(display))
}

fn search_one(
    ws: &Workspace,
    searcher: &Searcher,
    matcher: &RegexMatcher,
    file: &File,
    path: &Path,
    max_results: usize,
) -> std::io::Result<Found> {
    let mut sink = Collect::new(max_results, ws.limits().grep_line_chars);
    let mut searcher = searcher.clone();
    let mut found = Found {
        files: Vec::new(),
        searched: 1,
        binary: 0,
        unreadable: 0,
        stopped_early: false,
    };
    match search_file(&mut searcher, matcher, &mut sink, file, || ws.display(path))? {
        Outcome::Hits(hits) => found.files.push(hits),
        Outcome::NoMatch => {}
        Outcome::Binary => found.binary = 1,
    }
    Ok(found)
}

struct ThreadState {
    searcher: Searcher,
    matcher: RegexMatcher,
    sink: Collect,
    files: Vec<FileHits>,
    searched: usize,
    binary: usize,
    unreadable: usize,
}

fn search_tree(
    ws: &Workspace,
    walk: &ignore::WalkBuilder,
    searcher: &SearcherBuilder,
    matcher: &RegexMatcher,
    max_results: usize,
    cancel: &CancellationToken,
) -> Found {
    let kept = AtomicUsize::new(0);
    let line_chars = ws.limits().grep_line_chars;
    let states = walk_parallel(
        walk,
        cancel,
        || ThreadState {
            searcher: searcher.build(),
            matcher: matcher.clone(),
            sink: Collect::new(max_results, line_chars),
            files: Vec::new(),
            searched: 0,
            binary: 0,
            unreadable: 0,
        },
        |state: &mut ThreadState, entry| {
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return WalkState::Continue;
            }
            // Opened beneath the root: a folder swapped for a symlink since
            // the walk listed it fails here instead of leading outside.
            let file = match ws.open_file(entry.path()) {
                Ok(file) => file,
                // Swapped for a FIFO, a device or a socket: never read.
                Err(OpenError::NotAFile(_)) => return WalkState::Continue,
                Err(_) => {
                    state.unreadable += 1;
                    return WalkState::Continue;
                }
            };
            state.searched += 1;
            let ThreadState {
                searcher,
                matcher,
                sink,
                ..
            } = state;
            let display = || ws.display(entry.path());
            let Ok(outcome) = search_file(searcher, matcher, sink, &file, display) else {
                // Unreadable (permissions, vanished, a huge line): counted, skipped.
                state.unreadable += 1;
                return WalkState::Continue;
            };
            match outcome {
                Outcome::Hits(hits) => {
                    let n = hits.kept_matches;
                    state.files.push(hits);
                    if kept.fetch_add(n, Ordering::Relaxed) + n >= HARD_LIMIT {
                        return WalkState::Quit;
                    }
                }
                Outcome::NoMatch => {}
                Outcome::Binary => state.binary += 1,
            }
            WalkState::Continue
        },
    );
    let mut found = Found {
        files: Vec::new(),
        searched: 0,
        binary: 0,
        unreadable: 0,
        stopped_early: kept.load(Ordering::Relaxed) >= HARD_LIMIT,
    };
    for state in states {
        found.files.extend(state.files);
        found.searched += state.searched;
        found.binary += state.binary;
        found.unreadable += state.unreadable;
    }
    found.files.sort_unstable_by(|a, b| a.path.cmp(&b.path));
    found
}
