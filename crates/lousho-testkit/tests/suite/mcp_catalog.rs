//! The catalog (#13): tool manifests recorded after every listing, servers
//! with a fresh manifest connected only when one of their tools is called.

use super::fixture::{call, capture_logs, fixture, logged_pids, scratch};
use lousho::mcp::{ConnectOptions, McpClient, ServerStatus, ToolFingerprint};
use lousho::mcp::{
    DiskManifestStore, ManifestStore, MemoryManifestStore, ServerIdentity, ToolManifest,
};
use lousho::tool::ToolSource;
use lousho::{Agent, McpServer};
use serde_json::json;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// The fixture, logging its spawns to `log`.
fn counted(log: &Path) -> McpServer {
    fixture("serve").env("FIXTURE_SPAWN_LOG", log.display().to_string())
}

fn spawns(log: &Path) -> usize {
    logged_pids(log, "serve").len()
}

fn client(entry: McpServer, store: Arc<dyn ManifestStore>) -> McpClient {
    McpClient::new([("fx", entry)], ConnectOptions::new().manifests(store))
}

/// Connects `entry` once with `store`, which records its manifest.
async fn record(entry: &McpServer, store: &Arc<dyn ManifestStore>) {
    let mcp = client(entry.clone(), store.clone());
    mcp.connect_all().await.unwrap();
    mcp.close().await;
    assert!(store.load(&ServerIdentity::of(entry)).is_some(), "recorded");
}

#[tokio::test]
async fn a_server_with_a_fresh_manifest_is_spawned_only_when_a_tool_is_called() {
    let dir = scratch("catalog-lazy");
    let log = dir.join("spawns");
    let store: Arc<dyn ManifestStore> = Arc::new(DiskManifestStore::new(dir.join("cache")));
    let entry = counted(&log);
    record(&entry, &store).await;
    assert_eq!(spawns(&log), 1);

    let mcp = client(entry.clone(), store.clone());
    ToolSource::ready(&mcp).await.unwrap();
    assert_eq!(spawns(&log), 1, "not spawned at ready()");
    assert_eq!(mcp.status()["fx"], ServerStatus::Cataloged);
    let tools = mcp.tools();
    let echo = tools.get("fx__echo").expect("offered from the manifest");
    assert_eq!(echo.spec().display_name.as_deref(), Some("Echo"));
    assert!(mcp.listed_at("fx").unwrap().is_some());
    assert_eq!(spawns(&log), 1, "still not spawned");

    // Two calls at once share one connect.
    let (a, b) = tokio::join!(
        call(echo, json!({"text": "one"})),
        call(echo, json!({"text": "two"}))
    );
    assert!(!a.is_error && !b.is_error, "{a:?} {b:?}");
    assert_eq!(a.to_model_text(), "one");
    assert_eq!(spawns(&log), 2, "spawned once, for the first call");
    assert_eq!(mcp.status()["fx"], ServerStatus::Connected);
    mcp.close().await;
    assert_eq!(
        mcp.status()["fx"],
        ServerStatus::Cataloged,
        "known again after close"
    );
}

#[tokio::test]
async fn an_agent_offers_cataloged_tools_and_connects_on_the_first_call() {
    let dir = scratch("catalog-agent");
    let log = dir.join("spawns");
    let store: Arc<dyn ManifestStore> = Arc::new(MemoryManifestStore::new());
    let entry = counted(&log);
    record(&entry, &store).await;
    let model = lousho::model::testing::ScriptedModel::new([
        lousho::model::testing::ScriptedTurn::tool_call("fx__echo", json!({"text": "hi"})),
        lousho::model::testing::ScriptedTurn::text("done"),
    ]);
    let agent = Agent::builder()
        .model(model)
        .mcp_server("fx", entry)
        .manifests(store)
        .build()
        .unwrap();
    agent.ready().await.unwrap();
    assert!(agent.tools().unwrap().contains("fx__echo"));
    assert_eq!(spawns(&log), 1, "ready() spawned nothing");
    let reply = agent.send("go").await.unwrap();
    assert_eq!(reply.tool_calls[0].output.to_model_text(), "hi");
    assert_eq!(spawns(&log), 2);
    agent.close().await;
}

