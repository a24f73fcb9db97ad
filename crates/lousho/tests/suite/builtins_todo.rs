//! todo_read / todo_write: a list kept per conversation.

use super::builtins_fs::{call, ok};
use lousho::builtin::{TodoItem, TodoStatus, todo_list, todo_tools};
use lousho::model::testing::{ScriptedModel, ScriptedTurn};
use lousho::{Agent, ToolSet};
use serde_json::{Value, json};

/// What the model sees of each tool: name, description, schema, hints.
pub(crate) fn specs(tools: &ToolSet) -> Value {
    tools
        .iter()
        .map(|t| {
            let s = t.spec();
            json!({
                "name": s.name,
                "description": s.description,
                "input_schema": s.input_schema,
                "annotations": s.annotations,
            })
        })
        .collect()
}

fn write(items: Value) -> ScriptedTurn {
    ScriptedTurn::tool_call("todo_write", json!({ "items": items }))
}

#[tokio::test]
async fn todo_state_is_kept_across_turns_of_one_session_and_not_shared_between_sessions() {
    let model = ScriptedModel::new([
        // Session A, turn 1: write two items.
        write(json!([
            {"content": "read the code", "status": "in_progress"},
            {"content": "write tests", "status": "pending"},
        ])),
        ScriptedTurn::text("planned"),
        // Session A, turn 2: read them back, then mark one done.
        ScriptedTurn::tool_call("todo_read", json!({})),
        write(json!([
            {"content": "read the code", "status": "completed"},
            {"content": "write tests", "status": "in_progress"},
        ])),
        ScriptedTurn::text("progress"),
        // Session B: its own, empty list.
        ScriptedTurn::tool_call("todo_read", json!({})),
        ScriptedTurn::text("nothing here"),
    ]);
    let agent = Agent::builder()
        .model(model)
        .tools(todo_tools())
        .build()
        .unwrap();

    let a = agent.session();
    let reply = a.send("plan the work").await.unwrap();
    assert_eq!(reply.tool_calls.len(), 1);
    assert!(
        reply.tool_calls[0]
            .output
            .to_model_text()
            .contains("1. [~] read the code")
    );

    let reply = a.send("how is it going?").await.unwrap();
    let read = reply.tool_calls[0].output.to_model_text();
    assert!(
        read.starts_with("1. [~] read the code\n2. [ ] write tests\n(0 of 2 completed)"),
        "{read}"
    );
    let written = reply.tool_calls[1].output.to_model_text();
    assert!(written.starts_with("1. [x] read the code\n2. [~] write tests\n(1 of 2 completed)"));
    assert_eq!(
        todo_list(a.state()),
        [
            TodoItem {
                content: "read the code".into(),
                status: TodoStatus::Completed
            },
            TodoItem {
                content: "write tests".into(),
                status: TodoStatus::InProgress
            },
        ]
    );

    let b = agent.session();
    let reply = b.send("anything to do?").await.unwrap();
    assert_eq!(
        reply.tool_calls[0].output.to_model_text(),
        "(the todo list is empty)\n"
    );
    assert!(todo_list(b.state()).is_empty());
    assert_eq!(
        todo_list(a.state()).len(),
        2,
        "session B did not touch A's list"
    );
}

#[tokio::test]
async fn todo_write_checks_items_and_returns_structured_content() {
    let tools = todo_tools();
    let bad = call(
        &tools,
        "todo_write",
        json!({"items": [{"content": "  ", "status": "pending"}]}),
    )
    .await;
    assert!(
        bad.is_error && bad.text.contains("item 1 has empty `content`"),
        "{bad:?}"
    );
    let bad = call(
        &tools,
        "todo_write",
        json!({"items": [{"content": "x", "status": "doing"}]}),
    )
    .await;
    assert!(
        bad.is_error && bad.text.contains("unknown variant `doing`"),
        "{bad:?}"
    );
    let too_many: Vec<Value> = (0..101)
        .map(|i| json!({"content": format!("t{i}"), "status": "pending"}))
        .collect();
    let bad = call(&tools, "todo_write", json!({ "items": too_many })).await;
    assert!(
        bad.is_error && bad.text.contains("at most 100 items"),
        "{bad:?}"
    );

    let out = tools
        .get("todo_write")
        .unwrap()
        .call(
            json!({"items": [{"content": "ship", "status": "completed"}]}),
            lousho::ToolContext::new("t"),
        )
        .await
        .unwrap();
    assert_eq!(
        out.structured,
        Some(json!({"items": [{"content": "ship", "status": "completed"}]}))
    );
    assert_eq!(
        ok(&tools, "todo_read", json!({})).await,
        "(the todo list is empty)\n",
        "fresh context"
    );
}

#[test]
fn todo_write_is_not_read_only_and_not_destructive() {
    let tools = todo_tools();
    let w = &tools.get("todo_write").unwrap().spec().annotations;
    assert_eq!((w.read_only, w.destructive), (Some(false), Some(false)));
    assert!(!tools.get("todo_write").unwrap().spec().needs_approval());
    let r = &tools.get("todo_read").unwrap().spec().annotations;
    assert_eq!((r.read_only, r.destructive), (Some(true), Some(false)));
}

#[test]
fn tool_specs_snapshot() {
    insta::assert_json_snapshot!("todo_tool_specs", specs(&todo_tools()));
}
