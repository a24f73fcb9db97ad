//! `serve_mcp` serving resources, resource templates, prompts and
//! completion beside its tools, and announcing changes made while serving
//! (`ServerCatalog`), driven by rmcp's client over stateful HTTP.

use lousho::mcp::{
    CompletionRequest, HttpOptions, PromptMessage, ResourceContent, ResourceError, define_prompt,
    define_resource, define_resource_template,
};
use lousho::{Agent, ServeOptions, define_tool, serve_mcp};
use rmcp::model::{
    ErrorCode, GetPromptRequestParams, PaginatedRequestParams, ReadResourceRequestParams,
    ResourceContents, ResourceUpdatedNotificationParam, SubscribeRequestParams,
    UnsubscribeRequestParams, object,
};
use rmcp::service::{NotificationContext, RoleClient, RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, ServiceExt};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::mpsc;

#[lousho::tool_input]
#[derive(Deserialize)]
struct Greeting {
    /// Who to greet.
    name: String,
    /// How (optional).
    style: Option<String>,
}

#[derive(Deserialize)]
struct Row {
    table: String,
    id: String,
}

fn options() -> ServeOptions {
    let agent = Agent::builder().model("test").build().unwrap();
    ServeOptions::new(agent)
        .name("offers")
        .resource(
            define_resource("test://a-text", "text", |_ctx| async { "hello" })
                .mime_type("text/plain")
                .description("Some text"),
        )
        .resource(define_resource("test://b-bytes", "bytes", |_ctx| async {
            ResourceContent::bytes(vec![0u8, 1, 2, 255]).with_mime_type("application/octet-stream")
        }))
        .resource(define_resource("test://c-broken", "broken", |_ctx| async {
            Err::<String, _>("the disk is gone")
        }))
        .resource(define_resource("test://d-gone", "gone", |_ctx| async {
            Err::<String, _>(ResourceError::NotFound {
                uri: "test://d-gone".to_owned(),
            })
        }))
        .resource_template(
            define_resource_template("db://{table}/{id}", "row", |row: Row, _ctx| async move {
                format!("{} #{}", row.table, row.id)
            })
            .mime_type("text/plain")
            .complete(|r: CompletionRequest| async move {
                let tables = ["users", "orders", "outbox"];
                match r.argument.as_str() {
                    "table" => tables
                        .into_iter()
                        .filter(|t| t.starts_with(&r.value))
                        .map(str::to_owned)
                        .collect(),
                    _ => vec![format!(
                        "{}-1",
                        r.context.get("table").cloned().unwrap_or_default()
                    )],
                }
            }),
        )
        .prompt(
            define_prompt("greet", "Greets someone", |g: Greeting| async move {
                vec![
                    PromptMessage::user(format!(
                        "Greet {} {}",
                        g.name,
                        g.style.as_deref().unwrap_or("plainly")
                    )),
                    PromptMessage::assistant("Hello!"),
                ]
            })
            .complete(|r: CompletionRequest| async move {
                ["Ada", "Alan", "Grace"]
                    .into_iter()
                    .filter(|n| n.starts_with(&r.value))
                    .map(str::to_owned)
                    .collect()
            }),
        )
        .page_size(2)
        .http(HttpOptions::new().port(0).stateful(true))
}

/// A client that forwards the notifications it gets.
#[derive(Clone)]
struct Heard(mpsc::UnboundedSender<String>);

impl ClientHandler for Heard {
    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _cx: NotificationContext<RoleClient>,
    ) {
        let _ = self.0.send(format!("updated {}", params.uri));
    }

    async fn on_tool_list_changed(&self, _cx: NotificationContext<RoleClient>) {
        let _ = self.0.send("tools changed".to_owned());
    }

    async fn on_resource_list_changed(&self, _cx: NotificationContext<RoleClient>) {
        let _ = self.0.send("resources changed".to_owned());
    }

    async fn on_prompt_list_changed(&self, _cx: NotificationContext<RoleClient>) {
        let _ = self.0.send("prompts changed".to_owned());
    }
}

