use super::common::{lousho, run, spec_file, stderr};

#[test]
fn an_unknown_key_names_file_line_key_and_a_suggestion() {
    let (_dir, spec) = spec_file("bad.yaml", "model: test\nprompt: hi\nmcpservers: {}\n");
    let out = run(&["run", &spec, "x"]);
    assert_eq!(out.status.code(), Some(2));
    let se = stderr(&out);
    assert!(se.contains("bad.yaml:3"), "{se}");
    assert!(se.contains("unknown key `mcpservers`"), "{se}");
    assert!(se.contains("did you mean `mcpServers`?"), "{se}");
}

#[test]
fn an_unknown_key_inside_a_server_entry_is_named_with_its_path() {
    let (_dir, spec) = spec_file(
        "bad.yaml",
        "model: test\nmcpServers:\n  files:\n    command: x\n    arg: [y]\n",
    );
    let out = run(&["tools", &spec]);
    assert_eq!(out.status.code(), Some(2));
    let se = stderr(&out);
    assert!(se.contains("bad.yaml:5"), "{se}");
    assert!(se.contains("mcpServers.files"), "{se}");
    assert!(se.contains("`args`"), "{se}");
}

#[test]
fn an_unset_variable_is_named_with_its_line() {
    let (_dir, spec) = spec_file(
        "vars.yaml",
        "model: test\nserve:\n  auth: { type: bearer, token: \"${LOUSHO_TEST_UNSET_TOKEN}\" }\n",
    );
    let out = lousho()
        .args(["mcp", &spec])
        .env_remove("LOUSHO_TEST_UNSET_TOKEN")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let se = stderr(&out);
    assert!(se.contains("vars.yaml:3"), "{se}");
    assert!(se.contains("LOUSHO_TEST_UNSET_TOKEN"), "{se}");
    assert!(se.contains("serve.auth.token"), "{se}");
}

#[test]
fn bad_yaml_names_the_line() {
    let (_dir, spec) = spec_file("broken.yaml", "model: test\nprompt: [unclosed\ntools: []\n");
    let out = run(&["tools", &spec]);
    assert_eq!(out.status.code(), Some(2));
    let se = stderr(&out);
    assert!(se.contains("broken.yaml:"), "{se}");
    assert!(se.contains("not valid YAML"), "{se}");
}

#[test]
fn a_wrong_type_and_a_bad_model_name_the_key() {
    let (_dir, spec) = spec_file("t.yaml", "model: test\nmaxTurns: lots\n");
    let out = run(&["run", &spec, "x"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("t.yaml:2"), "{}", stderr(&out));
    assert!(stderr(&out).contains("maxTurns"), "{}", stderr(&out));

    let (_dir, spec) = spec_file("m.yaml", "prompt: hi\nmodel: gpt4\n");
    let out = run(&["run", &spec, "x"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("m.yaml:2: `model`: `gpt4` is not a model string"),
        "{}",
        stderr(&out)
    );
}

#[cfg(unix)]
#[test]
fn a_named_pipe_as_the_spec_is_refused_at_once_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("agent.yaml");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let mut child = lousho()
        .args(["run", fifo.to_str().unwrap(), "hello"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    let stderr_pipe = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut { stderr_pipe }, &mut text);
        let _ = tx.send(text);
    });
    // stderr ends when lousho exits; a lousho blocked on the pipe is killed.
    let Ok(se) = rx.recv_timeout(std::time::Duration::from_secs(60)) else {
        let _ = std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status();
        panic!("lousho run blocked on a named pipe");
    };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(2), "{se}");
    assert!(se.contains(fifo.to_str().unwrap()), "{se}");
    assert!(se.contains("named pipe"), "{se}");
}
