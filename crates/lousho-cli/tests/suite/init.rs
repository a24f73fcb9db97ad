use super::common::{lousho, stderr, stdout};

#[test]
fn init_writes_a_spec_that_runs_and_never_overwrites() {
    let dir = tempfile::tempdir().unwrap();
    let out = lousho()
        .current_dir(dir.path())
        .env_remove("LOUSHO_MODEL")
        .args(["init", "--name", "helper"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let spec = dir.path().join("agent.yaml");
    let text = std::fs::read_to_string(&spec).unwrap();
    assert!(text.contains("name: \"helper\""), "{text}");
    assert!(
        text.lines().filter(|l| l.starts_with('#')).count() > 5,
        "commented: {text}"
    );
    // The entries for the three clients name the spec's absolute path.
    let printed = stdout(&out);
    let absolute = spec.to_string_lossy();
    assert!(printed.contains("\"mcpServers\""), "{printed}");
    assert!(printed.contains("\"servers\""), "{printed}");
    assert!(printed.contains(&*absolute), "{printed}");
    for client in [".mcp.json", ".cursor/mcp.json", ".vscode/mcp.json"] {
        assert!(printed.contains(client), "{client}: {printed}");
    }

    // The spec is valid and runs offline as written.
    let ran = lousho()
        .current_dir(dir.path())
        .env_remove("LOUSHO_MODEL")
        .args(["run", "agent.yaml", "hello"])
        .output()
        .unwrap();
    assert!(ran.status.success(), "{}", stderr(&ran));
    assert!(stdout(&ran).contains("current_date"), "{}", stdout(&ran));

    // A second init refuses (exit 2) and leaves the file as it was.
    std::fs::write(&spec, "name: mine\n").unwrap();
    let again = lousho()
        .current_dir(dir.path())
        .args(["init"])
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(2), "{}", stderr(&again));
    assert!(
        stderr(&again).contains("never overwrites"),
        "{}",
        stderr(&again)
    );
    assert_eq!(std::fs::read_to_string(&spec).unwrap(), "name: mine\n");
}

#[test]
fn init_names_the_agent_after_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = lousho()
        .current_dir(dir.path())
        .args(["init", "bots/support bot.yaml"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(dir.path().join("bots/support bot.yaml")).unwrap();
    assert!(text.contains("name: \"support-bot\""), "{text}");
}