#[tokio::test]
async fn a_changed_entry_does_not_reuse_the_manifest() {
    let dir = scratch("catalog-changed");
    let log = dir.join("spawns");
    let store: Arc<dyn ManifestStore> = Arc::new(MemoryManifestStore::new());
    let entry = counted(&log);
    record(&entry, &store).await;
    for changed in [
        entry.clone().arg("--tag=other-args"),
        entry.clone().env("EXTRA", "1"),
        entry.clone().cwd(&dir),
    ] {
        let before = spawns(&log);
        let mcp = client(changed, store.clone());
        assert_eq!(mcp.status()["fx"], ServerStatus::Idle, "no manifest for it");
        ToolSource::ready(&mcp).await.unwrap();
        assert_eq!(spawns(&log), before + 1, "connected at ready()");
        mcp.close().await;
    }
}

#[tokio::test]
async fn preload_and_an_old_manifest_connect_at_ready() {
    let dir = scratch("catalog-preload");
    let log = dir.join("spawns");
    let store: Arc<dyn ManifestStore> = Arc::new(MemoryManifestStore::new());
    let entry = counted(&log);
    record(&entry, &store).await;

    let mcp = client(entry.clone().preload(true), store.clone());
    ToolSource::ready(&mcp).await.unwrap();
    assert_eq!(mcp.status()["fx"], ServerStatus::Connected);
    mcp.close().await;

    let old = McpClient::new(
        [("fx", entry.clone())],
        ConnectOptions::new()
            .manifests(store.clone())
            .manifest_max_age(Duration::ZERO),
    );
    assert_eq!(old.status()["fx"], ServerStatus::Idle, "too old to use");
    ToolSource::ready(&old).await.unwrap();
    assert_eq!(old.status()["fx"], ServerStatus::Connected);
    old.close().await;
    assert_eq!(spawns(&log), 3);
}

#[tokio::test]
async fn a_corrupt_manifest_is_ignored_with_a_warning_and_rewritten() {
    let dir = scratch("catalog-corrupt");
    let log = dir.join("spawns");
    let disk = DiskManifestStore::new(dir.join("cache"));
    let store: Arc<dyn ManifestStore> = Arc::new(disk.clone());
    let entry = counted(&log);
    record(&entry, &store).await;
    let path = disk.path_of(&ServerIdentity::of(&entry));
    std::fs::write(&path, "{ not json").unwrap();

    let (logs, _guard) = capture_logs();
    let mcp = client(entry.clone(), store.clone());
    assert_eq!(mcp.status()["fx"], ServerStatus::Idle);
    ToolSource::ready(&mcp).await.unwrap();
    assert_eq!(
        mcp.status()["fx"],
        ServerStatus::Connected,
        "connected instead"
    );
    let text = logs.text();
    assert!(
        text.contains("WARN") && text.contains("ignoring the tool manifest"),
        "{text}"
    );
    mcp.close().await;
    let rewritten: ToolManifest =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert!(rewritten.tool_names().any(|n| n == "echo"));

    // A manifest whose tool does not match its fingerprint is not used either.
    let mut value: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    value["tools"][0]["definition"]["description"] = json!("tampered");
    std::fs::write(&path, value.to_string()).unwrap();
    let mcp = client(entry, store);
    assert_eq!(mcp.status()["fx"], ServerStatus::Idle);
    assert!(
        logs.text().contains("does not match its fingerprint"),
        "{}",
        logs.text()
    );
}

#[tokio::test]
async fn a_tool_that_vanished_gets_an_error_result_naming_it() {
    let dir = scratch("catalog-vanished");
    let log = dir.join("spawns");
    let store: Arc<dyn ManifestStore> = Arc::new(MemoryManifestStore::new());
    let entry = counted(&log);
    record(&entry, &store).await;
    // The manifest says the server had a tool `gone`; the server no longer does.
    let identity = ServerIdentity::of(&entry);
    let mut value = serde_json::to_value(store.load(&identity).unwrap()).unwrap();
    let gone: lousho::mcp::rmcp::model::Tool = serde_json::from_value(json!({
        "name": "gone", "description": "Was here", "inputSchema": {"type": "object"}
    }))
    .unwrap();
    value["tools"].as_array_mut().unwrap().push(json!({
        "fingerprint": ToolFingerprint::of(&gone),
        "definition": gone,
    }));
    let manifest: ToolManifest = serde_json::from_value(value).unwrap();
    store.save(&identity, &manifest).unwrap();

    let mcp = client(entry, store.clone());
    let tools = mcp.tools();
    let gone = tools.get("fx__gone").expect("offered from the manifest");
    let out = call(gone, json!({})).await;
    assert!(out.is_error);
    let text = out.to_model_text();
    assert!(
        text.contains("no longer has the tool `gone`") && text.contains("`fx`"),
        "{text}"
    );
    assert!(
        !mcp.tools().contains("fx__gone"),
        "the next request has the live list"
    );
    assert!(
        !store
            .load(&identity)
            .unwrap()
            .tool_names()
            .any(|n| n == "gone"),
        "the manifest is updated"
    );
    mcp.close().await;
}

