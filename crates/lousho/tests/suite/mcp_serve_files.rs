//! A workspace's files served as `file://` resources (`WorkspaceFiles`):
//! listed as the file tools' walk sees them, read through their sandbox
//! with the same refusals, and announced to subscribers when they change.

use super::builtins_fs::{call, tree};
use lousho::builtin::{FsLimits, Workspace, fs_tools};
use lousho::mcp::{HttpOptions, WorkspaceFiles};
use lousho::{Agent, ServeOptions, serve_mcp};
use rmcp::model::{
    ArgumentInfo, CompleteRequestParams, ErrorCode, ReadResourceRequestParams, Reference,
    ResourceContents, ResourceUpdatedNotificationParam, SubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RoleClient, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, ServiceExt};
use serde_json::json;
use std::os::unix::fs::symlink;
use tokio::sync::mpsc;

#[derive(Clone)]
struct Updates(mpsc::UnboundedSender<String>);

impl ClientHandler for Updates {
    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _cx: NotificationContext<RoleClient>,
    ) {
        let _ = self.0.send(params.uri);
    }
}

fn mkfifo(path: &std::path::Path) {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
}

/// How a read went: text, bytes (base64) or an MCP error code.
#[derive(Debug, Clone, PartialEq)]
enum Read {
    Text(String, String),
    Blob(String),
    Error(ErrorCode),
}

#[tokio::test]
async fn workspace_files_are_listed_and_read_as_the_file_tools_allow() {
    let outside = tree(&[("secret.txt", b"outside\n")]);
    let dir = tree(&[
        ("docs/guide.md", b"# Guide\n"),
        ("img.bin", &[0u8, 159, 146, 150]),
        (".env", b"TOKEN=x\n"),
        ("big.txt", &[b'x'; 64]),
        ("notes.txt", b"notes\n"),
    ]);
    symlink(
        outside.path().join("secret.txt"),
        dir.path().join("leak.txt"),
    )
    .unwrap();
    mkfifo(&dir.path().join("pipe"));
    let mut limits = FsLimits::default();
    limits.resource_bytes = 32;
    let ws = Workspace::new(dir.path()).unwrap().with_limits(limits);
    let root = ws.root().to_string_lossy().into_owned();

    let agent = Agent::builder().model("test").build().unwrap();
    let server = serve_mcp(
        ServeOptions::new(agent)
            .files(WorkspaceFiles::all(&ws))
            .http(HttpOptions::new().port(0).stateful(true)),
    )
    .await
    .unwrap();
    let (tx, mut updates) = mpsc::unbounded_channel();
    let c = Updates(tx)
        .serve(StreamableHttpClientTransport::from_uri(
            server.url().unwrap(),
        ))
        .await
        .unwrap();

    // Listed: regular files the walk sees; not the hidden one, the link
    // out, or the FIFO.
    let listed: Vec<String> = c
        .list_all_resources()
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.name)
        .collect();
    assert_eq!(listed, ["big.txt", "docs/guide.md", "img.bin", "notes.txt"]);
    let templates = c.list_all_resource_templates().await.unwrap();
    assert_eq!(
        templates[0].uri_template,
        format!("file://{root}/{{+path}}")
    );

    let read = async |uri: String| match c.read_resource(ReadResourceRequestParams::new(uri)).await
    {
        Ok(r) => match &r.contents[0] {
            ResourceContents::TextResourceContents {
                text, mime_type, ..
            } => Read::Text(text.clone(), mime_type.clone().unwrap_or_default()),
            ResourceContents::BlobResourceContents { blob, .. } => Read::Blob(blob.clone()),
            other => panic!("{other:?}"),
        },
        Err(ServiceError::McpError(e)) => Read::Error(e.code),
        Err(e) => panic!("{e}"),
    };
    let tools = fs_tools(&ws).unwrap();
    let at = |rel: &str| format!("file://{root}/{rel}");
    // (URI, what the read gives, the path the file tools refuse too)
    let refused = Read::Error(ErrorCode::INVALID_PARAMS);
    let not_found = Read::Error(ErrorCode::RESOURCE_NOT_FOUND);
    let cases: Vec<(String, Read, Option<&str>)> = vec![
        (
            at("docs/guide.md"),
            Read::Text("# Guide\n".into(), "text/markdown".into()),
            None,
        ),
        (at("img.bin"), Read::Blob("AJ+Slg==".into()), None),
        (
            at("docs%2Fguide.md"),
            Read::Text("# Guide\n".into(), "text/markdown".into()),
            None,
        ),
        // `..` out of the workspace.
        (at("../x"), refused.clone(), Some("../x")),
        (at("docs/../../x"), refused.clone(), Some("docs/../../x")),
        // An absolute path outside, encoded into the template's path.
        (at("%2Fetc%2Fpasswd"), refused.clone(), Some("/etc/passwd")),
        // Not under the workspace's URI at all.
        ("file:///etc/passwd".into(), not_found.clone(), None),
        // A symbolic link out: refused like read_file refuses it.
        (at("leak.txt"), refused.clone(), Some("leak.txt")),
        // A FIFO is never opened (read_file refuses it too, without blocking).
        (at("pipe"), refused.clone(), Some("pipe")),
        // Longer than resource_bytes.
        (at("big.txt"), refused.clone(), None),
        // Hidden: neither listed nor read.
        (at(".env"), not_found.clone(), None),
        (at("missing.txt"), not_found.clone(), Some("missing.txt")),
    ];
    for (uri, want, tool_path) in cases {
        assert_eq!(read(uri.clone()).await, want, "{uri}");
        if let Some(path) = tool_path {
            let called = call(&tools, "read_file", json!({ "path": path })).await;
            assert!(
                called.is_error,
                "read_file {path} should fail: {}",
                called.text
            );
        }
    }

    // A subscribed file that changes is announced.
    #[allow(deprecated)] // resources/subscribe: the 2025-11-25 way
    c.subscribe(SubscribeRequestParams::new(at("notes.txt")))
        .await
        .unwrap();
    // The watcher notes the file as it is on its first check after the
    // subscription; keep changing it until the update comes.
    let got = tokio::time::timeout(std::time::Duration::from_secs(30), async {
        let mut n = 0;
        loop {
            n += 1;
            std::fs::write(dir.path().join("notes.txt"), "changed\n".repeat(n)).unwrap();
            if let Ok(Some(uri)) =
                tokio::time::timeout(std::time::Duration::from_millis(700), updates.recv()).await
            {
                return uri;
            }
        }
    })
    .await
    .expect("no update within 30 s");
    assert_eq!(got, at("notes.txt"));
    drop(c);
    server.close().await.unwrap();
}

