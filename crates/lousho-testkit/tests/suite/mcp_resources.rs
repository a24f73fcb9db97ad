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
use lousho::model::{Part, Role};
use lousho::{McpServer, connect_mcp};
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
