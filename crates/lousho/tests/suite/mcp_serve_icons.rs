//! Titles and icons on what `serve_mcp` lists (the server, its agent tool,
//! a direct tool, a resource, a template, a prompt), and a tool answering
//! with a `resource_link`, as rmcp's client sees them.

use lousho::mcp::{
    HttpOptions, Icon, IconTheme, define_prompt, define_resource, define_resource_template,
};
use lousho::tool::{Content, ToolOutput};
use lousho::{Agent, ServeOptions, define_tool, serve_mcp};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, ContentBlock};
use rmcp::transport::StreamableHttpClientTransport;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Deserialize)]
struct Page {
    #[allow(dead_code)]
    n: String,
}

#[lousho::tool_input]
#[derive(Deserialize)]
struct NoArgs {}

fn icon(name: &str) -> Icon {
    Icon::new(format!("https://example.com/{name}.svg"))
        .mime_type("image/svg+xml")
        .sizes(["any"])
}

#[tokio::test]
async fn titles_icons_and_resource_links_reach_the_client() {
    let agent = Agent::builder().model("test").build().unwrap();
    let linker = define_tool("find_report", "Finds the report", |_: Value| async {
        ToolOutput::from_content(vec![Content::resource_link("docs://report", "report")])
    })
    .read_only()
    .display_name("Find the report")
    .icon(icon("find"));
    let server = serve_mcp(
        ServeOptions::new(agent)
            .name("iconic")
            .title("The Iconic Agent")
            .icon(icon("agent").theme(IconTheme::Dark))
            .tool(linker)
            .resource(
                define_resource("docs://report", "report", |_ctx| async { "all good" })
                    .title("The report")
                    .icon(icon("report")),
            )
            .resource_template(
                define_resource_template("pages://{n}", "page", |_: Page, _ctx| async { "p" })
                    .title("A page")
                    .icon(icon("page")),
            )
            .prompt(
                define_prompt("hello", "Says hello", |_: NoArgs| async { "hello" })
                    .title("Hello")
                    .icon(icon("hello")),
            )
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
    let src = |v: Value| v["icons"][0]["src"].clone();

    let info = serde_json::to_value(c.peer_info().unwrap()).unwrap();
    assert_eq!(info["serverInfo"]["title"], "The Iconic Agent", "{info}");
    assert_eq!(
        info["serverInfo"]["icons"][0],
        json!({"src": "https://example.com/agent.svg", "mimeType": "image/svg+xml", "sizes": ["any"], "theme": "dark"})
    );

    let tools = serde_json::to_value(c.list_all_tools().await.unwrap()).unwrap();
    let by_name = |name: &str| {
        tools
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .cloned()
            .unwrap()
    };
    assert_eq!(by_name("iconic")["title"], "The Iconic Agent");
    assert_eq!(src(by_name("iconic")), "https://example.com/agent.svg");
    assert_eq!(by_name("find_report")["title"], "Find the report");
    assert_eq!(src(by_name("find_report")), "https://example.com/find.svg");

    let resources = serde_json::to_value(c.list_all_resources().await.unwrap()).unwrap();
    assert_eq!(resources[0]["title"], "The report");
    assert_eq!(src(resources[0].clone()), "https://example.com/report.svg");
    let templates = serde_json::to_value(c.list_all_resource_templates().await.unwrap()).unwrap();
    assert_eq!(templates[0]["title"], "A page");
    assert_eq!(src(templates[0].clone()), "https://example.com/page.svg");
    let prompts = serde_json::to_value(c.list_all_prompts().await.unwrap()).unwrap();
    assert_eq!(prompts[0]["title"], "Hello");
    assert_eq!(src(prompts[0].clone()), "https://example.com/hello.svg");

    let called = c
        .call_tool(CallToolRequestParams::new("find_report"))
        .await
        .unwrap();
    let ContentBlock::ResourceLink(link) = &called.content[0] else {
        panic!("{called:?}")
    };
    assert_eq!(
        (link.uri.as_str(), link.name.as_str()),
        ("docs://report", "report")
    );
    drop(c);
    server.close().await.unwrap();
}
