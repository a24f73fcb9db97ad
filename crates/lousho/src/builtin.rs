//! Built-in tools, ready to hand to a model.
//!
//! | group | tools | made by |
//! | --- | --- | --- |
//! | files (sandboxed to one folder) | `read_file`, `list_dir`, `glob`, `grep` | [`fs_tools`] |
//! | todo list (per conversation) | `todo_read`, `todo_write` | [`todo_tools`] |
//! | clock | `current_date`, `day_name` | [`clock_tools`] |
//!
//! Every tool but `todo_write` is read-only (`readOnlyHint: true,
//! destructiveHint: false`), so the default approval policy runs them
//! without asking; `todo_write` is not read-only but not destructive either
//! (it only changes the conversation's own todo list), so it runs without
//! asking too. Spec files name built-ins (`tools: [read_file, grep]`);
//! [`builtin_tools`] turns such a list into a [`ToolSet`].
//!
//! ```
//! use lousho::Agent;
//! use lousho::builtin::{clock_tools, fs_tools, todo_tools};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let agent = Agent::builder()
//!     .model("test")
//!     .tools((fs_tools(".")?, todo_tools(), clock_tools()))
//!     .build()?;
//! assert_eq!(agent.own_tools().len(), 8);
//! # Ok(()) }
//! ```

mod clock;
pub mod fs;
mod todo;

pub use clock::{clock_tools, current_date_tool, day_name_tool};
pub use fs::{
    FS_TOOL_NAMES, FsLimits, FsToolError, IntoWorkspace, SandboxError, Workspace, WorkspaceError,
    fs_tools, glob_tool, grep_tool, list_dir_tool, read_file_tool,
};
pub use todo::{
    MAX_TODO_CHARS, MAX_TODO_ITEMS, TODO_STATE_KEY, TodoItem, TodoStatus, todo_list,
    todo_read_tool, todo_tools, todo_write_tool,
};

use crate::tool::{DefinedTool, ToolSet};
use std::sync::Arc;

/// Every built-in tool's name.
pub const BUILTIN_NAMES: [&str; 8] = [
    "read_file",
    "list_dir",
    "glob",
    "grep",
    "todo_read",
    "todo_write",
    "current_date",
    "day_name",
];

/// A name that is not a built-in tool.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{name}` is not a built-in tool; the built-ins are: {}", BUILTIN_NAMES.join(", "))]
pub struct UnknownBuiltin {
    /// The name asked for.
    pub name: String,
}

/// The built-in tool called `name`; file tools are bound to `workspace`.
pub fn builtin_tool(name: &str, workspace: &Workspace) -> Option<DefinedTool> {
    Some(match name {
        "read_file" => read_file_tool(workspace),
        "list_dir" => list_dir_tool(workspace),
        "glob" => glob_tool(workspace),
        "grep" => grep_tool(workspace),
        "todo_read" => todo_read_tool(),
        "todo_write" => todo_write_tool(),
        "current_date" => current_date_tool(),
        "day_name" => day_name_tool(),
        _ => return None,
    })
}

/// The built-in tools named in `names` (as a spec file lists them), file
/// tools bound to `workspace`. A name given twice counts once; an unknown
/// name is an error that lists the built-ins.
pub fn builtin_tools<I>(names: I, workspace: &Workspace) -> Result<ToolSet, UnknownBuiltin>
where
    I: IntoIterator,
    I::Item: AsRef<str>,
{
    let mut set = ToolSet::new();
    for name in names {
        let name = name.as_ref();
        if set.contains(name) {
            continue;
        }
        let tool = builtin_tool(name, workspace).ok_or_else(|| UnknownBuiltin {
            name: name.to_owned(),
        })?;
        // Checked above: the name is not in the set yet.
        let _ = set.insert(Arc::new(tool));
    }
    Ok(set)
}
