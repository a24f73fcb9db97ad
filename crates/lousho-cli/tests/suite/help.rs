use super::common::{run, stdout};

#[test]
fn help_texts() {
    insta::assert_snapshot!("help", stdout(&run(&["--help"])));
    for cmd in [
        "mcp", "run", "tools", "call", "pin", "login", "logout", "doctor",
    ] {
        let out = run(&[cmd, "--help"]);
        assert!(out.status.success());
        insta::assert_snapshot!(format!("help_{cmd}"), stdout(&out));
    }
}