async fn client(
    url: &str,
) -> (
    RunningService<RoleClient, Heard>,
    mpsc::UnboundedReceiver<String>,
) {
    let (tx, rx) = mpsc::unbounded_channel();
    let c = Heard(tx)
        .serve(StreamableHttpClientTransport::from_uri(url.to_owned()))
        .await
        .unwrap();
    (c, rx)
}

fn code(e: ServiceError) -> ErrorCode {
    match e {
        ServiceError::McpError(e) => e.code,
        other => panic!("not an MCP error: {other}"),
    }
}

fn text(c: &ResourceContents) -> (&str, Option<&str>) {
    match c {
        ResourceContents::TextResourceContents {
            text, mime_type, ..
        } => (text.as_str(), mime_type.as_deref()),
        other => panic!("not text: {other:?}"),
    }
}

#[tokio::test]
async fn resources_are_listed_in_pages_and_read() {
    let server = serve_mcp(options()).await.unwrap();
    let (c, _rx) = client(&server.url().unwrap()).await;
    let caps = c.peer_info().unwrap().capabilities.clone();
    let resources = caps.resources.expect("resources declared");
    assert_eq!(resources.subscribe, Some(true));
    assert!(caps.prompts.is_some() && caps.completions.is_some());

    let first = c.list_resources(None).await.unwrap();
    let uris: Vec<_> = first.resources.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(uris, ["test://a-text", "test://b-bytes"]);
    assert_eq!(first.resources[0].description.as_deref(), Some("Some text"));
    let cursor = first.next_cursor.expect("a second page");
    let second = c
        .list_resources(Some(
            PaginatedRequestParams::default().with_cursor(Some(cursor)),
        ))
        .await
        .unwrap();
    let uris: Vec<_> = second.resources.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(uris, ["test://c-broken", "test://d-gone"]);
    assert_eq!(second.next_cursor, None);
    assert_eq!(c.list_all_resources().await.unwrap().len(), 4);

    let read = |uri: &str| c.read_resource(ReadResourceRequestParams::new(uri));
    let r = read("test://a-text").await.unwrap();
    assert_eq!(text(&r.contents[0]), ("hello", Some("text/plain")));
    let r = read("test://b-bytes").await.unwrap();
    match &r.contents[0] {
        ResourceContents::BlobResourceContents {
            blob,
            mime_type,
            uri,
            ..
        } => {
            assert_eq!(blob, "AAEC/w==");
            assert_eq!(mime_type.as_deref(), Some("application/octet-stream"));
            assert_eq!(uri, "test://b-bytes");
        }
        other => panic!("not a blob: {other:?}"),
    }
    assert_eq!(
        code(read("test://nothing").await.unwrap_err()),
        ErrorCode::RESOURCE_NOT_FOUND
    );
    assert_eq!(
        code(read("test://d-gone").await.unwrap_err()),
        ErrorCode::RESOURCE_NOT_FOUND
    );
    assert_eq!(
        code(read("test://c-broken").await.unwrap_err()),
        ErrorCode::INTERNAL_ERROR
    );

    let templates = c.list_all_resource_templates().await.unwrap();
    assert_eq!(templates[0].uri_template, "db://{table}/{id}");
    let r = read("db://users/42").await.unwrap();
    assert_eq!(text(&r.contents[0]), ("users #42", Some("text/plain")));
    assert_eq!(r.contents.len(), 1);
    assert_eq!(
        code(read("db://users/42/more").await.unwrap_err()),
        ErrorCode::RESOURCE_NOT_FOUND
    );

    let info = c
        .complete_resource_argument("db://{table}/{id}", "table", "o", None)
        .await
        .unwrap();
    assert_eq!(info.values, ["orders", "outbox"]);
    let info = c
        .complete_resource_argument(
            "db://{table}/{id}",
            "id",
            "",
            Some(rmcp::model::CompletionContext::with_arguments(
                [("table".to_owned(), "users".to_owned())].into(),
            )),
        )
        .await
        .unwrap();
    assert_eq!(info.values, ["users-1"]);
    let err = c
        .complete_resource_argument("db://{table}/{id}", "nope", "", None)
        .await
        .unwrap_err();
    assert_eq!(code(err), ErrorCode::INVALID_PARAMS);
    drop(c);
    server.close().await.unwrap();
}

