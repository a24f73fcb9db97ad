//! `lousho doctor [SPEC]`: pass/fail rows with what to do next; exit code 1
//! when a check failed.

use super::common::{example, lousho, spec_file, stderr, stdout};
use serde_json::Value;

fn doctor_json(args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, Value, String) {
    let mut cmd = lousho();
    cmd.arg("doctor").args(args).arg("--json");
    for var in ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENROUTER_API_KEY"] {
        cmd.env_remove(var);
    }
    let dir = tempfile::tempdir().unwrap();
    cmd.env("XDG_DATA_HOME", dir.path().join("data"))
        .env("XDG_STATE_HOME", dir.path().join("state"));
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let all = format!("{}{}", stdout(&out), stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap_or_else(|e| panic!("{e}: {all}"));
    (out.status.code(), v, all)
}

fn row<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == name)
        .unwrap_or_else(|| panic!("no check {name}: {v:#}"))
}

#[test]
fn the_quickstart_passes_with_its_server_started_and_timed() {
    let (code, v, all) = doctor_json(&[&example("quickstart.yaml")], &[]);
    assert_eq!(code, Some(0), "{all}");
    assert_eq!(v["ok"], true);
    assert_eq!(row(&v, "spec")["status"], "ok");
    assert!(
        row(&v, "model")["detail"]
            .as_str()
            .unwrap()
            .contains("needs no API key")
    );
    let files = row(&v, "mcp files");
    assert_eq!(files["status"], "ok", "{files}");
    let detail = files["detail"].as_str().unwrap();
    assert!(detail.starts_with("started in "), "{detail}");
    assert!(detail.contains("3 tools, ~"), "{detail}");
    assert_eq!(row(&v, "mcp files: command")["status"], "ok");
    for folder in ["cache folder", "session store", "token file"] {
        assert_eq!(row(&v, folder)["status"], "ok", "{v:#}");
    }
}

#[test]
fn a_missing_key_fails_naming_the_variable_and_a_set_one_is_never_shown() {
    let (_dir, spec) = spec_file("k.yaml", "model: openai/gpt-4o-mini\ntools: [day_name]\n");
    let (code, v, all) = doctor_json(&[&spec], &[]);
    assert_eq!(code, Some(1), "{all}");
    assert_eq!(v["ok"], false);
    let model = row(&v, "model");
    assert_eq!(model["status"], "FAIL");
    assert!(
        model["detail"]
            .as_str()
            .unwrap()
            .contains("OPENAI_API_KEY is not set"),
        "{model}"
    );
    assert!(
        model["next"]
            .as_str()
            .unwrap()
            .contains("export OPENAI_API_KEY="),
        "{model}"
    );

    let secret = "sk-doctor-must-not-print-this";
    let (code, v, all) = doctor_json(&[&spec], &[("OPENAI_API_KEY", secret)]);
    assert_eq!(code, Some(0), "{all}");
    assert!(
        row(&v, "model")["detail"]
            .as_str()
            .unwrap()
            .contains("OPENAI_API_KEY is set")
    );
    assert!(!all.contains(secret), "{all}");
}

#[test]
fn a_server_whose_command_is_missing_fails_with_what_to_install() {
    let (_dir, spec) = spec_file(
        "m.yaml",
        "model: test\nmcpServers:\n  gone:\n    command: lousho-no-such-command\n    startupTimeoutMs: 10000\n",
    );
    let (code, v, all) = doctor_json(&[&spec], &[]);
    assert_eq!(code, Some(1), "{all}");
    let command = row(&v, "mcp gone: command");
    assert_eq!(command["status"], "FAIL");
    assert!(
        command["detail"].as_str().unwrap().contains("not on PATH"),
        "{command}"
    );
    assert!(
        command["next"]
            .as_str()
            .unwrap()
            .contains("install `lousho-no-such-command`")
    );
    let started = row(&v, "mcp gone");
    assert_eq!(started["status"], "FAIL");
    assert!(
        started["detail"]
            .as_str()
            .unwrap()
            .starts_with("failed after "),
        "{started}"
    );
}

#[test]
fn a_spec_that_does_not_load_fails_with_its_line() {
    let (_dir, spec) = spec_file(
        "bad.yaml",
        "model: test\ntools: [day_name]\nmaxTurns: many\n",
    );
    let (code, v, all) = doctor_json(&[&spec], &[]);
    assert_eq!(code, Some(1), "{all}");
    let spec_row = row(&v, "spec");
    assert_eq!(spec_row["status"], "FAIL");
    assert!(
        spec_row["detail"].as_str().unwrap().contains(":3"),
        "{spec_row}"
    );
}

#[test]
fn a_cache_folder_that_cannot_be_made_fails() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let cache = file.join("cache");
    let (code, v, all) = doctor_json(&[], &[("LOUSHO_CACHE_DIR", cache.to_str().unwrap())]);
    assert_eq!(code, Some(1), "{all}");
    let cache = row(&v, "cache folder");
    assert_eq!(cache["status"], "FAIL", "{cache}");
    assert!(
        cache["detail"]
            .as_str()
            .unwrap()
            .contains("is not a folder"),
        "{cache}"
    );
    assert!(
        cache["next"].as_str().unwrap().contains("LOUSHO_CACHE_DIR"),
        "{cache}"
    );
    // Without a spec: the machine's checks only.
    assert!(row(&v, "API keys")["status"] == "warn");
    assert!(
        row(&v, "commands")["detail"]
            .as_str()
            .unwrap()
            .starts_with("found: ")
    );
}

#[test]
fn the_table_says_what_to_do_next() {
    let (_dir, spec) = spec_file("k.yaml", "model: anthropic/claude-sonnet-4-5\n");
    let out = lousho()
        .args(["doctor", &spec])
        .env_remove("ANTHROPIC_API_KEY")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    let header = text.lines().next().unwrap();
    assert!(
        header.starts_with("CHECK") && header.contains("RESULT"),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with("model") && l.contains("FAIL")),
        "{text}"
    );
    assert!(
        text.contains("What to do next:\n- model: export ANTHROPIC_API_KEY="),
        "{text}"
    );
    assert!(text.contains("failed, "), "{text}");
}
