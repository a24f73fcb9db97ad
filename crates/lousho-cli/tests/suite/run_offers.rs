//! A server's prompts and resources through the CLI (issue 30): `lousho run
//! --prompt server:name key=value` runs the prompt as the conversation,
//! `@server:uri` in a message attaches the resource, and `lousho tools`
//! lists both — against the pinned server-everything and a server on the
//! official Python SDK, with the OpenAI-compatible mock as the model.

use super::common::{lousho, repo, spec_file, stderr, stdout};
use lousho_testkit::mock_provider::{MockProvider, MockReply};
use serde_json::Value;

/// A peer under `interop/` (`None`: skipped; under `CI=true` a failure).
fn peer(relative: &str) -> Option<String> {
    let path = repo().join("interop").join(relative);
    if path.exists() {
        // Not canonicalized: a venv's python must be run by its path in the venv.
        return Some(std::path::absolute(&path).unwrap().display().to_string());
    }
    let msg = format!("{} is missing: run interop/install.sh", path.display());
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{msg}");
    }
    eprintln!("SKIPPED: {msg}");
    None
}

/// A spec on the mock with server-everything as `ev` and the Python SDK
/// server as `py`.
fn spec(mock: &MockProvider) -> Option<(tempfile::TempDir, String)> {
    let everything = peer("node_modules/@modelcontextprotocol/server-everything/dist/index.js")?;
    let python = peer(".venv/bin/python")?;
    let script = peer("python/fastmcp_server.py")?;
    Some(spec_file(
        "agent.yaml",
        &format!(
            "model: openai/gpt-test\nmodelOptions:\n  baseUrl: {}\nmcpServers:\n  ev:\n    command: node\n    args: [\"{everything}\", stdio]\n  py:\n    command: \"{python}\"\n    args: [\"{script}\"]\n",
            mock.base_url()
        ),
    ))
}

async fn run(args: &[&str]) -> std::process::Output {
    let mut cmd = tokio::process::Command::from(lousho());
    cmd.env("OPENAI_API_KEY", "sk-test").args(args);
    cmd.output().await.unwrap()
}

fn messages(mock: &MockProvider) -> Vec<Value> {
    let requests = mock.requests();
    assert_eq!(requests.len(), 1);
    requests[0].body["messages"].as_array().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_prompt_with_arguments_runs_as_the_conversation() {
    let mock = MockProvider::openai()
        .reply(MockReply::text_reply("Mild and clear."))
        .start()
        .await;
    let Some((_dir, spec)) = spec(&mock) else {
        return;
    };
    let out = run(&[
        "run",
        &spec,
        "--prompt",
        "ev:args-prompt",
        "city=Oslo",
        "state=Norway",
    ])
    .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("Mild and clear."), "{}", stdout(&out));
    let sent = messages(&mock);
    // The system prompt carries server-everything's instructions.
    assert_eq!(sent[0]["role"], "system");
    assert!(
        sent[0]["content"]
            .as_str()
            .unwrap()
            .contains("# Instructions from the MCP server `ev`"),
        "{}",
        sent[0]
    );
    let last = sent.last().unwrap();
    assert_eq!(last["role"], "user");
    assert_eq!(last["content"], "What's weather in Oslo, Norway?");

    // A missing required argument is a usage error naming it; nothing is sent.
    let out = run(&["run", &spec, "--prompt", "ev:args-prompt", "state=Norway"]).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("city"), "{}", stderr(&out));
    assert_eq!(mock.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_message_attaches_the_resources_it_mentions() {
    let mock = MockProvider::openai()
        .reply(MockReply::text_reply("Both read."))
        .start()
        .await;
    let Some((_dir, spec)) = spec(&mock) else {
        return;
    };
    let out = run(&[
        "run",
        &spec,
        "Compare @ev:demo://resource/dynamic/text/3 with @py:config://app and @py:logo://small.",
    ])
    .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let sent = messages(&mock);
    let user = sent.last().unwrap();
    assert_eq!(user["role"], "user");
    // Text parts, and the PNG blob of the Python server as an image part.
    let parts = user["content"].as_array().unwrap();
    let texts: Vec<&str> = parts.iter().filter_map(|p| p["text"].as_str()).collect();
    assert!(
        texts[0].starts_with("Compare @ev:demo://resource/dynamic/text/3 with"),
        "{texts:?}"
    );
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("[resource ev:demo://resource/dynamic/text/3]\nResource 3:")),
        "{texts:?}"
    );
    assert!(
        texts
            .iter()
            .any(|t| t.contains("config://app") && t.contains("theme = dark")),
        "{texts:?}"
    );
    assert!(
        parts.iter().any(|p| p["type"] == "image_url"
            && p["image_url"]["url"]
                .as_str()
                .unwrap()
                .starts_with("data:image/png;base64,iVBOR")),
        "{parts:?}"
    );

    // A resource the server does not have fails the command; nothing is sent.
    let out = run(&["run", &spec, "Read @ev:demo://resource/dynamic/text/0"]).await;
    assert!(!out.status.success());
    assert!(stderr(&out).contains("resources/read"), "{}", stderr(&out));
    assert_eq!(mock.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_python_sdk_prompt_runs_with_its_arguments() {
    let mock = MockProvider::openai()
        .reply(MockReply::text_reply("Looks fine."))
        .start()
        .await;
    let Some((_dir, spec)) = spec(&mock) else {
        return;
    };
    let out = run(&[
        "run",
        &spec,
        "--json",
        "--prompt",
        "py:review",
        "code=fn main() {}",
        "language=rust",
    ])
    .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("Looks fine."), "{}", stdout(&out));
    let sent = messages(&mock);
    assert_eq!(
        sent.last().unwrap()["content"],
        "Please review this rust code:\nfn main() {}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn tools_lists_each_servers_prompts_and_resources() {
    let mock = MockProvider::openai().start().await;
    let Some((_dir, spec)) = spec(&mock) else {
        return;
    };
    let out = run(&["tools", &spec, "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let prompts = v["prompts"].as_array().unwrap();
    let args = prompts
        .iter()
        .find(|p| p["server"] == "ev" && p["name"] == "args-prompt")
        .unwrap_or_else(|| panic!("{prompts:?}"));
    assert_eq!(args["arguments"][0]["name"], "city");
    assert!(
        v["resources"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["server"] == "py" && r["uri"] == "config://app"),
        "{}",
        v["resources"]
    );
    assert!(
        v["resourceTemplates"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["server"] == "ev"
                && t["uriTemplate"] == "demo://resource/dynamic/text/{resourceId}"),
        "{}",
        v["resourceTemplates"]
    );
    let out = run(&["tools", &spec]).await;
    let text = stdout(&out);
    assert!(text.contains("/ev:args-prompt"), "{text}");
    assert!(text.contains("@py:config://app"), "{text}");
    assert_eq!(mock.requests().len(), 0, "listing asks no model");
}
