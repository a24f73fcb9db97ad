use super::common::{run, stderr, stdout};

#[test]
fn completions_name_the_subcommands_for_each_shell() {
    for shell in ["bash", "zsh", "fish"] {
        let out = run(&["completions", shell]);
        assert!(out.status.success(), "{shell}: {}", stderr(&out));
        let script = stdout(&out);
        for word in ["lousho", "run", "tools", "mcp", "init", "verbose"] {
            assert!(script.contains(word), "{shell} lacks {word}");
        }
    }
    assert_eq!(run(&["completions", "tcsh"]).status.code(), Some(2));
}

#[test]
fn version_names_the_mcp_protocol_versions() {
    let out = run(&["--version"]);
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(text.starts_with("lousho 0."), "{text}");
    for version in ["2024-11-05", "2025-06-18", "2025-11-25"] {
        assert!(text.contains(version), "{text}");
    }
}
