//! The catalog in the CLI (#13): manifests by default, `--no-catalog`,
//! `tools --refresh`, `source` in `tools --json`, `call` connecting only the
//! tool's owner, `mcp` answering without starting the agent's servers.

use super::common::{example, fresh_cache_dir, lousho, stderr, stdout};
use serde_json::Value;
use std::path::PathBuf;
use std::process::Output;

/// A spec with a built-in, five stdio servers (`s1`..`s5`, each a
/// `lousho mcp files.yaml` that first appends its name to `spawns`) and one
/// whose command does not exist (`dead`).
struct Setup {
    _dir: tempfile::TempDir,
    spec: String,
    log: PathBuf,
    cache: PathBuf,
}

impl Setup {
    fn new(servers: usize, extra: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("spawns");
        let mut text = format!("model: test\ntools: [day_name]\n{extra}mcpServers:\n");
        for i in 1..=servers {
            text.push_str(&format!(
                "  s{i}:\n    command: sh\n    args: [\"-c\", \"echo s{i} >> '{}'; exec \\\"$0\\\" mcp '{}'\", \"${{LOUSHO_BIN}}\"]\n",
                log.display(),
                example("files.yaml")
            ));
        }
        text.push_str("  dead:\n    command: /nonexistent/lousho-dead-server\n");
        let spec = dir.path().join("six.yaml");
        std::fs::write(&spec, text).unwrap();
        Self {
            spec: spec.to_string_lossy().into_owned(),
            log,
            cache: fresh_cache_dir(),
            _dir: dir,
        }
    }

    /// `lousho ARGS` with this setup's cache.
    fn run(&self, args: &[&str]) -> Output {
        lousho()
            .env("LOUSHO_CACHE_DIR", &self.cache)
            .args(args)
            .output()
            .unwrap()
    }

    /// The servers spawned so far, in order.
    fn spawns(&self) -> Vec<String> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    fn manifests(&self) -> Vec<PathBuf> {
        let Ok(dir) = std::fs::read_dir(self.cache.join("manifests")) else {
            return Vec::new();
        };
        dir.flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect()
    }
}

fn json(out: &Output) -> Value {
    serde_json::from_str(&stdout(out)).unwrap_or_else(|e| panic!("{e}: {}", stdout(out)))
}

