//! `todo_read` / `todo_write`: a todo list kept for one conversation.
//!
//! The list lives in the conversation's [`ConversationState`]
//! (under [`TODO_STATE_KEY`]): every turn of one [`Session`](crate::Session)
//! sees it, and two sessions never share it.

use crate::tool::{
    ConversationState, DefinedTool, ToolAnnotations, ToolContext, ToolError, ToolOrigin,
    ToolOutput, ToolSet, define_tool_with_context,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::sync::Arc;

/// The key the todo list is kept under in the conversation state.
pub const TODO_STATE_KEY: &str = "lousho.todos";

/// The most items a list may hold.
pub const MAX_TODO_ITEMS: usize = 100;

/// The most characters one item's text may have.
pub const MAX_TODO_CHARS: usize = 1000;

/// Where an item stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    /// Not started.
    Pending,
    /// Being worked on.
    InProgress,
    /// Done.
    Completed,
}

/// One item of the todo list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TodoItem {
    /// What is to be done.
    pub content: String,
    /// Where it stands.
    pub status: TodoStatus,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct TodoWriteInput {
    /// The whole list, in order; it replaces the previous one.
    items: Vec<TodoItem>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct TodoReadInput {}

const WRITE_DESCRIPTION: &str = "Replace this conversation's todo list with `items` (each with \
`content` and a `status`: `pending`, `in_progress` or `completed`). Send the whole list every \
time: items left out are dropped. Use it to plan multi-step work and to mark progress; keep one \
item `in_progress` at a time. Returns the list as saved.";

const READ_DESCRIPTION: &str = "Read this conversation's todo list: each item with its status \
(`[ ]` pending, `[~]` in progress, `[x]` completed). The list is kept across the turns of a \
conversation.";

/// The todo list stored in `state` (empty when none was written).
pub fn todo_list(state: &ConversationState) -> Vec<TodoItem> {
    state
        .get(TODO_STATE_KEY)
        .and_then(|v| serde_json::from_value(v).ok())
        .unwrap_or_default()
}

/// The `todo_write` tool: not read-only (it changes the list), not destructive.
pub fn todo_write_tool() -> DefinedTool {
    define_tool_with_context(
        "todo_write",
        WRITE_DESCRIPTION,
        |input: TodoWriteInput, ctx: ToolContext| async move { write(&input.items, &ctx.state) },
    )
    .annotations(
        ToolAnnotations::new()
            .read_only(false)
            .destructive(false)
            .idempotent(true),
    )
    .origin(ToolOrigin::Builtin)
}

/// The `todo_read` tool (read-only).
pub fn todo_read_tool() -> DefinedTool {
    define_tool_with_context(
        "todo_read",
        READ_DESCRIPTION,
        |_: TodoReadInput, ctx: ToolContext| async move { render(&todo_list(&ctx.state)) },
    )
    .read_only()
    .origin(ToolOrigin::Builtin)
}

/// `todo_read` and `todo_write`.
pub fn todo_tools() -> ToolSet {
    let mut set = ToolSet::new();
    for tool in [todo_read_tool(), todo_write_tool()] {
        // Two distinct names: inserting cannot clash.
        let _ = set.insert(Arc::new(tool));
    }
    set
}

fn write(items: &[TodoItem], state: &ConversationState) -> Result<ToolOutput, ToolError> {
    if items.len() > MAX_TODO_ITEMS {
        return Err(ToolError::failed(format!(
            "the todo list may hold at most {MAX_TODO_ITEMS} items ({} sent); merge or drop some",
            items.len()
        )));
    }
    for (i, item) in items.iter().enumerate() {
        if item.content.trim().is_empty() {
            return Err(ToolError::failed(format!(
                "item {} has empty `content`",
                i + 1
            )));
        }
        let chars = item.content.chars().count();
        if chars > MAX_TODO_CHARS {
            return Err(ToolError::failed(format!(
                "item {} is {chars} characters long; keep each item under {MAX_TODO_CHARS}",
                i + 1
            )));
        }
    }
    let value = serde_json::to_value(items)
        .map_err(|e| ToolError::failed(format!("could not save the todo list: {e}")))?;
    state.set(TODO_STATE_KEY, value);
    Ok(render(items))
}

fn render(items: &[TodoItem]) -> ToolOutput {
    let mut out = String::new();
    if items.is_empty() {
        out.push_str("(the todo list is empty)\n");
    }
    for (i, item) in items.iter().enumerate() {
        let mark = match item.status {
            TodoStatus::Pending => "[ ]",
            TodoStatus::InProgress => "[~]",
            TodoStatus::Completed => "[x]",
        };
        let _ = writeln!(out, "{}. {mark} {}", i + 1, item.content);
    }
    let done = items
        .iter()
        .filter(|i| i.status == TodoStatus::Completed)
        .count();
    if !items.is_empty() {
        let _ = writeln!(out, "({done} of {} completed)", items.len());
    }
    ToolOutput::text(out).with_structured(serde_json::json!({ "items": items }))
}