#[tokio::test]
async fn prompts_take_typed_arguments_and_complete_them() {
    let server = serve_mcp(options()).await.unwrap();
    let (c, _rx) = client(&server.url().unwrap()).await;
    let prompts = c.list_all_prompts().await.unwrap();
    assert_eq!(prompts.len(), 1);
    let args = prompts[0].arguments.as_ref().unwrap();
    let listed: Vec<_> = args
        .iter()
        .map(|a| (a.name.as_str(), a.description.as_deref(), a.required))
        .collect();
    assert_eq!(
        listed,
        [
            ("name", Some("Who to greet."), Some(true)),
            ("style", Some("How (optional)."), Some(false)),
        ]
    );

    let got = c
        .get_prompt(
            GetPromptRequestParams::new("greet").with_arguments(object(json!({"name": "Ada"}))),
        )
        .await
        .unwrap();
    let wire = serde_json::to_value(&got.messages).unwrap();
    assert_eq!(
        wire,
        json!([
            {"role": "user", "content": {"type": "text", "text": "Greet Ada plainly"}},
            {"role": "assistant", "content": {"type": "text", "text": "Hello!"}},
        ])
    );
    assert_eq!(got.description.as_deref(), Some("Greets someone"));

    let err = c
        .get_prompt(GetPromptRequestParams::new("greet"))
        .await
        .unwrap_err();
    let ServiceError::McpError(e) = err else {
        panic!("{err}")
    };
    assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
    assert!(e.message.contains("name"), "{}", e.message);
    let err = c
        .get_prompt(GetPromptRequestParams::new("nope"))
        .await
        .unwrap_err();
    assert_eq!(code(err), ErrorCode::INVALID_PARAMS);

    let info = c
        .complete_prompt_argument("greet", "name", "A", None)
        .await
        .unwrap();
    assert_eq!(info.values, ["Ada", "Alan"]);
    assert_eq!(info.has_more, Some(false));
    drop(c);
    server.close().await.unwrap();
}

#[tokio::test]
async fn nothing_offered_declares_nothing() {
    let agent = Agent::builder().model("test").build().unwrap();
    let server = serve_mcp(ServeOptions::new(agent).http(HttpOptions::new().port(0)))
        .await
        .unwrap();
    let (c, _rx) = client(&server.url().unwrap()).await;
    let caps = c.peer_info().unwrap().capabilities.clone();
    assert!(caps.resources.is_none() && caps.prompts.is_none() && caps.completions.is_none());
    assert_eq!(caps.tools.unwrap().list_changed, Some(true));
    let err = c.list_resources(None).await.unwrap_err();
    assert_eq!(code(err), ErrorCode::METHOD_NOT_FOUND);
    drop(c);
    server.close().await.unwrap();
}

