use super::common::{example, run, spec_file, stderr, stdout};

#[test]
fn run_with_the_test_model_prints_the_answer() {
    let (_dir, spec) = spec_file("echo.yaml", "model: test\nprompt: Be brief.\n");
    let out = run(&["run", &spec, "hello there"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "You said: hello there\n");
}

#[test]
fn the_quickstart_lists_and_calls_tools_of_a_real_stdio_mcp_server() {
    let out = run(&[
        "run",
        &example("quickstart.yaml"),
        "What is in this folder?",
    ]);
    let (so, se) = (stdout(&out), stderr(&out));
    assert!(out.status.success(), "{se}");
    assert!(se.contains("mcp: files connected (3 tools)"), "{se}");
    // The served agent's directly exposed tools were called over MCP.
    assert!(se.contains("→ files__list_dir"), "{se}");
    assert!(so.contains("- files__list_dir"), "{so}");
    assert!(so.contains("- files__read_file"), "{so}");
    // The deny rule in the spec kept the agent tool from the model: it was
    // never offered, so never called.
    assert!(!so.contains("files__files"), "{so}");
    assert!(!se.contains("files__files"), "{se}");
}

#[test]
fn model_flag_overrides_the_spec() {
    let (_dir, spec) = spec_file("m.yaml", "model: openai/gpt-4o-mini\n");
    let out = super::common::lousho()
        .args(["run", &spec, "--model", "test", "hi"])
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "You said: hi\n");
}
