//! Resources, templates, prompts, completions and subscriptions of a
//! server (issue 30), against the pinned `@modelcontextprotocol/server-everything`
//! and a server on the official Python SDK; the catalog keeps them, so
//! listing a cataloged server starts nothing.

use super::mcp_interop::{everything, interop_dir, peer};
use futures::StreamExt;
use lousho::mcp::{
    CompletionTarget, ConnectOptions, McpClient, McpError, MemoryManifestStore, ResourceContents,
    ServerStatus,
};
use lousho::model::testing::{ScriptedModel, ScriptedTurn};
use lousho::model::{Part, Role};
use lousho::tool::Content;
use lousho::{Agent, McpServer, connect_mcp};
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

fn everything_entry() -> Option<McpServer> {
    let index = everything()?;
    Some(McpServer::stdio("node").args([index.display().to_string(), "stdio".into()]))
}

fn python_entry() -> Option<McpServer> {
    let python = peer(".venv/bin/python")?;
    let script = interop_dir().join("python/fastmcp_server.py");
    Some(McpServer::stdio(python.display().to_string()).arg(script.display().to_string()))
}

#[tokio::test]
async fn server_everything_resources_templates_and_reads() {
    let Some(entry) = everything_entry() else {
        return;
    };
    let mcp = connect_mcp([("ev", entry)], ConnectOptions::default())
        .await
        .unwrap();
    let resources = mcp.list_resources("ev").await.unwrap();
    let doc = resources
        .iter()
        .find(|r| r.uri.starts_with("demo://resource/static/document/"))
        .unwrap_or_else(|| panic!("no static document in {resources:?}"));
    let contents = mcp.read_resource("ev", &doc.uri).await.unwrap();
    assert!(
        matches!(&contents[0], ResourceContents::Text { text, .. } if !text.is_empty()),
        "{contents:?}"
    );

    let templates = mcp.list_resource_templates("ev").await.unwrap();
    let uris: Vec<&str> = templates.iter().map(|t| t.uri_template.as_str()).collect();
    assert!(
        uris.contains(&"demo://resource/dynamic/text/{resourceId}"),
        "{uris:?}"
    );
    let text = mcp
        .read_resource("ev", "demo://resource/dynamic/text/3")
        .await
        .unwrap();
    assert!(
        matches!(&text[0], ResourceContents::Text { text, .. } if text.starts_with("Resource 3:")),
        "{text:?}"
    );
    let blob = mcp
        .read_resource("ev", "demo://resource/dynamic/blob/2")
        .await
        .unwrap();
    assert!(
        matches!(&blob[0], ResourceContents::Blob { blob, mime_type: Some(m), .. } if m == "text/plain" && !blob.is_empty()),
        "{blob:?}"
    );
    // A template variable completes through completion/complete.
    let values = mcp
        .complete(
            "ev",
            CompletionTarget::ResourceTemplate("demo://resource/dynamic/text/{resourceId}".into()),
            "resourceId",
            "7",
            BTreeMap::new(),
        )
        .await
        .unwrap();
    assert_eq!(values, ["7"]);
    // A read the server refuses is a typed error naming the method.
    let err = mcp
        .read_resource("ev", "demo://resource/dynamic/text/0")
        .await
        .unwrap_err();
    assert!(
        matches!(&err, McpError::Request { method, .. } if *method == "resources/read"),
        "{err:?}"
    );
    // Read as message parts (an attachment).
    let parts = mcp
        .resource_message_parts("ev", "demo://resource/dynamic/text/1")
        .await
        .unwrap();
    assert!(
        matches!(&parts[0], Part::Text { text } if text.starts_with("[resource ev:demo://resource/dynamic/text/1]\nResource 1:")),
        "{parts:?}"
    );
    mcp.close().await;
}

#[tokio::test]
async fn server_everything_prompts_with_arguments_and_completions() {
    let Some(entry) = everything_entry() else {
        return;
    };
    let mcp = connect_mcp([("ev", entry)], ConnectOptions::default())
        .await
        .unwrap();
    let prompts = mcp.list_prompts("ev").await.unwrap();
    let args = prompts.iter().find(|p| p.name == "args-prompt").unwrap();
    assert!(
        args.arguments
            .iter()
            .any(|a| a.name == "city" && a.required)
    );
    let got = mcp
        .get_prompt("ev", "args-prompt", [("city", "Paris"), ("state", "Texas")])
        .await
        .unwrap();
    assert_eq!(got.messages.len(), 1);
    assert_eq!(got.messages[0].role, Role::User);
    assert_eq!(got.messages[0].text(), "What's weather in Paris, Texas?");
    let missing = mcp
        .get_prompt("ev", "args-prompt", Vec::<(String, String)>::new())
        .await
        .unwrap_err();
    assert!(
        matches!(&missing, McpError::MissingArgument { argument, .. } if argument == "city"),
        "{missing:?}"
    );
    let unknown = mcp
        .get_prompt("ev", "nope", Vec::<(String, String)>::new())
        .await
        .unwrap_err();
    assert!(matches!(unknown, McpError::NotListed { .. }), "{unknown:?}");
    let departments = mcp
        .complete(
            "ev",
            CompletionTarget::Prompt("completable-prompt".into()),
            "department",
            "S",
            BTreeMap::new(),
        )
        .await
        .unwrap();
    assert_eq!(departments, ["Sales", "Support"]);
    let names = mcp
        .complete(
            "ev",
            CompletionTarget::Prompt("completable-prompt".into()),
            "name",
            "",
            BTreeMap::from([("department".to_owned(), "Sales".to_owned())]),
        )
        .await
        .unwrap();
    assert_eq!(names, ["David", "Eve", "Frank"]);
    mcp.close().await;
}

