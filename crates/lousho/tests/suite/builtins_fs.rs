//! The file tools on temp trees: what they return, what they skip, their caps.

use lousho::builtin::{FsLimits, Workspace, builtin_tools, fs_tools};
use lousho::model::testing::{ScriptedModel, ScriptedTurn};
use lousho::{Agent, ToolContext, ToolSet};
use serde_json::{Value, json};
use std::path::Path;
use tempfile::TempDir;

/// A temp tree from `(path, contents)` pairs.
pub(crate) fn tree(files: &[(&str, &[u8])]) -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, contents) in files {
        let full = dir.path().join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, contents).unwrap();
    }
    dir
}

/// What a tool call gave: its text and whether it was an error result.
#[derive(Debug)]
pub(crate) struct Called {
    pub text: String,
    pub is_error: bool,
}

pub(crate) async fn call(tools: &ToolSet, name: &str, args: Value) -> Called {
    let tool = tools.get(name).unwrap_or_else(|| panic!("no tool {name}"));
    match tool.call(args, ToolContext::new("test")).await {
        Ok(out) => Called {
            text: out.to_model_text(),
            is_error: out.is_error,
        },
        Err(e) => Called {
            text: e.to_string(),
            is_error: true,
        },
    }
}

pub(crate) async fn ok(tools: &ToolSet, name: &str, args: Value) -> String {
    let called = call(tools, name, args).await;
    assert!(!called.is_error, "{name} failed: {}", called.text);
    called.text
}

pub(crate) async fn err(tools: &ToolSet, name: &str, args: Value) -> String {
    let called = call(tools, name, args).await;
    assert!(
        called.is_error,
        "{name} should have failed but gave: {}",
        called.text
    );
    called.text
}

fn tools_with(dir: &Path, limits: FsLimits) -> ToolSet {
    fs_tools(Workspace::new(dir).unwrap().with_limits(limits)).unwrap()
}

fn numbered(n: usize) -> Vec<u8> {
    (1..=n)
        .map(|i| format!("line {i}\n"))
        .collect::<String>()
        .into_bytes()
}

#[tokio::test]
async fn read_file_numbers_lines_and_pages_with_offset_and_limit() {
    let dir = tree(&[("src/notes.txt", &numbered(10))]);
    let tools = fs_tools(dir.path()).unwrap();

    let all = ok(&tools, "read_file", json!({"path": "src/notes.txt"})).await;
    assert!(all.starts_with("     1\tline 1\n     2\tline 2\n"), "{all}");
    assert!(
        all.ends_with("    10\tline 10\n"),
        "a whole file has no note: {all}"
    );

    let page = ok(
        &tools,
        "read_file",
        json!({"path": "src/notes.txt", "offset": 4, "limit": 3}),
    )
    .await;
    assert_eq!(
        page,
        "     4\tline 4\n     5\tline 5\n     6\tline 6\n\
         [showing lines 4-6 of 10 (`limit` 3); call read_file with offset 7 to read on]\n"
    );

    let past = err(
        &tools,
        "read_file",
        json!({"path": "src/notes.txt", "offset": 11}),
    )
    .await;
    assert!(
        past.contains("past the end") && past.contains("10 lines"),
        "{past}"
    );
}

#[tokio::test]
async fn read_file_caps_lines_and_bytes_with_a_note_giving_the_next_offset() {
    let dir = tree(&[
        ("big.txt", &numbered(5000)),
        ("last.txt", b"a\nb\nno newline"),
    ]);
    let tools = fs_tools(dir.path()).unwrap();
    let text = ok(&tools, "read_file", json!({"path": "big.txt"})).await;
    assert!(text.contains("  2000\tline 2000\n"));
    assert!(!text.contains("line 2001"));
    assert!(
        text.ends_with("[showing lines 1-2000 of 5000 (at most 2000 lines per call); call read_file with offset 2001 to read on]\n"),
        "{}",
        &text[text.len() - 200..]
    );
    // A limit above the cap is held to the cap.
    let text = ok(
        &tools,
        "read_file",
        json!({"path": "big.txt", "offset": 4001, "limit": 99999}),
    )
    .await;
    assert!(text.starts_with("  4001\tline 4001\n") && text.ends_with("  5000\tline 5000\n"));

    // The last line without a newline counts.
    let text = ok(&tools, "read_file", json!({"path": "last.txt", "limit": 1})).await;
    assert!(text.contains("of 3 "), "{text}");

    let mut limits = FsLimits::default();
    limits.read_bytes = 1024;
    let small = tools_with(dir.path(), limits);
    let text = ok(&small, "read_file", json!({"path": "big.txt"})).await;
    assert!(text.len() < 1024 + 200, "{} bytes", text.len());
    assert!(
        text.contains("(output capped at 1 KiB); call read_file with offset"),
        "{text}"
    );
}

