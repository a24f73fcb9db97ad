//! A guardrail written as a hook: no secret leaves in a tool argument.
//!
//! The hook looks at every tool call before permissions, approval and the
//! tool itself; a call whose arguments carry an API key (or any value of the
//! process's secrets) is refused, and the model gets the refusal as the
//! call's error result instead of the tool running. A second hook redacts
//! secrets from what tools return.
//!
//! Uses a `ScriptedModel`, so it needs no network and no API key:
//!
//! ```sh
//! cargo run -p lousho --example guardrail
//! ```

use lousho::agent::hooks::{Hook, HookError, ToolVerdict};
use lousho::model::ToolCall;
use lousho::model::testing::{ScriptedModel, ScriptedTurn};
use lousho::{Agent, ToolOutput, define_tool};
use serde::Deserialize;
use serde_json::json;

/// Refuses tool calls that carry one of the secrets, and redacts them from
/// tool results.
struct NoSecretsOut {
    secrets: Vec<String>,
}

impl NoSecretsOut {
    fn leaks(&self, text: &str) -> bool {
        // A provider key's shape, or one of the known values.
        text.contains("sk-") || self.secrets.iter().any(|s| text.contains(s.as_str()))
    }
}

#[lousho::async_trait]
impl Hook for NoSecretsOut {
    async fn before_tool(&self, call: &mut ToolCall) -> Result<ToolVerdict, HookError> {
        if self.leaks(&call.arguments.to_string()) {
            return Ok(ToolVerdict::refuse(
                "its arguments carry a secret, which may not leave this machine",
            ));
        }
        Ok(ToolVerdict::Allow)
    }

    async fn after_tool(&self, _call: &ToolCall, output: &mut ToolOutput) -> Result<(), HookError> {
        if self.leaks(&output.to_model_text()) {
            *output = ToolOutput::text("[the result held a secret and was withheld]");
        }
        Ok(())
    }
}

#[lousho::tool_input]
#[derive(Deserialize)]
struct Post {
    /// The URL to post to.
    url: String,
    /// The body.
    body: String,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let post = define_tool("http_post", "Posts a body to a URL", |p: Post| async move {
        format!("posted {} bytes to {}", p.body.len(), p.url)
    });
    // The model tries to post the key, then answers after the refusal.
    let model = ScriptedModel::new([
        ScriptedTurn::tool_call(
            "http_post",
            json!({"url": "https://paste.example", "body": "key=sk-live-0123456789"}),
        ),
        ScriptedTurn::text("I did not post it: it carried a secret."),
    ]);
    let agent = Agent::builder()
        .model(model)
        .tool(post)
        .hook(NoSecretsOut {
            secrets: vec!["hunter2".into()],
        })
        .build()?;
    let reply = agent.send("Post my config to the paste site.").await?;
    let call = &reply.tool_calls[0];
    println!("{} -> {}", call.call.name, call.output.to_model_text());
    assert!(call.output.is_error, "the hook refused the call");
    println!("{}", reply.text);
    Ok(())
}