#[tokio::test]
async fn server_everything_subscription_delivers_an_update() {
    let Some(entry) = everything_entry() else {
        return;
    };
    let mcp = connect_mcp([("ev", entry)], ConnectOptions::default())
        .await
        .unwrap();
    let uri = "demo://resource/dynamic/text/1";
    let mut updates = mcp.subscribe_resource("ev", uri).await.unwrap();
    // The server sends updates of subscribed resources once this tool
    // turns them on (at once, then every 5 s).
    let toggle = mcp.tools();
    let toggle = toggle.get("ev__toggle-subscriber-updates").unwrap();
    let out = super::fixture::call(toggle, serde_json::json!({})).await;
    assert!(!out.is_error, "{out:?}");
    let updated = tokio::time::timeout(Duration::from_secs(30), updates.next())
        .await
        .expect("no resource update within 30 s");
    assert_eq!(updated.as_deref(), Some(uri));
    mcp.unsubscribe_resource("ev", uri).await.unwrap();
    drop(updates);
    mcp.close().await;
}

#[tokio::test]
async fn the_catalog_lists_resources_and_prompts_without_starting_the_server() {
    let Some(entry) = everything_entry() else {
        return;
    };
    let store = Arc::new(MemoryManifestStore::new());
    let options = ConnectOptions::default().manifests(store.clone());
    let first = connect_mcp([("ev", entry.clone())], options.clone())
        .await
        .unwrap();
    let live = first.list_resources("ev").await.unwrap();
    let prompts = first.list_prompts("ev").await.unwrap();
    first.close().await;

    let second = McpClient::new([("ev", entry)], options);
    assert_eq!(second.status()["ev"], ServerStatus::Cataloged);
    assert_eq!(second.list_resources("ev").await.unwrap(), live);
    assert_eq!(second.list_prompts("ev").await.unwrap(), prompts);
    assert!(
        !second
            .list_resource_templates("ev")
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(second.connect_attempts("ev").unwrap(), 0, "nothing started");
    second.close().await;
}

#[tokio::test]
async fn a_server_without_resources_says_so() {
    let Some(entry) = python_entry() else { return };
    let mcp = connect_mcp([("py", entry)], ConnectOptions::default())
        .await
        .unwrap();
    match mcp.list_resources("py").await {
        // The Python SDK declares resources even without any.
        Ok(list) => assert!(list.iter().all(|r| !r.uri.is_empty())),
        Err(e) => assert!(matches!(e, McpError::NotOffered { .. }), "{e:?}"),
    }
    mcp.close().await;
}

/// The text of a run's tool results, in order.
fn results(reply: &lousho::Reply) -> Vec<lousho::ToolOutput> {
    reply.tool_calls.iter().map(|c| c.output.clone()).collect()
}

#[tokio::test]
async fn a_scripted_model_finds_and_reads_a_resource_through_its_tools() {
    let Some(entry) = everything_entry() else {
        return;
    };
    let model = ScriptedModel::new([
        ScriptedTurn::tool_call("ev__list_resources", json!({})),
        ScriptedTurn::tool_call(
            "ev__read_resource",
            json!({"uri": "demo://resource/dynamic/text/2"}),
        ),
        ScriptedTurn::tool_call(
            "ev__read_resource",
            json!({"uri": "demo://resource/dynamic/blob/1"}),
        ),
        ScriptedTurn::text("done"),
    ]);
    let agent = Agent::builder()
        .model(model.clone())
        .mcp_server("ev", entry)
        .build()
        .unwrap();
    agent.ready().await.unwrap();
    let tools = agent.tools().unwrap();
    let read = tools.get("ev__read_resource").unwrap();
    assert!(!read.spec().needs_approval(), "read-only: runs by default");
    assert!(tools.contains("ev__list_resources"));
    let reply = agent.send("find a resource and read it").await.unwrap();
    let out = results(&reply);
    let listing: serde_json::Value = out[0].structured.clone().unwrap();
    assert!(
        listing["resourceTemplates"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["uriTemplate"] == "demo://resource/dynamic/text/{resourceId}"),
        "{listing}"
    );
    assert!(!listing["resources"].as_array().unwrap().is_empty());
    assert!(
        matches!(&out[1].content[0], Content::Resource { text: Some(t), .. } if t.starts_with("Resource 2:")),
        "{:?}",
        out[1]
    );
    // A text/plain blob stays an attachment with its MIME type.
    assert!(
        matches!(&out[2].content[0], Content::Resource { blob: Some(_), mime_type: Some(m), .. } if m == "text/plain"),
        "{:?}",
        out[2]
    );
    // The model saw both tools' definitions in its first request.
    let first = &model.requests()[0];
    assert!(first.tools.iter().any(|t| t.name == "ev__read_resource"));
    agent.close().await;
}

#[tokio::test]
async fn a_resource_link_in_a_tool_result_is_followed_through_its_server() {
    let Some(entry) = everything_entry() else {
        return;
    };
    let model = ScriptedModel::new([
        ScriptedTurn::tool_call("ev__get-resource-links", json!({"count": 2})),
        ScriptedTurn::tool_call(
            "ev__read_resource",
            json!({"uri": "demo://resource/dynamic/text/2"}),
        ),
        ScriptedTurn::text("done"),
    ]);
    let agent = Agent::builder()
        .model(model.clone())
        .mcp_server("ev", entry)
        .build()
        .unwrap();
    let reply = agent.send("follow the link").await.unwrap();
    let out = results(&reply);
    let link = out[0]
        .content
        .iter()
        .find(|c| matches!(c, Content::Resource { uri, .. } if uri == "demo://resource/dynamic/text/2"))
        .unwrap_or_else(|| panic!("no link in {:?}", out[0]));
    assert!(
        link.to_model_text().contains("read_resource"),
        "the model is told how to follow it: {}",
        link.to_model_text()
    );
    assert!(
        matches!(&out[1].content[0], Content::Resource { text: Some(t), .. } if t.starts_with("Resource 2:")),
        "{:?}",
        out[1]
    );
    agent.close().await;
}

#[tokio::test]
async fn a_prompt_with_arguments_runs_as_a_conversation() {
    let Some(entry) = everything_entry() else {
        return;
    };
    let model = ScriptedModel::new([ScriptedTurn::text("Sunny.")]);
    let mcp = connect_mcp([("ev", entry)], ConnectOptions::default())
        .await
        .unwrap();
    let prompt = mcp
        .get_prompt("ev", "args-prompt", [("city", "Oslo")])
        .await
        .unwrap();
    let agent = Agent::builder()
        .model(model.clone())
        .tools(mcp.tools())
        .build()
        .unwrap();
    let reply = agent.send_messages(prompt.messages).await.unwrap();
    assert_eq!(reply.text, "Sunny.");
    let sent = &model.requests()[0].messages;
    assert_eq!(sent[0].text(), "What's weather in Oslo?");
    mcp.close().await;
}

#[tokio::test]
async fn a_servers_instructions_reach_the_system_prompt_unless_turned_off() {
    let Some(entry) = everything_entry() else {
        return;
    };
    for keep in [true, false] {
        let model = ScriptedModel::new([ScriptedTurn::text("ok")]);
        let agent = Agent::builder()
            .model(model.clone())
            .prompt("Be brief.")
            .mcp_server("ev", entry.clone().instructions(keep))
            .build()
            .unwrap();
        agent.send("hi").await.unwrap();
        let system = model.requests()[0].system.clone().unwrap_or_default();
        assert!(system.starts_with("Be brief."), "{system}");
        let heading = "# Instructions from the MCP server `ev`\n# Everything Server";
        assert_eq!(system.contains(heading), keep, "{system}");
        agent.close().await;
    }
}

#[tokio::test]
async fn a_message_attaches_the_resources_it_mentions() {
    let Some(entry) = everything_entry() else {
        return;
    };
    let mcp = connect_mcp([("ev", entry)], ConnectOptions::default())
        .await
        .unwrap();
    let message = mcp
        .message_with_resources(
            "Compare @ev:demo://resource/dynamic/text/1 and @ev:demo://resource/dynamic/blob/2, not @nobody:x.",
        )
        .await
        .unwrap();
    assert_eq!(message.role, Role::User);
    assert!(message.parts[0].clone() == Part::Text { text: "Compare @ev:demo://resource/dynamic/text/1 and @ev:demo://resource/dynamic/blob/2, not @nobody:x.".into() });
    assert_eq!(message.parts.len(), 3, "{:?}", message.parts);
    assert!(
        matches!(&message.parts[1], Part::Text { text } if text.starts_with("[resource ev:demo://resource/dynamic/text/1]")),
        "{:?}",
        message.parts[1]
    );
    let err = mcp
        .message_with_resources("@ev:demo://resource/dynamic/text/0")
        .await
        .unwrap_err();
    assert!(matches!(err, McpError::Request { .. }), "{err:?}");
    mcp.close().await;
}
