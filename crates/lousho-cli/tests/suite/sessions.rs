//! Stored sessions and paused runs from the command line: `run --session`,
//! the prompt saving as it goes, a headless run pausing for approval and
//! `lousho resume` in a later process, `lousho sessions list|show|rm`.

use super::common::{lousho, paused_run_id, spec_file, sqlite_store, stderr, stdout, texts};
use std::io::Write;
use std::process::{Output, Stdio};

const ECHO: &str = "model: test\nprompt: Be brief.\n";
const ASK: &str = "model: test\ntools: [current_date]\npermissions:\n  rules:\n    - { tool: current_date, decision: ask }\n";

/// A spec and a store in one temp folder.
struct Setup {
    dir: tempfile::TempDir,
    spec: String,
}

impl Setup {
    fn new(spec: &str) -> Self {
        let (dir, spec) = spec_file("agent.yaml", spec);
        Self { dir, spec }
    }

    fn store(&self) -> String {
        sqlite_store(&self.dir)
    }

    fn lousho(&self, args: &[&str]) -> Output {
        lousho()
            .env("LOUSHO_STORE", self.store())
            .args(args)
            .output()
            .unwrap()
    }

    fn show_json(&self, name: &str) -> Vec<serde_json::Value> {
        let out = self.lousho(&["sessions", "show", name, "--json"]);
        assert!(out.status.success(), "{}", stderr(&out));
        serde_json::from_str(&stdout(&out)).unwrap()
    }
}

#[test]
fn run_with_a_session_continues_the_conversation_in_the_next_process() {
    let s = Setup::new(ECHO);
    let first = s.lousho(&["run", &s.spec, "--session", "chat", "I am Ada"]);
    assert!(first.status.success(), "{}", stderr(&first));
    let second = s.lousho(&["run", &s.spec, "--session", "chat", "Who am I?"]);
    assert!(second.status.success(), "{}", stderr(&second));
    assert_eq!(stdout(&second), "You said: Who am I?\n");
    assert_eq!(
        texts(&s.show_json("chat")),
        [
            "I am Ada",
            "You said: I am Ada",
            "Who am I?",
            "You said: Who am I?"
        ]
    );
}

