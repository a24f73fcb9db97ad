//! MCP tools as lousho tools: names, specs, approvals, results, list changes.

use super::fixture::{call, capture_logs, fixture};
use lousho::Approval;
use lousho::connect_mcp;
use lousho::mcp::{ConnectOptions, McpError, ToolNaming};
use lousho::tool::Content;
use lousho::tool::ToolOrigin;
use serde_json::json;
use std::time::Duration;

#[tokio::test]
async fn tools_are_named_server_then_tool_with_both_segments_normalised() {
    let mcp = connect_mcp(
        [("my server.v2", fixture("serve"))],
        ConnectOptions::default(),
    )
    .await
    .unwrap();
    let tools = mcp.tools();
    assert!(tools.contains("my_server_v2__fetch_url"), "{tools:?}");
    assert!(tools.contains("my_server_v2__echo"));
    let t = tools.get("my_server_v2__fetch_url").unwrap();
    assert_eq!(
        t.spec().origin,
        ToolOrigin::mcp("my server.v2", "fetch:url"),
        "the original names are kept"
    );
    // Calls use the original name.
    assert_eq!(call(t, json!({"text": "u"})).await.to_model_text(), "u");
    mcp.close().await;

    let mcp = connect_mcp(
        [("docs", fixture("serve"))],
        ConnectOptions::default().naming(ToolNaming::McpPrefixed),
    )
    .await
    .unwrap();
    assert!(mcp.tools().contains("mcp__docs__echo"));
    mcp.close().await;
}

#[tokio::test]
async fn specs_keep_description_schema_title_and_raw_annotations() {
    let mcp = connect_mcp([("fx", fixture("serve"))], ConnectOptions::default())
        .await
        .unwrap();
    let tools = mcp.tools();
    let echo = tools.get("fx__echo").unwrap().spec();
    assert_eq!(echo.description, "Echoes text");
    assert_eq!(
        echo.input_schema,
        json!({"type": "object", "properties": {"text": {"type": "string"}}})
    );
    assert_eq!(echo.display_name.as_deref(), Some("Echo"));
    assert_eq!(
        echo.metadata["mcp"]["annotations"],
        json!({"readOnlyHint": true})
    );
    let gentle = tools.get("fx__gentle").unwrap().spec();
    assert_eq!(
        gentle.display_name.as_deref(),
        Some("Gentle change"),
        "annotations.title as fallback"
    );
    let plain = tools.get("fx__plain").unwrap().spec();
    assert_eq!(plain.metadata["mcp"]["annotations"], json!({}));
    mcp.close().await;
}

#[tokio::test]
async fn annotations_decide_approval_by_default() {
    let mcp = connect_mcp([("fx", fixture("serve"))], ConnectOptions::default())
        .await
        .unwrap();
    let tools = mcp.tools();
    let asks = |n: &str| tools.get(n).unwrap().spec().needs_approval();
    assert!(!asks("fx__echo"), "readOnlyHint: true runs");
    assert!(!asks("fx__gentle"), "destructiveHint: false runs");
    assert!(asks("fx__destroy"), "destructiveHint: true asks");
    assert!(asks("fx__plain"), "no annotations asks");
    mcp.close().await;
}

#[tokio::test]
async fn always_never_and_custom_approval_apply_per_server() {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let seen2 = seen.clone();
    let mcp = connect_mcp(
        [
            ("a", fixture("serve").approval(Approval::Always)),
            ("n", fixture("serve").approval(Approval::Never)),
            (
                "c",
                fixture("serve").approval(Approval::custom(move |name, _ann| {
                    seen2.lock().unwrap().push(name.to_owned());
                    !name.starts_with("ech")
                })),
            ),
        ],
        ConnectOptions::default(),
    )
    .await
    .unwrap();
    let tools = mcp.tools();
    let asks = |n: &str| tools.get(n).unwrap().spec().needs_approval();
    assert!(asks("a__echo"));
    assert!(!asks("n__destroy"));
    assert!(!asks("c__echo"));
    assert!(asks("c__gentle"));
    assert!(asks("c__fetch_url"));
    let seen = seen.lock().unwrap().clone();
    assert!(
        seen.contains(&"echo".to_owned()) && seen.contains(&"fetch:url".to_owned()),
        "bare names: {seen:?}"
    );
    mcp.close().await;
}

#[tokio::test]
async fn allow_and_deny_lists_filter_tools() {
    let mcp = connect_mcp(
        [
            ("only", fixture("serve").allow_tools(["echo", "fetch*"])),
            ("except", fixture("serve").deny_tools(["destroy", "cr*"])),
        ],
        ConnectOptions::default(),
    )
    .await
    .unwrap();
    let names: Vec<String> = mcp
        .server_tools("only")
        .unwrap()
        .names()
        .map(str::to_owned)
        .collect();
    assert_eq!(names, ["only__echo", "only__fetch_url"]);
    let except = mcp.server_tools("except").unwrap();
    assert!(!except.contains("except__destroy") && !except.contains("except__crash"));
    assert!(except.contains("except__echo"));
    mcp.close().await;
}

