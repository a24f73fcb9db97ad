//! Every exit code docs/cli.md documents, produced by the binary (130 and
//! 143 are in `signals.rs`).

use super::common::{lousho, run, spec_file, stderr, stdout};
use std::process::Stdio;

#[test]
fn exit_0_on_success() {
    let (_dir, spec) = spec_file("ok.yaml", "model: test\ntools: [day_name]\n");
    let out = run(&["call", &spec, "day_name", r#"{"date": "2026-12-01"}"#]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("Tuesday"), "{}", stdout(&out));
}

#[test]
fn exit_1_when_the_tool_fails() {
    let (_dir, spec) = spec_file("fail.yaml", "model: test\ntools: [read_file]\n");
    let out = run(&["call", &spec, "read_file", r#"{"path": "missing.txt"}"#]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
}

#[test]
fn exit_2_for_tool_input_that_is_not_json_or_not_an_object() {
    let (_dir, spec) = spec_file("j.yaml", "model: test\ntools: [read_file]\n");
    let out = run(&["call", &spec, "read_file", "{path: x"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("not valid JSON"), "{}", stderr(&out));
    let out = run(&["call", &spec, "read_file", "[1, 2]"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("JSON object"), "{}", stderr(&out));
}

#[test]
fn exit_2_for_a_bad_spec_and_a_bad_command_line() {
    let (_dir, spec) = spec_file("bad.yaml", "model: test\nmaxturns: 3\n");
    assert_eq!(run(&["run", &spec, "hi"]).status.code(), Some(2));
    assert_eq!(run(&["run"]).status.code(), Some(2));
}

#[test]
fn exit_2_for_a_missing_api_key_naming_the_variable_not_rust_items() {
    let (_dir, spec) = spec_file("key.yaml", "model: openai/gpt-4o-mini\n");
    let out = lousho()
        .args(["run", &spec, "hi"])
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap();
    let se = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{se}");
    assert!(se.contains("OPENAI_API_KEY"), "{se}");
    assert!(se.contains("--model test"), "{se}");
    assert!(!se.contains("provider builder"), "{se}");
}

#[test]
fn exit_3_when_the_tools_server_cannot_connect() {
    let (_dir, spec) = spec_file(
        "dead.yaml",
        "model: test\nmcpServers:\n  dead:\n    command: /nonexistent/lousho-test-server\n",
    );
    let out = run(&["call", &spec, "dead__anything"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("could not start"), "{}", stderr(&out));
}

#[test]
fn exit_6_when_a_replay_differs_from_its_recording() {
    let (dir, spec) = spec_file("r.yaml", "model: test\nprompt: You greet.\n");
    let cassette = dir.path().join("r.cassette");
    let cassette = cassette.to_str().unwrap();
    let out = run(&["run", &spec, "hello", "--record", cassette]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = run(&["run", &spec, "--replay", cassette]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = run(&["run", &spec, "goodbye", "--replay", cassette]);
    assert_eq!(out.status.code(), Some(6), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(r#"messages[0].parts[0].text: "hello" → "goodbye""#),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_closed_stdout_ends_the_command_quietly_with_0() {
    let (_dir, spec) = spec_file("pipe.yaml", "model: test\ntools: [read_file, grep, glob]\n");
    // The read end is closed before lousho starts: its first write fails.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    for args in [
        vec!["tools", spec.as_str()],
        vec!["tools", spec.as_str(), "--json"],
        vec!["run", spec.as_str(), "hello"],
        vec!["call", spec.as_str(), "glob", r#"{"pattern": "*"}"#],
    ] {
        let out = lousho()
            .args(&args)
            .stdout(Stdio::from(writer.try_clone().unwrap()))
            .output()
            .unwrap();
        let se = stderr(&out);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {se}");
        assert!(!se.contains("panicked"), "{args:?}: {se}");
        assert!(!se.contains("Broken pipe"), "{args:?}: {se}");
    }
}

/// A stdio MCP server (a shell script) that answers its one `tools/call`
/// and exits at once.
const EXITS_AFTER_ITS_RESULT: &str = r#"while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
  case "$line" in
    *'"method":"initialize"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"once","version":"1"}}}\n' "$id" ;;
    *'"method":"tools/list"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"once","description":"answers, then exits","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}]}}\n' "$id" ;;
    *'"method":"tools/call"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"done"}]}}\n' "$id"; exit 0 ;;
  esac
done
"#;

#[test]
fn a_server_that_exits_right_after_its_result_leaves_a_quiet_exit() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("once.sh");
    std::fs::write(&script, EXITS_AFTER_ITS_RESULT).unwrap();
    let spec = dir.path().join("once.yaml");
    std::fs::write(
        &spec,
        format!(
            "model: test\nmcpServers:\n  once:\n    command: sh\n    args: [\"{}\"]\n",
            script.display()
        ),
    )
    .unwrap();
    let spec = spec.to_str().unwrap();
    for args in [
        vec!["--no-catalog", "call", spec, "once__once"],
        vec!["--no-catalog", "run", spec, "hello"],
    ] {
        // Both the user's default logs and the warnings the tests turn on.
        for log in [None, Some("warn")] {
            let mut cmd = lousho();
            match log {
                Some(level) => cmd.env("LOUSHO_LOG", level),
                None => cmd.env_remove("LOUSHO_LOG"),
            };
            let out = cmd.args(&args).output().unwrap();
            let se = stderr(&out);
            assert_eq!(out.status.code(), Some(0), "{args:?}: {se}");
            assert!(stdout(&out).contains("done"), "{args:?}: {}", stdout(&out));
            for noise in ["Broken pipe", "ERROR", "WARN", "error:"] {
                assert!(!se.contains(noise), "{args:?} {log:?}: {se}");
            }
        }
    }
}