#[test]
fn the_prompt_with_a_session_saves_each_answer() {
    let s = Setup::new(ECHO);
    let mut child = lousho()
        .env("LOUSHO_STORE", s.store())
        .args(["run", &s.spec, "--session", "repl"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"first\nsecond\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("Session `repl`: 0 earlier messages"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        texts(&s.show_json("repl")),
        ["first", "You said: first", "second", "You said: second"]
    );
}

#[test]
fn a_headless_run_that_needs_approval_pauses_and_resumes_in_a_later_process() {
    let s = Setup::new(ASK);
    let out = s.lousho(&["run", &s.spec, "--session", "day", "what day is it?"]);
    let id = paused_run_id(&out, "current_date");
    assert!(
        s.show_json("day").is_empty(),
        "the paused turn is not history yet"
    );

    // The pausing process has exited; a new one goes on.
    let out = s.lousho(&["resume", &id, "--approve", "current_date"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("- current_date: 20"),
        "{}",
        stdout(&out)
    );
    let messages = s.show_json("day");
    assert_eq!(
        messages.len(),
        4,
        "user, call, result, answer: {messages:?}"
    );
    assert_eq!(messages[2]["parts"][0]["output"]["is_error"], false);

    // A resumed run is gone from the store.
    let again = s.lousho(&["resume", &id, "--approve", "current_date"]);
    assert_eq!(again.status.code(), Some(2));
    assert!(
        stderr(&again).contains("no paused run"),
        "{}",
        stderr(&again)
    );
}

#[test]
fn resume_with_deny_gives_the_model_a_denied_result() {
    let s = Setup::new(ASK);
    let id = paused_run_id(
        &s.lousho(&["run", &s.spec, "what day is it?"]),
        "current_date",
    );
    let out = s.lousho(&["resume", &id, "--deny", "current_date"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("current_date (error)"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn resume_refuses_a_tool_with_no_pending_call_and_keeps_the_run() {
    let s = Setup::new(ASK);
    let id = paused_run_id(
        &s.lousho(&["run", &s.spec, "what day is it?"]),
        "current_date",
    );
    let out = s.lousho(&["resume", &id, "--approve", "delete_everything"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("`delete_everything` has no call waiting for approval in this run (pending: current_date)"),
        "{}",
        stderr(&out)
    );
    let out = s.lousho(&["resume", &id]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--approve TOOL or --deny TOOL"),
        "{}",
        stderr(&out)
    );
    // Still there.
    let out = s.lousho(&["resume", &id, "--approve", "current_date"]);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn sessions_list_show_and_rm() {
    let s = Setup::new(ECHO);
    let empty = s.lousho(&["sessions", "list"]);
    assert!(empty.status.success(), "{}", stderr(&empty));
    assert!(
        stdout(&empty).starts_with("no sessions"),
        "{}",
        stdout(&empty)
    );
    for name in ["alpha", "beta"] {
        let out = s.lousho(&["run", &s.spec, "--session", name, "hi"]);
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let list = stdout(&s.lousho(&["sessions", "list"]));
    let names: Vec<&str> = list
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(names, ["beta", "alpha"], "{list}");
    assert!(list.lines().nth(1).unwrap().contains(" 2 "), "{list}");
    let show = stdout(&s.lousho(&["sessions", "show", "alpha"]));
    assert_eq!(show, "user: hi\nassistant: You said: hi\n");
    let rm = s.lousho(&["sessions", "rm", "alpha"]);
    assert!(rm.status.success(), "{}", stderr(&rm));
    let again = s.lousho(&["sessions", "rm", "alpha"]);
    assert_eq!(again.status.code(), Some(2));
    assert!(
        stderr(&again).contains("no session `alpha`"),
        "{}",
        stderr(&again)
    );
    let json: Vec<serde_json::Value> =
        serde_json::from_str(&stdout(&s.lousho(&["sessions", "list", "--json"]))).unwrap();
    assert_eq!(json.len(), 1);
    assert_eq!(json[0]["id"], "beta");
    assert_eq!(json[0]["messages"], 2);
}

#[test]
fn sessions_show_prints_a_summary_after_the_messages_it_replaced() {
    // The second turn passes the context budget: compaction (by the echoing
    // test model) summarises the first answer; the original stays.
    let s = Setup::new("model: test\ncontextBudget: 120\ncompaction:\n  keepTokens: 20\n");
    let pad = "x".repeat(200);
    for (i, input) in [format!("TASK {pad}"), format!("more {pad}")]
        .iter()
        .enumerate()
    {
        let out = s.lousho(&["run", &s.spec, "--session", "trip", input]);
        assert!(out.status.success(), "{}", stderr(&out));
        // The run says so on stderr, where it shows its other events.
        assert_eq!(
            stderr(&out).contains("compacted message 2 (by test)"),
            i == 1,
            "{}",
            stderr(&out)
        );
    }
    let show = stdout(&s.lousho(&["sessions", "show", "trip"]));
    let lines: Vec<&str> = show.lines().collect();
    assert!(lines[0].starts_with("user: TASK xxx"), "{show}");
    assert!(
        lines[1].starts_with("assistant: You said: TASK xxx"),
        "the replaced message is still there: {show}"
    );
    assert!(lines[2].starts_with("user: more xxx"), "{show}");
    assert!(
        lines[3].starts_with("summary of message 2 (by test): You said: "),
        "{show}"
    );
    let json = s.show_json("trip");
    assert_eq!(json.len(), 5, "task, answer, input, summary, answer");
    let summary = &json[3]["parts"][0];
    assert_eq!(summary["type"], "summary");
    assert_eq!(summary["from"], 1);
    assert_eq!(summary["to"], 2);
    assert_eq!(summary["model"], "test");
}

#[test]
fn run_json_has_a_line_for_a_compaction() {
    // As above: the second run's conversation is summarised before its turn.
    let s = Setup::new("model: test\ncontextBudget: 120\ncompaction:\n  keepTokens: 20\n");
    let pad = "x".repeat(200);
    let first = format!("TASK {pad}");
    let out = s.lousho(&["run", &s.spec, "--session", "trip", &first]);
    assert!(out.status.success(), "{}", stderr(&out));
    let second = format!("more {pad}");
    let out = s.lousho(&["run", &s.spec, "--session", "trip", &second, "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let lines: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let types: Vec<&str> = lines.iter().filter_map(|l| l["type"].as_str()).collect();
    let at = types.iter().position(|t| *t == "compacted");
    assert!(
        at.is_some_and(|at| at < types.iter().position(|t| *t == "usage").unwrap()),
        "one compacted line, before the turn: {types:?}"
    );
    let line = &lines[at.unwrap()];
    assert_eq!(line["from"], 1, "{line}");
    assert_eq!(line["to"], 2, "{line}");
    assert_eq!(line["model"], "test");
    assert!(
        line["text"].as_str().unwrap().starts_with("You said: "),
        "{line}"
    );
    assert_eq!(types.iter().filter(|t| **t == "compacted").count(), 1);
}