#[tokio::test]
async fn globs_choose_the_files() {
    let dir = tree(&[
        ("docs/a.md", b"a"),
        ("docs/b.txt", b"b"),
        ("src/c.md", b"c"),
    ]);
    let ws = Workspace::new(dir.path()).unwrap();
    let root = ws.root().to_string_lossy().into_owned();
    let agent = Agent::builder().model("test").build().unwrap();
    let server = serve_mcp(
        ServeOptions::new(agent)
            .files(WorkspaceFiles::matching(&ws, &["docs/**/*.md"]).unwrap())
            .http(HttpOptions::new().port(0)),
    )
    .await
    .unwrap();
    let c = ()
        .serve(StreamableHttpClientTransport::from_uri(
            server.url().unwrap(),
        ))
        .await
        .unwrap();
    let listed: Vec<String> = c
        .list_all_resources()
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.uri)
        .collect();
    assert_eq!(listed, [format!("file://{root}/docs/a.md")]);
    // The template completes `path` with the files the globs choose.
    let done = c
        .complete(CompleteRequestParams::new(
            Reference::for_resource(format!("file://{root}/{{+path}}")),
            ArgumentInfo::new("path", "do"),
        ))
        .await
        .unwrap();
    assert_eq!(done.completion.values, ["docs/a.md"]);
    let err = c
        .read_resource(ReadResourceRequestParams::new(format!(
            "file://{root}/src/c.md"
        )))
        .await
        .unwrap_err();
    let ServiceError::McpError(e) = err else {
        panic!("{err}")
    };
    assert_eq!(e.code, ErrorCode::RESOURCE_NOT_FOUND);
    drop(c);
    server.close().await.unwrap();
}
