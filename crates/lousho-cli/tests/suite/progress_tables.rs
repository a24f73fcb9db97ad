//! Spinners (indicatif) only on a terminal, and the tables (comfy-table).

use super::common::{example, lousho, run, spec_file, stderr, stdout};

/// Runs `lousho ARGS` on a pseudo-terminal (through `script`) and returns
/// what the terminal showed (stdout and stderr together).
fn on_a_terminal(args: &str) -> Option<String> {
    let script = ["/usr/bin/script", "/bin/script"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists());
    let Some(script) = script else {
        assert!(
            std::env::var_os("CI").is_none(),
            "`script` is needed under CI"
        );
        return None;
    };
    let command = format!("'{}' {args}", env!("CARGO_BIN_EXE_lousho"));
    let out = std::process::Command::new(script)
        .args(["-qec", &command, "/dev/null"])
        .env("LOUSHO_LOG", "warn")
        .env("LOUSHO_CACHE_DIR", super::common::fresh_cache_dir())
        .env("TERM", "xterm")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

const FRAMES: [char; 8] = ['⠁', '⠂', '⠄', '⡀', '⢀', '⠠', '⠐', '⠈'];

fn has_spinner_frame(text: &str) -> bool {
    // indicatif's default spinner frames, and the clear-line it draws with.
    text.chars()
        .any(|c| FRAMES.contains(&c) || ('\u{2800}'..='\u{28ff}').contains(&c))
        && text.contains("\x1b[2K")
}

#[test]
fn connecting_shows_a_spinner_on_a_terminal_and_a_plain_line_otherwise() {
    let spec = example("quickstart.yaml");
    let piped = run(&["tools", &spec]);
    assert!(piped.status.success(), "{}", stderr(&piped));
    let err = stderr(&piped);
    assert!(err.contains("connecting MCP servers: files…"), "{err}");
    assert!(
        !err.contains('\x1b'),
        "no escape codes off a terminal: {err:?}"
    );
    assert!(!has_spinner_frame(&err), "{err:?}");

    let Some(shown) = on_a_terminal(&format!("tools '{spec}'")) else {
        return;
    };
    assert!(shown.contains("connecting MCP servers: files"), "{shown:?}");
    assert!(
        has_spinner_frame(&shown),
        "a spinner on a terminal: {shown:?}"
    );
    // The spinner's line is cleared, the table is whole.
    assert!(shown.contains("files__read_file"), "{shown:?}");
    assert!(
        shown.contains("mcp: files connected (3 tools)"),
        "{shown:?}"
    );
}

#[test]
fn a_run_on_a_terminal_keeps_the_answer_whole() {
    let spec = example("quickstart.yaml");
    let Some(shown) = on_a_terminal(&format!("run '{spec}' 'What is in this folder?'")) else {
        return;
    };
    assert!(shown.contains("Tool results:"), "{shown:?}");
    assert!(shown.contains("- current_date: "), "{shown:?}");
    assert!(
        shown.contains("→ files__list_dir {\"path\":\".\"}"),
        "{shown:?}"
    );
}

#[test]
fn the_tools_table_is_aligned_and_counted() {
    let (_dir, spec) = spec_file(
        "t.yaml",
        "model: test\ntools: [grep, current_date, todo_write]\n",
    );
    let out = lousho().args(["tools", &spec]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    let origin_at = lines[0].find("ORIGIN").unwrap();
    let decision_at = lines[0].find("DECISION").unwrap();
    for row in &lines[1..4] {
        assert_eq!(row.find("builtin"), Some(origin_at), "{text}");
        assert_eq!(&row[decision_at..decision_at + 3], "run", "{text}");
        assert_eq!(row.trim_end(), *row, "no trailing spaces: {text:?}");
    }
    assert_eq!(lines[4], "(3 tools)", "{text}");

    let (_dir, one) = spec_file("one.yaml", "model: test\ntools: [day_name]\n");
    let out = lousho().args(["tools", &one]).output().unwrap();
    assert!(
        stdout(&out).lines().any(|l| l == "(1 tool)"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_servers_progress_notifications_show_on_the_spinner_line() {
    // `notes__index` of the TypeScript SDK peer sends three progress
    // notifications, 300 ms apart, before it answers.
    let Some((_dir, spec)) = super::field_order::ordered_spec() else {
        return;
    };
    let piped = lousho()
        .args(["call", &spec, "notes__index"])
        .output()
        .unwrap();
    assert!(piped.status.success(), "{}", stderr(&piped));
    assert_eq!(stdout(&piped).trim(), "indexed");
    assert!(
        !stderr(&piped).contains("indexing part"),
        "only on a terminal"
    );

    let Some(shown) = on_a_terminal(&format!("call '{spec}' notes__index")) else {
        return;
    };
    assert!(shown.contains("indexed"), "{shown:?}");
    assert!(shown.contains("running notes__index"), "{shown:?}");
    let seen = (1..=3)
        .filter(|n| {
            shown.contains(&format!(
                "running notes__index · notes {n}/3 indexing part {n}"
            ))
        })
        .count();
    assert!(seen >= 1, "the server's progress on the spinner: {shown:?}");
}