#[tokio::test]
async fn read_file_cuts_very_long_lines_with_a_note() {
    let long = format!("{}\n", "x".repeat(5000));
    let dir = tree(&[("min.js", long.as_bytes())]);
    let tools = fs_tools(dir.path()).unwrap();
    let text = ok(&tools, "read_file", json!({"path": "min.js"})).await;
    assert!(text.contains(&format!(
        "{} … [line cut: 3000 more characters]",
        "x".repeat(2000)
    )));

    // A line far past the cap is not held in memory whole, and still counted right.
    let huge = format!("{}\nafter\n", "é".repeat(100_000));
    let dir = tree(&[("huge.txt", huge.as_bytes())]);
    let tools = fs_tools(dir.path()).unwrap();
    let text = ok(&tools, "read_file", json!({"path": "huge.txt"})).await;
    assert_eq!(
        text,
        format!(
            "     1\t{} … [line cut: 98000 more characters]\n     2\tafter\n",
            "é".repeat(2000)
        )
    );
}

#[tokio::test]
async fn read_file_refuses_binary_files() {
    let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    png.extend_from_slice(&[0u8; 64]);
    let mut late_nul = numbered(3000);
    late_nul.extend_from_slice(b"tail\0here\n");
    let dir = tree(&[
        ("logo.png", &png),
        ("late.txt", &late_nul),
        ("utf16.txt", b"\xFF\xFEh\0i\0"),
    ]);
    let tools = fs_tools(dir.path()).unwrap();

    let msg = err(&tools, "read_file", json!({"path": "logo.png"})).await;
    assert!(msg.contains("`logo.png` looks like a binary file"), "{msg}");
    assert!(msg.contains("read_file shows text files only"), "{msg}");

    // A NUL past the sniffed head is caught when its line is read.
    let msg = err(
        &tools,
        "read_file",
        json!({"path": "late.txt", "offset": 2990}),
    )
    .await;
    assert!(msg.contains("NUL byte on line 3001"), "{msg}");

    let msg = err(&tools, "read_file", json!({"path": "utf16.txt"})).await;
    assert!(msg.contains("UTF-16"), "{msg}");
}

#[tokio::test]
async fn read_file_shows_invalid_utf8_as_replacement_characters_with_a_note() {
    let dir = tree(&[
        ("latin1.txt", b"caf\xe9\nok\n"),
        ("bom.txt", b"\xEF\xBB\xBFhello\n"),
    ]);
    let tools = fs_tools(dir.path()).unwrap();
    let text = ok(&tools, "read_file", json!({"path": "latin1.txt"})).await;
    assert!(
        text.starts_with("     1\tcaf\u{FFFD}\n     2\tok\n"),
        "{text}"
    );
    assert!(text.contains("not valid UTF-8"), "{text}");
    let text = ok(&tools, "read_file", json!({"path": "bom.txt"})).await;
    assert_eq!(text, "     1\thello\n");
}

#[tokio::test]
async fn read_file_on_a_directory_or_empty_file_says_so() {
    let dir = tree(&[("src/a.rs", b""), ("empty.txt", b"")]);
    let tools = fs_tools(dir.path()).unwrap();
    let msg = err(&tools, "read_file", json!({"path": "src"})).await;
    assert!(msg.contains("is a directory; use list_dir"), "{msg}");
    let text = ok(&tools, "read_file", json!({"path": "empty.txt"})).await;
    assert!(text.contains("is empty"), "{text}");
    let msg = err(&tools, "read_file", json!({"path": "nope.txt"})).await;
    assert!(
        msg.contains("`nope.txt` does not exist in the workspace"),
        "{msg}"
    );
    let msg = err(&tools, "read_file", json!({"file": "x"})).await;
    assert!(msg.contains("invalid arguments for `read_file`"), "{msg}");
}

#[tokio::test]
async fn list_dir_shows_kind_and_size_sorted_and_leaves_out_ignored_entries() {
    let dir = tree(&[
        (".gitignore", b"target/\n*.log\n"),
        ("b.txt", b"12345"),
        ("a.rs", b"fn main() {}\n"),
        ("src/lib.rs", b""),
        ("target/debug/x", b""),
        ("debug.log", b"noise"),
        (".env", b"SECRET=1"),
    ]);
    let tools = fs_tools(dir.path()).unwrap();
    let text = ok(&tools, "list_dir", json!({})).await;
    assert_eq!(
        text,
        "file  a.rs (13 bytes)\nfile  b.txt (5 bytes)\ndir   src/\n\
         [4 hidden or ignored (.gitignore/.ignore) entries not shown; glob and grep skip them too]\n"
    );
    assert_eq!(
        ok(&tools, "list_dir", json!({"path": "src"})).await,
        "file  lib.rs (0 bytes)\n"
    );
    let msg = err(&tools, "list_dir", json!({"path": "a.rs"})).await;
    assert!(msg.contains("is not a directory; use read_file"), "{msg}");
}

