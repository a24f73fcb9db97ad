use super::common::example;
use lousho::mcp::rmcp::ServiceExt;
use lousho::mcp::rmcp::model::CallToolRequestParams;
use lousho::mcp::rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::json;

#[tokio::test]
async fn lousho_mcp_over_stdio_answers_a_real_mcp_client() {
    let cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_lousho")).configure(|c| {
        c.args(["mcp", &example("files.yaml")])
            .env("LOUSHO_LOG", "warn");
    });
    let client = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();
    let mut names: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    names.sort();
    assert_eq!(names, ["files", "list_dir", "read_file"]);

    let args = json!({"path": "files.yaml"}).as_object().cloned().unwrap();
    let result = client
        .call_tool(CallToolRequestParams::new("read_file").with_arguments(args))
        .await
        .unwrap();
    assert_ne!(result.is_error, Some(true));
    let text = serde_json::to_string(&result.content).unwrap();
    assert!(text.contains("A small file-reading agent"), "{text}");

    let args = json!({"message": "hello"}).as_object().cloned().unwrap();
    let result = client
        .call_tool(CallToolRequestParams::new("files").with_arguments(args))
        .await
        .unwrap();
    let text = serde_json::to_string(&result.content).unwrap();
    assert!(text.contains("Tool results"), "{text}");
    client.cancel().await.unwrap();
}