#[tokio::test]
#[allow(deprecated)] // resources/subscribe: the 2025-11-25 way
async fn changes_while_serving_are_announced() {
    let server = serve_mcp(options()).await.unwrap();
    let (c, mut heard) = client(&server.url().unwrap()).await;
    let catalog = server.catalog().clone();

    // Subscribed URIs hear of updates; unsubscribed ones do not (the one
    // after it arrives first).
    c.subscribe(SubscribeRequestParams::new("test://a-text"))
        .await
        .unwrap();
    c.subscribe(SubscribeRequestParams::new("db://users/1"))
        .await
        .unwrap();
    let err = c
        .subscribe(SubscribeRequestParams::new("test://nothing"))
        .await
        .unwrap_err();
    assert_eq!(code(err), ErrorCode::RESOURCE_NOT_FOUND);
    c.unsubscribe(UnsubscribeRequestParams::new("db://users/1"))
        .await
        .unwrap();
    catalog.resource_updated("db://users/1").await;
    catalog.resource_updated("test://b-bytes").await;
    catalog.resource_updated("test://a-text").await;
    assert_eq!(heard.recv().await.unwrap(), "updated test://a-text");

    let names = || async {
        c.list_all_tools()
            .await
            .unwrap()
            .into_iter()
            .map(|t| t.name.to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(names().await, ["offers"]);
    catalog
        .add_tools(define_tool(
            "late",
            "Added while serving",
            |_: Value| async { "ok" },
        ))
        .await
        .unwrap();
    assert_eq!(heard.recv().await.unwrap(), "tools changed");
    assert_eq!(names().await, ["offers", "late"]);
    assert!(catalog.remove_tool("late").await);
    assert_eq!(heard.recv().await.unwrap(), "tools changed");
    assert!(!catalog.remove_tool("late").await);

    catalog
        .add_resource(define_resource("test://e-new", "new", |_ctx| async {
            "new"
        }))
        .await
        .unwrap();
    assert_eq!(heard.recv().await.unwrap(), "resources changed");
    assert!(catalog.remove_prompt("greet").await);
    assert_eq!(heard.recv().await.unwrap(), "prompts changed");
    assert!(c.list_all_prompts().await.unwrap().is_empty());
    drop(c);
    server.close().await.unwrap();
}

/// The next notification on `sub`, triggering it with `poke` until it comes:
/// a listen stream is registered just after the client has its
/// acknowledgment, so the first poke may come before it.
async fn next_after(
    sub: &mut rmcp::service::Subscription,
    mut poke: impl AsyncFnMut(),
) -> rmcp::model::ServerNotification {
    for _ in 0..200 {
        poke().await;
        if let Ok(note) =
            tokio::time::timeout(std::time::Duration::from_millis(50), sub.next()).await
        {
            return note.unwrap().expect("the stream ended");
        }
    }
    panic!("no notification on the listen stream");
}

#[tokio::test]
async fn a_2026_07_28_client_hears_changes_on_its_listen_stream() {
    use rmcp::model::{ProtocolVersion, ServerNotification, SubscriptionFilter};
    use rmcp::service::{ClientLifecycleMode, ClientServiceExt};

    let server = serve_mcp(options().http(HttpOptions::new().port(0)))
        .await
        .unwrap();
    let c = ()
        .serve_with_lifecycle(
            StreamableHttpClientTransport::from_uri(server.url().unwrap()),
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::LATEST],
            },
        )
        .await
        .unwrap();
    let mut sub = c
        .peer()
        .listen(
            SubscriptionFilter::builder()
                .tools_list_changed()
                .resource_subscription("test://a-text")
                .build(),
        )
        .await
        .unwrap();
    let catalog = server.catalog().clone();
    let note = next_after(&mut sub, async || {
        // Not in the filter: never delivered, so the first note is a-text.
        catalog.resource_updated("test://b-bytes").await;
        catalog.resource_updated("test://a-text").await;
    })
    .await;
    let ServerNotification::ResourceUpdatedNotification(n) = note else {
        panic!("{note:?}")
    };
    assert_eq!(n.params.uri, "test://a-text");
    catalog
        .add_tools(define_tool(
            "late",
            "Added while serving",
            |_: Value| async { "ok" },
        ))
        .await
        .unwrap();
    // Updates poked before may still be queued; the tool change follows them.
    loop {
        match sub.next().await.unwrap().expect("the stream ended") {
            ServerNotification::ResourceUpdatedNotification(_) => continue,
            ServerNotification::ToolListChangedNotification(_) => break,
            other => panic!("{other:?}"),
        }
    }
    drop(sub);
    drop(c);
    server.close().await.unwrap();
}