#[tokio::test]
async fn list_dir_caps_entries_with_a_note() {
    let files: Vec<(String, Vec<u8>)> = (0..30).map(|i| (format!("f{i:02}.txt"), vec![])).collect();
    let refs: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_slice()))
        .collect();
    let dir = tree(&refs);
    let mut limits = FsLimits::default();
    limits.list_entries = 10;
    let tools = tools_with(dir.path(), limits);
    let text = ok(&tools, "list_dir", json!({"path": "."})).await;
    assert_eq!(text.lines().count(), 11);
    assert!(text.starts_with("file  f00.txt"));
    assert!(text.lines().nth(9).unwrap().contains("f09.txt"));
    assert!(
        text.contains("[showing the first 10 of 30 entries; use glob"),
        "{text}"
    );
}

#[tokio::test]
async fn glob_matches_sorted_paths_and_respects_ignore_files() {
    let dir = tree(&[
        (".gitignore", b"/build/\n"),
        (".ignore", b"vendored.rs\n"),
        ("src/main.rs", b""),
        ("src/util/mod.rs", b""),
        ("src/vendored.rs", b""),
        ("build/gen.rs", b""),
        ("top.rs", b""),
        ("README.md", b""),
        (".hidden/x.rs", b""),
    ]);
    let tools = fs_tools(dir.path()).unwrap();
    assert_eq!(
        ok(&tools, "glob", json!({"pattern": "**/*.rs"})).await,
        "src/main.rs\nsrc/util/mod.rs\ntop.rs\n"
    );
    // `*` stays within one folder.
    assert_eq!(
        ok(&tools, "glob", json!({"pattern": "*.rs"})).await,
        "top.rs\n"
    );
    // Relative to `path`, shown relative to the root.
    assert_eq!(
        ok(&tools, "glob", json!({"pattern": "*.rs", "path": "src"})).await,
        "src/main.rs\n"
    );
    assert_eq!(
        ok(&tools, "glob", json!({"pattern": "*.{md,rs}"})).await,
        "README.md\ntop.rs\n"
    );
    // A hidden folder named as `path` is walked (only hidden entries below it are skipped).
    assert_eq!(
        ok(
            &tools,
            "glob",
            json!({"pattern": "*.rs", "path": ".hidden"})
        )
        .await,
        ".hidden/x.rs\n"
    );
    let none = ok(&tools, "glob", json!({"pattern": "**/*.py"})).await;
    assert!(none.starts_with("no files match `**/*.py`"), "{none}");
    let msg = err(&tools, "glob", json!({"pattern": "src/[a-"})).await;
    assert!(msg.contains("invalid glob pattern `src/[a-`"), "{msg}");
}

#[tokio::test]
async fn glob_caps_results_with_a_note() {
    let files: Vec<(String, Vec<u8>)> = (0..50)
        .map(|i| (format!("d{}/f{i:02}.txt", i % 3), vec![]))
        .collect();
    let refs: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_slice()))
        .collect();
    let dir = tree(&refs);
    let mut limits = FsLimits::default();
    limits.glob_results = 7;
    let tools = tools_with(dir.path(), limits);
    let text = ok(&tools, "glob", json!({"pattern": "**/*.txt"})).await;
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 8);
    let mut sorted = lines[..7].to_vec();
    sorted.sort_unstable();
    assert_eq!(sorted, lines[..7], "sorted by path");
    assert_eq!(lines[0], "d0/f00.txt");
    assert_eq!(
        lines[7],
        "[showing the first 7 of 50 matching files (sorted by path); narrow the pattern or set `path`]"
    );
}

