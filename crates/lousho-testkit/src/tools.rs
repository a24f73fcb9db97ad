//! Small fixture tools with observable behaviour.

use lousho::tool::DefinedTool;
use lousho::{ToolContext, ToolOutput};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A tool that counts its calls and echoes its input as JSON.
pub fn counting_echo(name: &str, calls: Arc<AtomicUsize>) -> DefinedTool {
    DefinedTool::from_json(
        name,
        "Echoes its input and counts calls",
        json!({"type": "object", "properties": {"text": {"type": "string"}}}),
        move |input: Value, _ctx: ToolContext| {
            calls.fetch_add(1, Ordering::SeqCst);
            async move { ToolOutput::json(json!({"echo": input})) }
        },
    )
}
