use super::common::{run, spec_file, stderr, stdout};
use serde_json::Value;

#[test]
fn run_json_streams_one_event_per_line_and_ends_with_done() {
    let (_dir, spec) = spec_file("a.yaml", "model: test\ntools: [current_date]\n");
    for flag in [&["--json"][..], &["--output", "json"][..]] {
        let mut args = vec!["run", spec.as_str(), "what day is it?"];
        args.extend_from_slice(flag);
        let out = run(&args);
        assert!(out.status.success(), "{}", stderr(&out));
        let events: Vec<Value> = stdout(&out)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect();
        let types: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
        let call = events.iter().find(|e| e["type"] == "tool_call").unwrap();
        assert_eq!(call["name"], "current_date");
        let result = events.iter().find(|e| e["type"] == "tool_result").unwrap();
        assert_eq!(result["id"], call["id"]);
        assert_eq!(result["is_error"], false);
        assert!(types.contains(&"usage"), "{types:?}");
        assert!(types.contains(&"text"), "{types:?}");
        let done = events.last().unwrap();
        assert_eq!(done["type"], "done", "{types:?}");
        assert_eq!(done["status"], "completed");
        assert!(
            done["text"].as_str().unwrap().contains("current_date"),
            "{done}"
        );
        // Text deltas add up to the final answer.
        let text: String = events
            .iter()
            .filter(|e| e["type"] == "text")
            .filter_map(|e| e["text"].as_str())
            .collect();
        assert_eq!(text, done["text"].as_str().unwrap());
    }
}

#[test]
fn run_json_reports_a_paused_approval_as_events() {
    let (_dir, spec) = spec_file(
        "ask.yaml",
        "model: test\ntools: [current_date]\npermissions:\n  rules:\n    - { tool: current_date, decision: ask }\n",
    );
    let store = _dir.path().join("sessions.db");
    let out = super::common::lousho()
        .env("LOUSHO_STORE", &store)
        .args(["run", &spec, "what day is it?", "--json"])
        .output()
        .unwrap();
    // Without a terminal the run pauses for approval (exit code 4).
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let events: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let approval = events.iter().find(|e| e["type"] == "approval").unwrap();
    assert_eq!(approval["name"], "current_date");
    let done = events.last().unwrap();
    assert_eq!(done["type"], "done");
    assert_eq!(done["status"], "interrupted");
    assert_eq!(done["pending"][0]["name"], "current_date");
    assert_eq!(done["pending"][0]["id"], approval["id"]);
}
