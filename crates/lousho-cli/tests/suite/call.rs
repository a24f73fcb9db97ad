use super::common::{example, run, spec_file, stderr, stdout};

#[test]
fn call_prints_a_builtin_tools_result() {
    let (dir, spec) = spec_file("c.yaml", "model: test\ntools: [read_file]\n");
    std::fs::write(dir.path().join("notes.txt"), "remember the milk\n").unwrap();
    let out = run(&["call", &spec, "read_file", r#"{"path": "notes.txt"}"#]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("remember the milk"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn call_reaches_an_mcp_servers_tool() {
    let out = run(&[
        "call",
        &example("quickstart.yaml"),
        "files__read_file",
        r#"{"path": "files.yaml"}"#,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("A small file-reading agent"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn call_goes_through_permission_rules() {
    let out = run(&[
        "call",
        &example("quickstart.yaml"),
        "files__files",
        r#"{"message": "hi"}"#,
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("denied by a permission rule"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn call_of_an_unknown_tool_names_the_tools() {
    let (_dir, spec) = spec_file("c.yaml", "model: test\ntools: [day_name]\n");
    let out = run(&["call", &spec, "nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("day_name"), "{}", stderr(&out));
}
