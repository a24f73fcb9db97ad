//! A spec that mounts itself (`lousho mcp self.yaml` among its own servers),
//! directly or through another spec, fails with a message naming the chain
//! instead of spawning `lousho` after `lousho`.

use super::common::{lousho, spec_file, stderr};
use std::os::unix::process::CommandExt;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs `cmd` in its own process group; past `limit` the whole group is
/// killed and the test fails (a fork bomb must not outlive the test).
fn bounded(mut cmd: Command, limit: Duration) -> Output {
    let child = cmd
        .process_group(0)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(output) => output.unwrap(),
        Err(_) => {
            let _ = Command::new("kill")
                .args(["-KILL", &format!("-{pid}")])
                .status();
            panic!("lousho did not finish within {limit:?}; its process group was killed");
        }
    }
}

const LIMIT: Duration = Duration::from_secs(60);

fn self_mounting(name: &str, other: &str) -> String {
    format!(
        "model: test\nmcpServers:\n  inner:\n    command: ${{LOUSHO_BIN}}\n    args: [mcp, {other}]\n    startupTimeoutMs: 30000\n# {name}\n"
    )
}

#[test]
fn a_spec_that_mounts_itself_fails_with_the_chain() {
    let (dir, spec) = spec_file("self.yaml", &self_mounting("self.yaml", "self.yaml"));
    let mut cmd = lousho();
    cmd.args(["tools", &spec]).current_dir(dir.path());
    let started = Instant::now();
    let out = bounded(cmd, LIMIT);
    let se = stderr(&out);
    // The inner lousho refuses to go on: exactly one level was spawned.
    assert_eq!(se.matches("this spec mounts itself").count(), 1, "{se}");
    assert!(se.contains("self.yaml → self.yaml"), "{se}");
    assert!(started.elapsed() < LIMIT);
}

#[test]
fn specs_that_mount_each_other_fail_with_the_chain() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.yaml"), self_mounting("a.yaml", "b.yaml")).unwrap();
    std::fs::write(dir.path().join("b.yaml"), self_mounting("b.yaml", "a.yaml")).unwrap();
    let mut cmd = lousho();
    cmd.args(["tools", "a.yaml"]).current_dir(dir.path());
    let out = bounded(cmd, LIMIT);
    let se = stderr(&out);
    assert_eq!(se.matches("this spec mounts itself").count(), 1, "{se}");
    assert!(se.contains("a.yaml → b.yaml → a.yaml"), "{se}");
}

#[test]
fn a_chain_deeper_than_the_limit_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.yaml"), self_mounting("a.yaml", "b.yaml")).unwrap();
    std::fs::write(dir.path().join("b.yaml"), "model: test\n").unwrap();
    let mut cmd = lousho();
    cmd.args(["tools", "a.yaml"])
        .current_dir(dir.path())
        .env("LOUSHO_MAX_SPEC_DEPTH", "1");
    let out = bounded(cmd, LIMIT);
    let se = stderr(&out);
    assert!(se.contains("nest 2 levels deep (a.yaml → b.yaml)"), "{se}");
    assert!(se.contains("LOUSHO_MAX_SPEC_DEPTH=1"), "{se}");

    // Within the limit, the same pair works.
    let mut cmd = lousho();
    cmd.args(["tools", "--json", "a.yaml"])
        .current_dir(dir.path());
    let out = bounded(cmd, LIMIT);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn a_spec_already_on_the_inherited_chain_is_refused_at_once() {
    let (_dir, spec) = spec_file("agent.yaml", "model: test\n");
    let real = std::fs::canonicalize(&spec).unwrap();
    let chain = serde_json::to_string(&[real.to_string_lossy()]).unwrap();
    let out = lousho()
        .args(["run", &spec, "hi"])
        .env("LOUSHO_SPEC_CHAIN", chain)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let se = stderr(&out);
    assert!(se.contains("agent.yaml: this spec mounts itself"), "{se}");
}

#[test]
fn an_oversized_spec_limit_can_be_set_from_the_environment() {
    let (_dir, spec) = spec_file("agent.yaml", "model: test\nprompt: a longer prompt\n");
    let out = lousho()
        .args(["run", &spec, "hi"])
        .env("LOUSHO_SPEC_MAX_BYTES", "16")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("larger than 16 bytes"),
        "{}",
        stderr(&out)
    );
}
