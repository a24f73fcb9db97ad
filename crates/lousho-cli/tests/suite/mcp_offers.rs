//! `lousho mcp spec.yaml` serving `serve.resources` (the workspace's files)
//! and `serve.prompts` (templates with arguments, the agent's own prompt),
//! used by the official Python (2026-07-28, `subscriptions/listen`) and
//! TypeScript (2025-11-25, `resources/subscribe`) clients over stdio and
//! HTTP (interop/clients/offers_client.*).

use super::common::{interop_python, lousho, node_peer, repo};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const SPEC: &str = r#"
name: offers
model: test
prompt: You review code carefully.
workspace: ./ws
serve:
  stateful: true
  title: The Offers Agent
  icons: [{ src: "https://example.com/offers.svg", mimeType: image/svg+xml }]
  resources: [workspace]
  prompts:
    review:
      title: Review a file
      description: Review one file of the workspace
      arguments:
        - { name: path, description: The file, required: true }
        - { name: focus, description: What to look at, values: [style, security, speed] }
      text: "Review {{path}} with a focus on {{focus}}."
    persona:
      description: The agent's own instructions
      agentPrompt: true
"#;

/// A spec folder: the spec, its workspace (notes.txt, docs/guide.md, a
/// hidden .env) and a file beside the workspace that must stay unreadable.
fn project() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(ws.join("docs")).unwrap();
    std::fs::write(ws.join("notes.txt"), "first notes\n").unwrap();
    std::fs::write(ws.join("docs/guide.md"), "# Guide\n").unwrap();
    std::fs::write(ws.join(".env"), "TOKEN=x\n").unwrap();
    std::fs::write(dir.path().join("outside.txt"), "secret\n").unwrap();
    let spec = dir.path().join("agent.yaml");
    std::fs::write(&spec, SPEC).unwrap();
    (dir, spec, ws)
}

/// `lousho mcp SPEC --http --port 0`, stopped on drop.
struct HttpServe {
    child: std::process::Child,
    url: String,
}

