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

/// `serve.limits.perCaller` over stdio (issue 33): the one client's run past
/// the minute's limit gets an `isError` result naming the limit, and the
/// audit line (`lousho::audit` on stderr) says `rate_limited`.
#[tokio::test]
async fn over_stdio_a_run_past_the_callers_limit_gets_an_error_result() {
    let (_dir, spec) = super::common::spec_file(
        "chat.yaml",
        "name: chat\nmodel: test\nserve:\n  limits:\n    perCaller:\n      runsPerMinute: 1\n",
    );
    let cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_lousho")).configure(|c| {
        c.args(["mcp", &spec])
            .env("LOUSHO_LOG", "warn,lousho::audit=info")
            .env_remove("LOUSHO_STORE");
    });
    let (transport, stderr) = TokioChildProcess::builder(cmd)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let client = ().serve(transport).await.unwrap();
    let ask = || {
        let args = json!({"message": "hello"}).as_object().cloned().unwrap();
        client.call_tool(CallToolRequestParams::new("chat").with_arguments(args))
    };
    let first = ask().await.unwrap();
    assert_ne!(first.is_error, Some(true), "{first:?}");
    let second = ask().await.unwrap();
    assert_eq!(second.is_error, Some(true), "{second:?}");
    let text = serde_json::to_string(&second.content).unwrap();
    assert!(text.contains("runsPerMinute"), "{text}");
    client.cancel().await.unwrap();
    // The server exits once its stdin closes: its stderr ends.
    let mut logs = String::new();
    tokio::io::AsyncReadExt::read_to_string(&mut stderr.unwrap(), &mut logs)
        .await
        .unwrap();
    let audit: Vec<&str> = logs
        .lines()
        .filter(|l| l.contains(" tools/call ") && l.contains("tool=\"chat\""))
        .collect();
    assert_eq!(audit.len(), 2, "{logs}");
    assert!(
        audit[0].contains("decision=\"allowed\"") && audit[0].contains("outcome=\"ok\""),
        "{logs}"
    );
    assert!(audit[1].contains("decision=\"rate_limited\""), "{logs}");
}