#[tokio::test]
async fn grep_reports_path_and_line_sorted_and_skips_ignored_and_binary_files() {
    let mut binary = b"needle in a binary\n\0\0\0".to_vec();
    binary.extend_from_slice(&[0xffu8; 100]);
    let dir = tree(&[
        (".gitignore", b"ignored/\n"),
        ("b.rs", b"one\nneedle two\nthree\n"),
        ("a/deep.rs", b"needle here\nand needle again\n"),
        ("ignored/secret.rs", b"needle hidden\n"),
        ("blob.bin", &binary),
        ("none.rs", b"nothing\n"),
    ]);
    let tools = fs_tools(dir.path()).unwrap();
    let text = ok(&tools, "grep", json!({"pattern": "needle"})).await;
    assert_eq!(
        text,
        "a/deep.rs:1:needle here\na/deep.rs:2:and needle again\nb.rs:2:needle two\n\
         [3 matching lines in 2 files; 1 binary file skipped]\n"
    );

    // A path named explicitly is searched even when an ignore rule covers it.
    let text = ok(
        &tools,
        "grep",
        json!({"pattern": "needle", "path": "ignored"}),
    )
    .await;
    assert_eq!(
        text,
        "ignored/secret.rs:1:needle hidden\n[1 matching line in 1 file]\n"
    );
    let text = ok(
        &tools,
        "grep",
        json!({"pattern": "needle", "path": "ignored/secret.rs"}),
    )
    .await;
    assert_eq!(
        text,
        "ignored/secret.rs:1:needle hidden\n[1 matching line in 1 file]\n"
    );
    let text = ok(&tools, "grep", json!({"pattern": "two", "path": "b.rs"})).await;
    assert_eq!(text, "b.rs:2:needle two\n[1 matching line in 1 file]\n");

    let none = ok(&tools, "grep", json!({"pattern": "absent"})).await;
    assert!(
        none.starts_with("no matches for `absent` in `.` (4 files searched; 1 binary file skipped"),
        "{none}"
    );
}

#[tokio::test]
async fn grep_shows_context_and_honours_case_and_glob() {
    let dir = tree(&[
        (
            "src/a.rs",
            b"l1\nl2\nTODO first\nl4\nl5\nl6\nl7\nl8\ntodo second\nl10\n",
        ),
        ("docs/b.md", b"TODO in docs\n"),
    ]);
    let tools = fs_tools(dir.path()).unwrap();
    let text = ok(
        &tools,
        "grep",
        json!({"pattern": "todo", "case_insensitive": true, "glob": "*.rs", "context": 1}),
    )
    .await;
    assert_eq!(
        text,
        "src/a.rs-2-l2\nsrc/a.rs:3:TODO first\nsrc/a.rs-4-l4\n--\n\
         src/a.rs-8-l8\nsrc/a.rs:9:todo second\nsrc/a.rs-10-l10\n[2 matching lines in 1 file]\n"
    );
    let text = ok(&tools, "grep", json!({"pattern": "TODO"})).await;
    assert_eq!(
        text,
        "docs/b.md:1:TODO in docs\nsrc/a.rs:3:TODO first\n[2 matching lines in 2 files]\n"
    );
    let text = ok(&tools, "grep", json!({"pattern": "TODO", "glob": "!*.md"})).await;
    assert_eq!(text, "src/a.rs:3:TODO first\n[1 matching line in 1 file]\n");
}

#[tokio::test]
async fn grep_caps_results_with_a_note() {
    let many: String = (1..=300).map(|i| format!("hit {i}\n")).collect();
    let dir = tree(&[("a.txt", many.as_bytes()), ("b.txt", b"hit b\n")]);
    let tools = fs_tools(dir.path()).unwrap();
    let text = ok(&tools, "grep", json!({"pattern": "hit"})).await;
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 101);
    assert_eq!(lines[99], "a.txt:100:hit 100");
    assert_eq!(
        lines[100],
        "[showing 100 of 301 matching lines in 2 files; narrow the pattern, set `path` or `glob`, or raise `max_results`]"
    );
    let text = ok(&tools, "grep", json!({"pattern": "hit", "max_results": 5})).await;
    assert_eq!(text.lines().count(), 6);
    assert!(text.contains("showing 5 of 301"));
    // Above the ceiling is held to it.
    let text = ok(
        &tools,
        "grep",
        json!({"pattern": "hit", "max_results": 100000}),
    )
    .await;
    assert!(text.ends_with("[301 matching lines in 2 files]\n"));

    let long = format!("hit {}\n", "y".repeat(1000));
    let dir = tree(&[("long.txt", long.as_bytes())]);
    let tools = fs_tools(dir.path()).unwrap();
    let text = ok(&tools, "grep", json!({"pattern": "hit"})).await;
    assert!(text.contains("… [line cut: 504 more characters]"), "{text}");
}

