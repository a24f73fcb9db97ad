//! The file tools: `read_file`, `list_dir`, `glob` and `grep`, bound to one
//! sandboxed [`Workspace`].
//!
//! They walk and search with ripgrep's own crates (`ignore`, `globset`,
//! `grep-regex`, `grep-searcher`): `.gitignore`, `.ignore` and git's exclude
//! files are respected (inside a git repository or not), hidden files and
//! folders are skipped, symbolic links are not followed while walking, and
//! binary files are skipped by `grep` and refused by `read_file`. Every file
//! and folder is opened by descriptor beneath the workspace root (see
//! `beneath`), so swapping a folder for a symlink mid-call leads nowhere;
//! FIFOs, devices and sockets are never read.

mod beneath;
mod error;
// Used by serving (workspace files as resources) and its spec keys.
#[cfg_attr(not(feature = "mcp-server"), allow(dead_code))]
pub(crate) mod files;
mod glob;
mod grep;
mod limits;
mod list_dir;
mod read_file;
mod sandbox;
mod text;
mod walk;

pub use error::FsToolError;
pub use glob::glob_tool;
pub use grep::grep_tool;
pub use limits::FsLimits;
pub use list_dir::list_dir_tool;
pub use read_file::read_file_tool;
pub use sandbox::{SandboxError, Workspace, WorkspaceError};

use crate::tool::{ToolError, ToolOutput, ToolSet};
use std::path::{Path, PathBuf};
use tokio_util::sync::CancellationToken;

/// The names of the file tools, in the order [`fs_tools`] builds them.
pub const FS_TOOL_NAMES: [&str; 4] = ["read_file", "list_dir", "glob", "grep"];

/// The file tools (`read_file`, `list_dir`, `glob`, `grep`) bound to one
/// folder — the product page's `createFsTools(workspace)`.
///
/// Takes a path (resolved once) or a [`Workspace`] (to set [`FsLimits`]).
/// Every tool is read-only (`readOnlyHint: true, destructiveHint: false`),
/// so the default approval policy runs them without asking.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let tools = lousho::builtin::fs_tools(".")?;
/// assert_eq!(tools.names().collect::<Vec<_>>(), ["glob", "grep", "list_dir", "read_file"]);
/// # Ok(()) }
/// ```
pub fn fs_tools(workspace: impl IntoWorkspace) -> Result<ToolSet, WorkspaceError> {
    let ws = workspace.into_workspace()?;
    let mut set = ToolSet::new();
    for tool in [
        read_file_tool(&ws),
        list_dir_tool(&ws),
        glob_tool(&ws),
        grep_tool(&ws),
    ] {
        // Four distinct names: inserting cannot clash.
        let _ = set.insert(std::sync::Arc::new(tool));
    }
    Ok(set)
}

/// What [`fs_tools`] accepts: a [`Workspace`] or a path to open as one.
pub trait IntoWorkspace {
    /// Opens (or passes on) the workspace.
    fn into_workspace(self) -> Result<Workspace, WorkspaceError>;
}

impl IntoWorkspace for Workspace {
    fn into_workspace(self) -> Result<Workspace, WorkspaceError> {
        Ok(self)
    }
}

impl IntoWorkspace for &Workspace {
    fn into_workspace(self) -> Result<Workspace, WorkspaceError> {
        Ok(self.clone())
    }
}

macro_rules! path_into_workspace {
    ($($t:ty),*) => {$(
        impl IntoWorkspace for $t {
            fn into_workspace(self) -> Result<Workspace, WorkspaceError> {
                Workspace::new(self)
            }
        }
    )*};
}
path_into_workspace!(&str, String, &String, &Path, PathBuf, &PathBuf);

/// Runs blocking file work off the async threads. The work gets a token to
/// watch; when the call is cancelled the tool returns at once and the work
/// stops at its next check.
pub(crate) async fn run_blocking<F>(
    cancel: &CancellationToken,
    work: F,
) -> Result<ToolOutput, ToolError>
where
    F: FnOnce(CancellationToken) -> Result<ToolOutput, FsToolError> + Send + 'static,
{
    let token = cancel.child_token();
    let guard = token.clone().drop_guard();
    let handle = tokio::task::spawn_blocking(move || work(token));
    let result = tokio::select! {
        biased;
        () = cancel.cancelled() => Err(ToolError::Cancelled),
        joined = handle => match joined {
            Ok(done) => done.map_err(ToolError::from),
            Err(e) => Err(ToolError::failed(format!("the tool stopped unexpectedly: {e}"))),
        },
    };
    // Dropping the guard cancels the work if it is still running.
    drop(guard);
    result
}