impl HttpServe {
    fn start(spec: &Path) -> Self {
        let mut child = lousho()
            .args(["mcp", spec.to_str().unwrap(), "--http", "--port", "0"])
            .stderr(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let mut url = None;
        for line in BufReader::new(child.stderr.take().unwrap()).lines() {
            let line = line.unwrap();
            if let Some(at) = line.split(" over MCP at ").nth(1) {
                url = at.split_whitespace().next().map(str::to_owned);
                break;
            }
        }
        Self {
            child,
            url: url.expect("lousho mcp --http prints its URL"),
        }
    }
}

impl Drop for HttpServe {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn report(program: &Path, script: &Path, args: &[&str]) -> Value {
    let out = Command::new(program)
        .current_dir(repo().join("interop"))
        .arg(script)
        .args(args)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{} {args:?}: {}\nstdout: {stdout}\nstderr: {}",
        script.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

fn check(report: &Value, ws: &Path, label: &str) {
    let root = ws.canonicalize().unwrap();
    assert_eq!(
        report["resources"],
        json!(["docs/guide.md", "notes.txt"]),
        "{label}: {report}"
    );
    assert_eq!(
        report["templates"],
        json!([format!("file://{}/{{+path}}", root.display())]),
        "{label}"
    );
    assert_eq!(report["path_completions"], json!(["notes.txt"]), "{label}");
    assert_eq!(report["notes"], "first notes\n", "{label}");
    assert_eq!(report["outside"], -32602, "{label}: `..` is refused");
    assert_eq!(
        report["prompts"],
        json!({"persona": [], "review": [["path", true], ["focus", false]]}),
        "{label}"
    );
    assert_eq!(
        report["review"],
        json!([["user", "Review notes.txt with a focus on ."]]),
        "{label}"
    );
    assert_eq!(
        report["focus_completions"],
        json!(["style", "security", "speed"]),
        "{label}"
    );
    assert_eq!(report["updated"], report["notes_uri"], "{label}");
}

#[test]
fn python_client_uses_resources_and_prompts_over_stdio_and_http() {
    let Some(py) = interop_python() else { return };
    let script = repo().join("interop/clients/offers_client.py");
    let lousho_bin = env!("CARGO_BIN_EXE_lousho");

    let (_dir, spec, ws) = project();
    let r = report(
        &py,
        &script,
        &[
            "offers",
            ws.to_str().unwrap(),
            "stdio",
            lousho_bin,
            "mcp",
            spec.to_str().unwrap(),
        ],
    );
    assert_eq!(r["protocol_version"], "2026-07-28", "{r}");
    check(&r, &ws, "python over stdio");

    let (_dir, spec, ws) = project();
    let server = HttpServe::start(&spec);
    let r = report(
        &py,
        &script,
        &["offers", ws.to_str().unwrap(), "http", &server.url],
    );
    check(&r, &ws, "python over HTTP");
}

#[test]
fn typescript_client_uses_resources_and_prompts_over_stdio_and_http() {
    let Some(script) = node_peer("offers_client.mjs") else {
        return;
    };
    let node = PathBuf::from("node");
    let lousho_bin = env!("CARGO_BIN_EXE_lousho");

    let (_dir, spec, ws) = project();
    let r = report(
        &node,
        &script,
        &[
            "offers",
            ws.to_str().unwrap(),
            "stdio",
            lousho_bin,
            "mcp",
            spec.to_str().unwrap(),
        ],
    );
    check(&r, &ws, "typescript over stdio");

    let (_dir, spec, ws) = project();
    let server = HttpServe::start(&spec);
    let r = report(
        &node,
        &script,
        &["offers", ws.to_str().unwrap(), "http", &server.url],
    );
    check(&r, &ws, "typescript over HTTP");
}

/// The MCP Inspector's CLI (`@modelcontextprotocol/inspector-cli` 1.0.3, the
/// `--cli` mode of `npx @modelcontextprotocol/inspector`) lists what
/// `lousho mcp spec.yaml` serves and gets a prompt.
#[test]
fn the_inspector_cli_lists_resources_templates_and_prompts() {
    let Some(clients) =
        node_peer("offers_client.mjs").and_then(|p| p.parent().map(Path::to_path_buf))
    else {
        return;
    };
    let cli = repo().join("interop/node_modules/@modelcontextprotocol/inspector-cli/build/cli.js");
    if !cli.exists() {
        let msg =
            "the MCP Inspector CLI (interop/node_modules) is not installed: run interop/install.sh";
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("{msg}");
        }
        eprintln!("SKIPPED: {msg}");
        return;
    }
    let (_dir, spec, ws) = project();
    let inspect = |extra: &[&str]| -> Value {
        // Run from interop/clients: the Inspector finds its own package.json
        // as `../package.json` from there.
        let out = Command::new("node")
            .current_dir(&clients)
            .arg(&cli)
            .args([
                "--cli",
                env!("CARGO_BIN_EXE_lousho"),
                "mcp",
                spec.to_str().unwrap(),
            ])
            .args(extra)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "inspector {extra:?}: {}\n{stdout}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
    };
    let root = ws.canonicalize().unwrap();
    let listed = inspect(&["--method", "resources/list"]);
    let names: Vec<&str> = listed["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["docs/guide.md", "notes.txt"], "{listed}");
    let templates = inspect(&["--method", "resources/templates/list"]);
    assert_eq!(
        templates["resourceTemplates"][0]["uriTemplate"],
        format!("file://{}/{{+path}}", root.display())
    );
    let read = inspect(&[
        "--method",
        "resources/read",
        "--uri",
        &format!("file://{}/notes.txt", root.display()),
    ]);
    assert_eq!(read["contents"][0]["text"], "first notes\n", "{read}");
    let prompts = inspect(&["--method", "prompts/list"]);
    assert_eq!(prompts["prompts"][1]["title"], "Review a file", "{prompts}");
    let got = inspect(&[
        "--method",
        "prompts/get",
        "--prompt-name",
        "review",
        "--prompt-args",
        "path=notes.txt",
        "focus=style",
    ]);
    assert_eq!(
        got["messages"][0]["content"]["text"],
        "Review notes.txt with a focus on style."
    );
}