#[tokio::test]
async fn grep_invalid_regex_is_a_clear_error_result_the_model_sees() {
    let dir = tree(&[("a.txt", b"x\n")]);
    let model = ScriptedModel::new([
        ScriptedTurn::tool_call("grep", json!({"pattern": "fn (main"})),
        ScriptedTurn::text("done"),
    ]);
    let agent = Agent::builder()
        .model(model)
        .tools(fs_tools(dir.path()).unwrap())
        .build()
        .unwrap();
    let reply = agent.send("search").await.unwrap();
    let output = &reply.tool_calls[0].output;
    assert!(output.is_error);
    let text = output.to_model_text();
    assert!(
        text.starts_with("invalid regular expression `fn (main`:"),
        "{text}"
    );
    assert!(text.contains("unclosed group"), "{text}");
    assert_eq!(reply.text, "done", "a failing tool does not end the run");
}

#[tokio::test]
async fn file_tools_are_read_only_and_builtins_are_found_by_name() {
    let dir = tree(&[]);
    let tools = fs_tools(dir.path()).unwrap();
    for tool in tools.iter() {
        let a = &tool.spec().annotations;
        assert_eq!(
            (a.read_only, a.destructive),
            (Some(true), Some(false)),
            "{}",
            tool.spec().name
        );
        assert!(!tool.spec().needs_approval());
    }
    let ws = Workspace::new(dir.path()).unwrap();
    let set = builtin_tools(["grep", "read_file", "grep", "day_name"], &ws).unwrap();
    assert_eq!(
        set.names().collect::<Vec<_>>(),
        ["day_name", "grep", "read_file"]
    );
    let e = builtin_tools(["grep", "bash"], &ws).unwrap_err();
    assert_eq!(e.name, "bash");
    assert!(
        e.to_string()
            .contains("`bash` is not a built-in tool; the built-ins are: read_file")
    );
    let all = builtin_tools(lousho::builtin::BUILTIN_NAMES, &ws).unwrap();
    assert_eq!(all.len(), 8);
}

#[tokio::test]
async fn a_cancelled_call_returns_cancelled() {
    let dir = tree(&[("a.txt", b"x\n")]);
    let tools = fs_tools(dir.path()).unwrap();
    let cancel = lousho::CancellationToken::new();
    cancel.cancel();
    let ctx = ToolContext::new("c").with_cancel(cancel);
    let result = tools
        .get("grep")
        .unwrap()
        .call(json!({"pattern": "x"}), ctx)
        .await;
    assert!(
        matches!(result, Err(lousho::tool::ToolError::Cancelled)),
        "{result:?}"
    );
}

#[test]
fn workspace_must_be_an_existing_folder() {
    let dir = tree(&[("file.txt", b"")]);
    let e = Workspace::new(dir.path().join("missing")).unwrap_err();
    assert!(e.to_string().contains("pass an existing folder"), "{e}");
    let e = Workspace::new(dir.path().join("file.txt")).unwrap_err();
    assert!(e.to_string().contains("is not a folder"), "{e}");
}

#[test]
fn tool_specs_snapshot() {
    let dir = tree(&[]);
    let tools = fs_tools(dir.path()).unwrap();
    insta::assert_json_snapshot!("fs_tool_specs", crate::suite::builtins_todo::specs(&tools));
}

#[tokio::test]
async fn grep_stops_on_a_flood_of_matches_and_says_so() {
    // 250 files × 100 matching lines: past the 20,000 lines grep keeps.
    let lines: String = (1..=100).map(|i| format!("match {i}\n")).collect();
    let files: Vec<(String, Vec<u8>)> = (0..250)
        .map(|i| {
            (
                format!("d{}/f{i:03}.txt", i % 10),
                lines.clone().into_bytes(),
            )
        })
        .collect();
    let refs: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_slice()))
        .collect();
    let dir = tree(&refs);
    let tools = fs_tools(dir.path()).unwrap();
    let text = ok(
        &tools,
        "grep",
        json!({"pattern": "match", "max_results": 100}),
    )
    .await;
    assert_eq!(text.lines().count(), 101);
    let note = text.lines().last().unwrap();
    assert!(
        note.starts_with("[showing 100 matching lines; the search stopped after 20000 matches"),
        "{note}"
    );
    assert!(
        note.contains("not necessarily the first in path order"),
        "{note}"
    );
}

#[tokio::test]
async fn grep_on_a_single_binary_file_says_it_was_skipped() {
    let dir = tree(&[("data.bin", b"abc\0def needle\n")]);
    let tools = fs_tools(dir.path()).unwrap();
    let text = ok(
        &tools,
        "grep",
        json!({"pattern": "needle", "path": "data.bin"}),
    )
    .await;
    assert!(
        text.starts_with(
            "no matches for `needle` in `data.bin` (1 file searched; 1 binary file skipped"
        ),
        "{text}"
    );
}