#[tokio::test]
async fn every_content_kind_and_structured_content_reach_the_output() {
    let mcp = connect_mcp([("fx", fixture("serve"))], ConnectOptions::default())
        .await
        .unwrap();
    let out = call(mcp.tools().get("fx__mixed").unwrap(), json!({})).await;
    assert!(!out.is_error);
    assert_eq!(out.content[0], Content::text("some text"));
    assert_eq!(out.content[1], Content::image("aW1hZ2U=", "image/png"));
    assert!(
        matches!(&out.content[2], Content::Audio { data, mime_type } if data == "YXVkaW8=" && mime_type == "audio/wav")
    );
    assert!(
        matches!(&out.content[3], Content::Resource { uri, text: Some(t), .. } if uri == "file:///notes.txt" && t == "embedded notes")
    );
    assert_eq!(out.structured, Some(json!({"answer": 42})));
    mcp.close().await;
}

#[tokio::test]
async fn is_error_results_and_bad_input_become_error_results() {
    let mcp = connect_mcp([("fx", fixture("serve"))], ConnectOptions::default())
        .await
        .unwrap();
    let tools = mcp.tools();
    let out = call(tools.get("fx__fail").unwrap(), json!({})).await;
    assert!(out.is_error);
    assert_eq!(out.to_model_text(), "it went wrong");
    let out = call(tools.get("fx__echo").unwrap(), json!("not an object")).await;
    assert!(
        out.is_error && out.to_model_text().contains("JSON object"),
        "{out:?}"
    );
    // `null` input means "no arguments".
    assert!(
        !call(tools.get("fx__plain").unwrap(), serde_json::Value::Null)
            .await
            .is_error
    );
    mcp.close().await;
}

#[tokio::test]
async fn two_servers_whose_tools_end_with_one_name_are_an_error_naming_both() {
    let err = connect_mcp(
        [("a.b", fixture("serve")), ("a_b", fixture("serve"))],
        ConnectOptions::default(),
    )
    .await
    .unwrap_err();
    let McpError::NameCollision(c) = &err else {
        panic!("{err}")
    };
    let msg = err.to_string();
    assert!(
        msg.contains("`a.b`") && msg.contains("`a_b`") && msg.contains(&c.name),
        "{msg}"
    );
}

#[tokio::test]
async fn list_changed_refreshes_the_tools() {
    let mcp = connect_mcp([("fx", fixture("serve"))], ConnectOptions::default())
        .await
        .unwrap();
    let before = mcp.tools();
    assert!(!before.contains("fx__brand_new"));
    let echo = |set: &lousho::tool::ToolSet| set.get("fx__echo").unwrap().clone();
    assert!(
        std::sync::Arc::ptr_eq(&echo(&before), &echo(&mcp.tools())),
        "an unchanged listing gives the same tools (what agents derive from them is reused)"
    );
    let out = call(
        mcp.tools().get("fx__add_tool").unwrap(),
        json!({"text": "brand_new"}),
    )
    .await;
    assert!(!out.is_error, "{out:?}");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while !mcp.tools().contains("fx__brand_new") {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the new tool never showed up"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let out = call(mcp.tools().get("fx__brand_new").unwrap(), json!({})).await;
    assert_eq!(out.to_model_text(), "called brand_new");
    assert!(
        !std::sync::Arc::ptr_eq(&echo(&before), &echo(&mcp.tools())),
        "a new listing makes new tools"
    );
    mcp.close().await;
}

#[tokio::test]
async fn list_changed_reaches_an_agent_between_turns() {
    use lousho::Agent;
    use lousho::model::testing::{ScriptedModel, ScriptedTurn};
    let model = ScriptedModel::new([
        ScriptedTurn::tool_call("fx__add_tool", json!({"text": "late"})),
        ScriptedTurn::tool_call("fx__late", json!({})).delay(Duration::from_millis(300)),
        ScriptedTurn::text("done"),
    ]);
    let agent = Agent::builder()
        .model(model)
        .mcp_server("fx", fixture("serve"))
        .build()
        .unwrap();
    let reply = agent.send("go").await.unwrap();
    assert_eq!(
        reply.tool_calls[1].output.to_model_text(),
        "called late",
        "{:?}",
        reply.tool_calls
    );
    agent.close().await;
}

#[tokio::test]
async fn two_tools_of_one_server_with_one_name_skip_the_later_and_keep_the_server() {
    let (logs, _guard) = capture_logs();
    let entry = fixture("serve").env("FIXTURE_DUP_NAMES", "1");
    let mcp = connect_mcp([("fx", entry)], ConnectOptions::default())
        .await
        .expect("the server stays");
    assert_eq!(
        mcp.status().get("fx"),
        Some(&lousho::mcp::ServerStatus::Connected)
    );
    let tools = mcp.tools();
    let dup = tools
        .get("fx__dup_name")
        .expect("the first of the two is kept");
    assert_eq!(dup.spec().origin, ToolOrigin::mcp("fx", "dup.name"));
    assert_eq!(call(dup, json!({})).await.to_model_text(), "dup.name");
    assert!(tools.contains("fx__echo"), "the other tools are there");
    let text = logs.text();
    assert!(
        text.contains("WARN") && text.contains("`dup.name`") && text.contains("`dup_name`"),
        "a warning names both tools: {text}"
    );
    mcp.close().await;
}