#[test]
fn call_connects_only_the_tools_owner_and_a_builtin_connects_nothing() {
    let s = Setup::new(5, "");
    // No manifests yet: the tool's prefix names its server.
    let out = s.run(&[
        "call",
        &s.spec,
        "s3__read_file",
        r#"{"path": "files.yaml"}"#,
    ]);
    let se = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{se}");
    assert!(
        stdout(&out).contains("file-reading agent"),
        "{}",
        stdout(&out)
    );
    assert_eq!(s.spawns(), ["s3"], "only the owner started");
    assert!(!se.contains("dead"), "the dead server is not touched: {se}");

    let out = s.run(&["call", &s.spec, "day_name", r#"{"date": "2026-12-01"}"#]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("Tuesday"));
    assert_eq!(s.spawns(), ["s3"], "a built-in starts no server");
    assert!(!stderr(&out).contains("dead"), "{}", stderr(&out));

    // With manifests: the owner is known from them.
    let out = s.run(&["tools", &s.spec, "--refresh", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(s.spawns().len(), 6, "{:?}", s.spawns());
    assert_eq!(s.manifests().len(), 5, "one per live server");
    let out = s.run(&["call", &s.spec, "s5__list_dir", r#"{"path": "."}"#]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(s.spawns().last().map(String::as_str), Some("s5"));
    assert_eq!(s.spawns().len(), 7, "{:?}", s.spawns());
}

#[test]
fn tools_json_shows_where_each_tool_comes_from() {
    let s = Setup::new(2, "");
    let out = s.run(&["tools", &s.spec, "--json"]);
    let v = json(&out);
    let tool = |v: &Value, name: &str| {
        v["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("no {name} in {v}"))
    };
    assert_eq!(tool(&v, "s1__read_file")["source"], "live");
    assert_eq!(tool(&v, "day_name")["source"], Value::Null);
    assert_eq!(v["servers"]["s1"]["status"], "connected");
    assert_eq!(v["servers"]["dead"]["status"], "failed");
    assert_eq!(s.spawns().len(), 2);

    let out = s.run(&["tools", &s.spec, "--json"]);
    let v = json(&out);
    assert_eq!(s.spawns().len(), 2, "listed from the manifests");
    let read = tool(&v, "s1__read_file");
    assert_eq!(read["source"], "catalog");
    assert!(read["manifestAgeSecs"].as_u64().is_some(), "{read}");
    assert_eq!(v["servers"]["s2"]["status"], "cataloged");
    assert!(v["servers"]["s2"]["manifestAgeSecs"].is_u64());

    let out = s.run(&["tools", &s.spec]);
    assert!(
        stdout(&out).contains("cataloged (tools from a manifest"),
        "{}",
        stdout(&out)
    );

    let out = s.run(&["--no-catalog", "tools", &s.spec, "--json"]);
    assert_eq!(tool(&json(&out), "s1__read_file")["source"], "live");
    assert_eq!(s.spawns().len(), 4, "--no-catalog connects everything");

    let fresh = Setup::new(1, "");
    let out = fresh.run(&["--no-catalog", "tools", &fresh.spec, "--json"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(fresh.manifests().is_empty(), "--no-catalog writes nothing");
}

#[test]
fn a_changed_entry_connects_again() {
    let s = Setup::new(1, "");
    s.run(&["tools", &s.spec, "--json"]);
    assert_eq!(s.spawns().len(), 1);
    let text = std::fs::read_to_string(&s.spec).unwrap();
    std::fs::write(
        &s.spec,
        text.replace("command: sh", "command: sh\n    env: {EXTRA: \"1\"}"),
    )
    .unwrap();
    let v = json(&s.run(&["tools", &s.spec, "--json"]));
    assert_eq!(v["servers"]["s1"]["status"], "connected", "{v}");
    assert_eq!(s.spawns().len(), 2);
}

#[test]
fn two_processes_refreshing_at_once_leave_valid_manifests() {
    let s = Setup::new(3, "");
    let start = || {
        lousho()
            .env("LOUSHO_CACHE_DIR", &s.cache)
            .args(["tools", &s.spec, "--refresh", "--json"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (start(), start());
    for child in [a, b] {
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    let files = s.manifests();
    assert_eq!(files.len(), 3, "{files:?}");
    for file in &files {
        let v: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        assert_eq!(v["tools"].as_array().unwrap().len(), 3, "{v}");
    }
    let leftovers = std::fs::read_dir(s.cache.join("manifests"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .count();
    assert_eq!(leftovers, 0);
    let v = json(&s.run(&["tools", &s.spec, "--json"]));
    assert_eq!(v["servers"]["s3"]["status"], "cataloged");
}

#[test]
fn a_corrupt_manifest_is_a_warning_not_a_failure() {
    let s = Setup::new(1, "");
    s.run(&["tools", &s.spec, "--json"]);
    for file in s.manifests() {
        std::fs::write(file, "garbage").unwrap();
    }
    let out = s.run(&["tools", &s.spec, "--json"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        stderr(&out).contains("ignoring the tool manifest"),
        "{}",
        stderr(&out)
    );
    assert_eq!(json(&out)["servers"]["s1"]["status"], "connected");
}

#[tokio::test]
async fn mcp_answers_initialize_and_tools_list_without_starting_the_agents_servers() {
    use lousho::mcp::rmcp::ServiceExt;
    use lousho::mcp::rmcp::model::CallToolRequestParams;
    use lousho::mcp::rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
    let s = Setup::new(2, "serve:\n  tools: [s1__read_file]\n");
    let out = s.run(&["tools", &s.spec, "--refresh", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let before = s.spawns().len();

    let cache = s.cache.clone();
    let spec = s.spec.clone();
    let cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_lousho")).configure(|c| {
        c.args(["mcp", &spec])
            .env("LOUSHO_LOG", "warn")
            .env("LOUSHO_CACHE_DIR", &cache)
            .env_remove("LOUSHO_BIN");
    });
    let client = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();
    let names: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    assert!(names.contains(&"s1__read_file".to_owned()), "{names:?}");
    assert_eq!(
        s.spawns().len(),
        before,
        "nothing started for initialize and tools/list"
    );

    let args = serde_json::json!({"path": "files.yaml"})
        .as_object()
        .cloned()
        .unwrap();
    let result = client
        .call_tool(CallToolRequestParams::new("s1__read_file").with_arguments(args))
        .await
        .unwrap();
    assert_ne!(result.is_error, Some(true), "{result:?}");
    assert_eq!(
        s.spawns().len(),
        before + 1,
        "the owner started for the call"
    );
    assert_eq!(s.spawns().last().map(String::as_str), Some("s1"));
    client.cancel().await.unwrap();
}

#[test]
fn tools_shows_estimated_tokens_and_what_tool_search_holds_back() {
    let s = Setup::new(2, "toolSearch: on\nalwaysLoadedTools: [s1__read_file]\n");
    let out = s.run(&["tools", &s.spec, "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    let tools = v["tools"].as_array().unwrap();
    let tool = |name: &str| tools.iter().find(|t| t["name"] == name).unwrap();
    for t in tools {
        assert!(t["tokens"].as_u64().unwrap() > 0, "{t}");
    }
    assert_eq!(tool("day_name")["deferred"], false, "built-ins stay loaded");
    assert_eq!(tool("s1__read_file")["deferred"], false, "always loaded");
    assert_eq!(tool("s2__read_file")["deferred"], true);
    let s1_sum: u64 = tools
        .iter()
        .filter(|t| t["server"] == "s1")
        .map(|t| t["tokens"].as_u64().unwrap())
        .sum();
    assert_eq!(v["servers"]["s1"]["tokens"].as_u64(), Some(s1_sum));
    let search = &v["toolSearch"];
    assert_eq!(search["mode"], "on");
    assert_eq!(search["active"], true);
    let (total, first) = (
        search["totalTokens"].as_u64().unwrap(),
        search["firstRequestTokens"].as_u64().unwrap(),
    );
    assert!(first < total, "{search}");

    let text = stdout(&s.run(&["tools", &s.spec]));
    assert!(text.contains("TOKENS"), "{text}");
    assert!(text.contains("tool search (on) holds back"), "{text}");
}

/// A spec in `dir` mounting one stdio server (`lousho mcp files.yaml`,
/// logging its spawns to `log`), with `cwd` when given.
fn one_server_spec(
    dir: &std::path::Path,
    name: &str,
    log: &std::path::Path,
    cwd: Option<&str>,
) -> String {
    let cwd = cwd
        .map(|c| format!("    cwd: \"{c}\"\n"))
        .unwrap_or_default();
    let text = format!(
        "model: test\nmcpServers:\n  files:\n    command: sh\n    args: [\"-c\", \"echo spawn >> '{}'; exec \\\"$0\\\" mcp '{}'\", \"${{LOUSHO_BIN}}\"]\n{cwd}",
        log.display(),
        example("files.yaml")
    );
    let spec = dir.join(name);
    std::fs::write(&spec, text).unwrap();
    spec.to_string_lossy().into_owned()
}

#[test]
fn two_specs_mounting_one_server_share_its_manifest() {
    let s = Setup::new(0, "");
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("spawns");
    let main = one_server_spec(dir.path(), "main.yaml", &log, None);
    let serve = one_server_spec(dir.path(), "serve.yaml", &log, None);
    let out = s.run(&["tools", &main]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(s.manifests().len(), 1);
    // The second spec passes another spec chain to the server: still the same
    // server, so its manifest answers and nothing is spawned.
    let out = s.run(&["tools", &serve]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("files__read_file"),
        "{}",
        stdout(&out)
    );
    assert_eq!(s.manifests().len(), 1, "{:?}", s.manifests());
    let spawns = std::fs::read_to_string(&log).unwrap_or_default();
    assert_eq!(spawns.lines().count(), 1, "{spawns}");
}

#[test]
fn a_relative_cwd_in_two_projects_is_two_servers() {
    let s = Setup::new(0, "");
    let log_dir = tempfile::tempdir().unwrap();
    let log = log_dir.path().join("spawns");
    let mut specs = Vec::new();
    for project in ["one", "two"] {
        let dir = log_dir.path().join(project);
        std::fs::create_dir(&dir).unwrap();
        one_server_spec(&dir, "agent.yaml", &log, Some("."));
        specs.push(dir);
    }
    for project in &specs {
        // Run from inside the project, with the spec named relatively, as a
        // user in that folder would.
        let out = lousho()
            .env("LOUSHO_CACHE_DIR", &s.cache)
            .current_dir(project)
            .args(["tools", "agent.yaml"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
    assert_eq!(s.manifests().len(), 2, "{:?}", s.manifests());
    let spawns = std::fs::read_to_string(&log).unwrap_or_default();
    assert_eq!(spawns.lines().count(), 2, "{spawns}");
}