#[tokio::test]
async fn a_list_changed_refresh_updates_the_manifest() {
    let dir = scratch("catalog-changed-list");
    let log = dir.join("spawns");
    let store: Arc<dyn ManifestStore> = Arc::new(MemoryManifestStore::new());
    let entry = counted(&log);
    let mcp = client(entry.clone(), store.clone());
    mcp.connect_all().await.unwrap();
    let identity = ServerIdentity::of(&entry);
    assert!(
        !store
            .load(&identity)
            .unwrap()
            .tool_names()
            .any(|n| n == "fresh")
    );
    let out = call(
        mcp.tools().get("fx__add_tool").unwrap(),
        json!({"text": "fresh"}),
    )
    .await;
    assert!(!out.is_error, "{out:?}");
    // The call waits for the announced refresh before it returns.
    assert!(mcp.tools().contains("fx__fresh"));
    let manifest = store.load(&identity).unwrap();
    assert!(
        manifest.tool_names().any(|n| n == "fresh"),
        "{:?}",
        manifest.tool_names().collect::<Vec<_>>()
    );
    assert_eq!(
        manifest.server_info.as_ref().unwrap()["name"],
        "lousho-fixture"
    );
    assert!(manifest.protocol_version.is_some());
    mcp.close().await;
}

#[test]
fn concurrent_writers_leave_a_whole_file() {
    let dir = scratch("catalog-writers");
    let store = Arc::new(DiskManifestStore::new(dir.join("cache")));
    let entry = McpServer::stdio("srv");
    let identity = ServerIdentity::of(&entry);
    let manifest = |n: usize| -> ToolManifest {
        let tools: Vec<_> = (0..n)
            .map(|i| {
                let tool: lousho::mcp::rmcp::model::Tool = serde_json::from_value(json!({
                    "name": format!("t{i}"), "description": "x".repeat(2000), "inputSchema": {"type": "object"}
                }))
                .unwrap();
                json!({"fingerprint": ToolFingerprint::of(&tool), "definition": tool})
            })
            .collect();
        serde_json::from_value(
            json!({"format": 1, "identity": identity, "fetchedAtMs": 1, "tools": tools}),
        )
        .unwrap()
    };
    let writers: Vec<_> = [50, 80]
        .into_iter()
        .map(|n| {
            let store = store.clone();
            let (identity, manifest) = (identity.clone(), manifest(n));
            std::thread::spawn(move || {
                for _ in 0..30 {
                    store.save(&identity, &manifest).unwrap();
                }
            })
        })
        .collect();
    let mut reads = 0;
    while writers.iter().any(|w| !w.is_finished()) {
        if let Some(m) = store.load(&identity) {
            assert!(m.tools.len() == 50 || m.tools.len() == 80);
            reads += 1;
        }
    }
    for w in writers {
        w.join().unwrap();
    }
    let last = store.load(&identity).unwrap();
    assert!(last.tools.len() == 50 || last.tools.len() == 80);
    let leftovers: Vec<_> = std::fs::read_dir(dir.join("cache"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "no temp files left");
    let _ = reads;
}

#[tokio::test]
async fn a_servers_ttl_bounds_its_manifests_age() {
    let dir = scratch("catalog-ttl");
    let log = dir.join("spawns");
    let store: Arc<dyn ManifestStore> = Arc::new(MemoryManifestStore::new());
    // ttlMs 0: the list is stale at once, so the manifest never saves a start.
    let entry = counted(&log).env("FIXTURE_TTL_MS", "0");
    record(&entry, &store).await;
    let manifest = store.load(&ServerIdentity::of(&entry)).unwrap();
    assert_eq!(manifest.ttl_ms, Some(0));
    let mcp = client(entry.clone(), store.clone());
    assert_eq!(
        mcp.status()["fx"],
        ServerStatus::Idle,
        "the manifest is stale"
    );
    ToolSource::ready(&mcp).await.unwrap();
    assert_eq!(spawns(&log), 2, "connected at ready()");
    mcp.close().await;
    // A day-long ttl keeps it fresh (the 7-day max age is longer).
    let entry = counted(&log).env("FIXTURE_TTL_MS", "86400000");
    record(&entry, &store).await;
    let mcp = client(entry, store.clone());
    assert_eq!(mcp.status()["fx"], ServerStatus::Cataloged);
    mcp.close().await;
}
