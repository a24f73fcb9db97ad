//! The workspace's files whole, for serving them (as MCP resources): the
//! files a walk sees that fit some globs, and one file read whole — under
//! the same sandbox, by descriptor beneath the root, FIFOs and devices
//! refused, and at most [`FsLimits::resource_bytes`](super::FsLimits) long.

use super::glob::compile_glob;
use super::read_file::binary_reason;
use super::walk::{walk_parallel, walker};
use super::{FsToolError, Workspace};
use globset::GlobMatcher;
use ignore::WalkState;
use std::io::Read;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio_util::sync::CancellationToken;

/// Globs a path (relative to the workspace root) must fit; none: every file.
#[derive(Debug, Clone, Default)]
pub(crate) struct FileGlobs(Vec<GlobMatcher>);

impl FileGlobs {
    /// Compiles `patterns` (`*` does not cross `/`; `**` does).
    pub(crate) fn new(patterns: &[String]) -> Result<Self, FsToolError> {
        patterns
            .iter()
            .map(|p| compile_glob(p))
            .collect::<Result<_, _>>()
            .map(Self)
    }

    /// Whether `rel` fits (always, with no globs).
    pub(crate) fn fits(&self, rel: &str) -> bool {
        self.0.is_empty() || self.0.iter().any(|g| g.is_match(rel))
    }
}

/// One file a walk found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FoundFile {
    /// Relative to the workspace root, `/`-separated.
    pub(crate) path: String,
    /// Its size in bytes.
    pub(crate) size: u64,
}

/// The regular files under the root that fit `globs`, sorted, at most
/// `cap` of them: ignore files respected, hidden entries skipped, symbolic
/// links neither followed nor listed.
pub(crate) fn find_files(
    ws: &Workspace,
    globs: &FileGlobs,
    cap: usize,
    cancel: &CancellationToken,
) -> Vec<FoundFile> {
    let root = ws.root();
    let found = AtomicUsize::new(0);
    let per_thread = walk_parallel(&walker(ws, root), cancel, Vec::new, |hits, entry| {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            return WalkState::Continue;
        }
        let path = ws.display(entry.path());
        if globs.fits(&path) && ws.is_file(entry.path()) {
            let size = entry.metadata().map_or(0, |m| m.len());
            hits.push(FoundFile { path, size });
            if found.fetch_add(1, Ordering::Relaxed) + 1 >= cap {
                return WalkState::Quit;
            }
        }
        WalkState::Continue
    });
    let mut all: Vec<FoundFile> = per_thread.into_iter().flatten().collect();
    all.sort_unstable_by(|a, b| a.path.cmp(&b.path));
    all.truncate(cap);
    all
}

/// A file read whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum WholeFile {
    /// UTF-8 text (no NUL byte, no UTF-16 mark).
    Text(String),
    /// Anything else.
    Bytes(Vec<u8>),
}

/// Reads `requested` (relative to the root, or absolute inside it) whole,
/// as the file tools would open it: refused when the sandbox refuses the
/// path, when it is not a regular file, or when it is longer than the
/// workspace's `resource_bytes`.
pub(crate) fn read_whole(ws: &Workspace, requested: &str) -> Result<WholeFile, FsToolError> {
    let resolved = ws.resolve_path(requested)?;
    let path = resolved.display;
    if resolved.real.is_dir() {
        return Err(FsToolError::IsADirectory { path });
    }
    let file = ws
        .open_file(&resolved.real)
        .map_err(|e| e.into_tool_error(requested, &path))?;
    let io_err = |source| FsToolError::Io {
        path: path.clone(),
        source,
    };
    let max = ws.limits().resource_bytes;
    let size = file.metadata().map_err(io_err)?.len();
    if size > max as u64 {
        return Err(FsToolError::TooLarge { path, size, max });
    }
    let mut data = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    // One byte past the cap tells a file that grew since it was measured.
    file.take(max as u64 + 1)
        .read_to_end(&mut data)
        .map_err(io_err)?;
    if data.len() > max {
        return Err(FsToolError::TooLarge {
            path,
            size: data.len() as u64,
            max,
        });
    }
    if binary_reason(&data[..data.len().min(8 * 1024)]).is_some() {
        return Ok(WholeFile::Bytes(data));
    }
    Ok(match String::from_utf8(data) {
        Ok(text) => WholeFile::Text(text),
        Err(e) => WholeFile::Bytes(e.into_bytes()),
    })
}
