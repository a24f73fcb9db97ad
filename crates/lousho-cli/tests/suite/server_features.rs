//! What a mounted server asks of the client besides tool calls, through the
//! `lousho` command (issue 31): its log messages on stderr (`-v`), with the
//! entry's `logLevel` sent to it. Against a server on the official Python
//! SDK, with the OpenAI-compatible mock as the model.

use super::common::{interop_python, lousho, repo, spec_file, stderr, stdout};
use lousho_testkit::mock_provider::{MockProvider, MockReply};
use serde_json::json;

/// The interop venv's Python and the features server script (`None`:
/// skipped; under `CI=true` a failure).
fn python_server() -> Option<(String, String)> {
    let python = interop_python()?;
    let script = repo().join("interop/python/client_features_server.py");
    Some((
        python.display().to_string(),
        std::path::absolute(script).unwrap().display().to_string(),
    ))
}

/// A spec on the mock with the Python server as `py` (`extra` added to its
/// entry, indented by four spaces).
fn spec_on(mock: &MockProvider, extra: &str) -> Option<(tempfile::TempDir, String)> {
    let (python, script) = python_server()?;
    Some(spec_file(
        "agent.yaml",
        &format!(
            "model: openai/gpt-test\nmodelOptions:\n  baseUrl: {}\nmcpServers:\n  py:\n    command: \"{python}\"\n    args: [\"{script}\"]\n    approval: never\n{extra}",
            mock.base_url()
        ),
    ))
}

async fn run(args: &[&str]) -> std::process::Output {
    let mut cmd = tokio::process::Command::from(lousho());
    cmd.env("OPENAI_API_KEY", "sk-test").args(args);
    cmd.output().await.unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_servers_log_lines_reach_stderr_with_v_at_the_level_asked() {
    let mock = MockProvider::openai()
        .reply(MockReply::new().tool_call("c1", "py__log", json!({"text": "from the tool"})))
        .reply(MockReply::text_reply("Logged."))
        .start()
        .await;
    let Some((_dir, spec)) = spec_on(&mock, "    logLevel: info\n") else {
        return;
    };
    let out = run(&["run", "-v", &spec, "Log something."]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("Logged."), "{}", stdout(&out));
    let err = stderr(&out);
    let line = err
        .lines()
        .find(|l| l.contains("info line: from the tool"))
        .unwrap_or_else(|| panic!("no server log line on stderr: {err}"));
    assert!(line.contains("INFO") && line.contains("py"), "{line}");
    assert!(err.contains("warning line: from the tool"), "{err}");
    // `logLevel: info` went out as `logging/setLevel`: no debug lines.
    assert!(!err.contains("debug line"), "{err}");

    // Without -v, warnings and errors still show; info does not.
    let mock = MockProvider::openai()
        .reply(MockReply::new().tool_call("c1", "py__log", json!({"text": "quiet"})))
        .reply(MockReply::text_reply("Logged."))
        .start()
        .await;
    let Some((_dir, spec)) = spec_on(&mock, "    logLevel: info\n") else {
        return;
    };
    let out = run(&["run", &spec, "Log something."]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("warning line: quiet"), "{err}");
    assert!(!err.contains("info line: quiet"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_lists_the_specs_workspace_and_its_own_roots() {
    let mock = MockProvider::openai()
        .reply(MockReply::new().tool_call("c1", "py__roots", json!({})))
        .reply(MockReply::text_reply("Listed."))
        .start()
        .await;
    let Some((dir, spec)) = spec_on(&mock, "    roots: [./data]\n") else {
        return;
    };
    let out = run(&["run", &spec, "Which roots?"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = mock.requests();
    let result = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()["content"]
        .to_string();
    let folder = lousho::mcp::McpRoot::folder(dir.path()).uri;
    assert!(
        result.contains(&format!("{folder} {folder}/data")),
        "the workspace (the spec's folder), then `./data` from it: {result}"
    );
}

/// Runs `program args` on a pseudo-terminal (Python's `pty`), answers `y`
/// to the first `[y/N]` question, and returns all it wrote.
const PTY_DRIVER: &str = r#"
import os, pty, select, sys
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
out, answered = b"", False
while True:
    ready, _, _ = select.select([fd], [], [], 120)
    if not ready:
        break
    try:
        data = os.read(fd, 4096)
    except OSError:
        break
    if not data:
        break
    out += data
    if not answered and b"[y/N]" in out:
        os.write(fd, b"y\n")
        answered = True
os.waitpid(pid, 0)
sys.stdout.buffer.write(out)
"#;

#[tokio::test(flavor = "multi_thread")]
async fn a_url_elicitation_is_shown_on_a_terminal_and_opened_on_yes() {
    let mock = MockProvider::openai()
        .reply(MockReply::new().tool_call("c1", "py__sign_in", json!({})))
        .reply(MockReply::text_reply("Signed in."))
        .start()
        .await;
    let Some((dir, spec)) = spec_on(&mock, "") else {
        return;
    };
    let (python, _) = python_server().unwrap();
    // The browser is a script that writes down the URL it was given.
    let opened = dir.path().join("opened.txt");
    let browser = dir.path().join("browser.sh");
    std::fs::write(
        &browser,
        format!("#!/bin/sh\necho \"$1\" > '{}'\n", opened.display()),
    )
    .unwrap();
    std::fs::set_permissions(
        &browser,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let template = lousho();
    let mut cmd = tokio::process::Command::new(python);
    for (key, value) in template.get_envs() {
        match value {
            Some(v) => cmd.env(key, v),
            None => cmd.env_remove(key),
        };
    }
    cmd.env("OPENAI_API_KEY", "sk-test")
        .env("BROWSER", &browser)
        .args(["-c", PTY_DRIVER, template.get_program().to_str().unwrap()])
        .args(["run", &spec, "Sign me in."]);
    let out = tokio::time::timeout(std::time::Duration::from_secs(120), cmd.output())
        .await
        .expect("the run never ended")
        .unwrap();
    let screen = stdout(&out);
    assert!(
        screen.contains("asks you to open a web page")
            && screen.contains("Sign in to Example to link your account.")
            && screen.contains("https://example.com/login?state=abc"),
        "{screen}"
    );
    let url = std::fs::read_to_string(&opened).expect("the browser was not opened");
    assert_eq!(url.trim(), "https://example.com/login?state=abc");
    let requests = mock.requests();
    assert_eq!(requests.len(), 2, "{screen}");
    assert!(
        requests[1].body.to_string().contains("sign-in: accept"),
        "{}",
        requests[1].body
    );
}
