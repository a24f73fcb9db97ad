//! `serve.resources`, `serve.prompts`, `serve.title` and `serve.icons` in
//! spec files: checked when the spec loads, and served by
//! `AgentSpec::serve_offers` (rmcp's client over loopback HTTP).

use lousho::mcp::HttpOptions;
use lousho::spec::{ServedResources, SpecLoader};
use lousho::{ServeOptions, serve_mcp};
use rmcp::ServiceExt;
use rmcp::model::{ErrorCode, GetPromptRequestParams, object};
use rmcp::service::ServiceError;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::json;

fn parse(text: &str) -> Result<lousho::spec::AgentSpec, lousho::spec::SpecError> {
    SpecLoader::new().without_env().parse(text, "agent.yaml")
}

#[test]
fn bad_prompts_and_globs_are_errors_naming_the_key() {
    let e =
        parse("model: test\nserve:\n  prompts:\n    p:\n      text: \"Hi {{who}}\"\n").unwrap_err();
    assert_eq!(e.key.as_deref(), Some("serve.prompts.p.text"));
    assert!(e.to_string().contains("`{{who}}` names no argument"), "{e}");

    let e =
        parse("model: test\nserve:\n  prompts:\n    p:\n      agentPrompt: true\n").unwrap_err();
    assert!(e.to_string().contains("needs the agent's `prompt`"), "{e}");

    let e =
        parse("model: test\nserve:\n  prompts:\n    p:\n      description: nothing\n").unwrap_err();
    assert!(e.to_string().contains("needs `text`, `messages`"), "{e}");

    let e = parse("model: test\nserve:\n  resources: [\"docs/[a\"]\n").unwrap_err();
    assert_eq!(e.key.as_deref(), Some("serve.resources[0]"));

    let spec =
        parse("model: test\nserve:\n  resources: [workspace, sessions, \"*.md\"]\n").unwrap();
    assert_eq!(
        spec.serve.resources,
        [
            ServedResources::Workspace,
            ServedResources::Sessions,
            ServedResources::Glob("*.md".into())
        ]
    );
}

#[tokio::test]
async fn spec_prompts_fill_their_templates_and_check_their_arguments() {
    let spec = parse(
        r#"
name: helper
model: test
prompt: You help.
serve:
  title: Helper
  icons: [{ src: "https://example.com/h.png" }]
  prompts:
    ask:
      title: Ask
      icons: [{ src: "https://example.com/ask.png", theme: dark }]
      agentPrompt: true
      arguments:
        - { name: question, required: true }
        - { name: tone, values: [warm, dry] }
      messages:
        - { text: "{{question}} (tone: {{ tone }})" }
        - { role: assistant, text: "On it." }
"#,
    )
    .unwrap();
    let agent = spec.agent_builder().unwrap().build().unwrap();
    let options = spec
        .serve_offers(ServeOptions::new(agent).http(HttpOptions::new().port(0)))
        .unwrap();
    let server = serve_mcp(options).await.unwrap();
    let c = ()
        .serve(StreamableHttpClientTransport::from_uri(
            server.url().unwrap(),
        ))
        .await
        .unwrap();
    let info = serde_json::to_value(c.peer_info().unwrap()).unwrap();
    assert_eq!(info["serverInfo"]["title"], "Helper");
    let prompts = serde_json::to_value(c.list_all_prompts().await.unwrap()).unwrap();
    assert_eq!(prompts[0]["title"], "Ask");
    assert_eq!(
        prompts[0]["icons"][0],
        json!({"src": "https://example.com/ask.png", "theme": "dark"})
    );
    assert_eq!(
        prompts[0]["arguments"],
        json!([{"name": "question", "required": true}, {"name": "tone", "required": false}])
    );

    let got = c
        .get_prompt(
            GetPromptRequestParams::new("ask")
                .with_arguments(object(json!({"question": "Why?", "tone": "dry"}))),
        )
        .await
        .unwrap();
    let wire = serde_json::to_value(&got.messages).unwrap();
    assert_eq!(
        wire,
        json!([
            {"role": "user", "content": {"type": "text", "text": "You help."}},
            {"role": "user", "content": {"type": "text", "text": "Why? (tone: dry)"}},
            {"role": "assistant", "content": {"type": "text", "text": "On it."}},
        ])
    );
    let info = c
        .complete_prompt_argument("ask", "tone", "w", None)
        .await
        .unwrap();
    assert_eq!(info.values, ["warm"]);

    for bad in [
        json!({}),
        json!({"question": "q", "mood": "x"}),
        json!({"question": 3}),
    ] {
        let err = c
            .get_prompt(GetPromptRequestParams::new("ask").with_arguments(object(bad.clone())))
            .await
            .unwrap_err();
        let ServiceError::McpError(e) = err else {
            panic!("{err}")
        };
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "{bad}: {}", e.message);
    }
    drop(c);
    server.close().await.unwrap();
}
