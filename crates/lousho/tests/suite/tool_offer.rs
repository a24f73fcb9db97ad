//! An agent builds what a request carries about its tools once per tool set:
//! while a tool source returns the same tools, every request carries the
//! same `Arc` of definitions (which providers key their serialised tool list
//! by); a changed set is rebuilt at the next turn.

use async_trait::async_trait;
use lousho::model::testing::{ScriptedModel, ScriptedTurn};
use lousho::tool::{DefinedTool, Tool, ToolSource, ToolSourceError};
use lousho::{Agent, ToolContext};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

/// A source whose tools the test swaps.
struct Swappable(Mutex<Vec<Arc<dyn Tool>>>);

#[async_trait]
impl ToolSource for Swappable {
    fn name(&self) -> &str {
        "swappable"
    }
    async fn ready(&self) -> Result<(), ToolSourceError> {
        Ok(())
    }
    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.0.lock().unwrap().clone()
    }
    async fn close(&self) {}
}

fn tool(name: &str) -> Arc<dyn Tool> {
    Arc::new(DefinedTool::from_json(
        name,
        "does a thing",
        json!({"type": "object", "properties": {"id": {"type": "string"}}}),
        |_: Value, _: ToolContext| async { "ok" },
    ))
}

#[tokio::test]
async fn requests_share_one_definition_list_until_the_tools_change() {
    let source = Arc::new(Swappable(Mutex::new(vec![tool("a"), tool("b")])));
    let model = ScriptedModel::new([
        ScriptedTurn::text("one"),
        ScriptedTurn::text("two"),
        ScriptedTurn::text("three"),
    ]);
    let agent = Agent::builder()
        .model(model.clone())
        .tool_source(source.clone())
        .build()
        .unwrap();
    agent.send("first").await.unwrap();
    agent.send("second").await.unwrap();
    *source.0.lock().unwrap() = vec![tool("a"), tool("c")];
    agent.send("third").await.unwrap();

    let requests = model.requests();
    let names =
        |i: usize| -> Vec<String> { requests[i].tools.iter().map(|d| d.name.clone()).collect() };
    assert_eq!(names(0), ["a", "b"]);
    assert!(
        Arc::ptr_eq(&requests[0].tools, &requests[1].tools),
        "the same tools: the same definitions, not rebuilt"
    );
    assert_eq!(names(2), ["a", "c"], "a changed set is rebuilt");
    assert!(!Arc::ptr_eq(&requests[1].tools, &requests[2].tools));
}
