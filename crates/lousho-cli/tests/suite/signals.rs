//! SIGINT and SIGTERM to `lousho call|run|mcp`: the work in flight stops,
//! every server's process group is closed (grandchildren included) and
//! lousho exits 130 / 143; after SIGKILL the groups are closed too (#12
//! item 9).

use super::common::lousho;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// A stdio MCP server in sh: writes its pid (= its process group) to
/// `$1/pgid`, starts a grandchild in its group, answers `initialize` and
/// `tools/list` (one tool, `wait`), and on `tools/call` writes `$1/called`
/// and never answers.
const SERVER: &str = r#"echo $$ > "$1/pgid.tmp" && mv "$1/pgid.tmp" "$1/pgid"
sleep 1000 &
while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
  case "$line" in
    *'"method":"initialize"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"sh","version":"1"}}}\n' "$id";;
    *'"method":"tools/list"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"wait","description":"Never answers","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}]}}\n' "$id";;
    *'"method":"tools/call"'*) echo called > "$1/called";;
  esac
done
"#;

fn setup() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("server.sh");
    std::fs::write(&script, SERVER).unwrap();
    let spec = dir.path().join("group.yaml");
    std::fs::write(
        &spec,
        format!(
            "model: test\nmcpServers:\n  grp:\n    command: /bin/sh\n    args: ['{}', '{}']\nserve:\n  tools: [grp__wait]\n",
            script.display(),
            dir.path().display()
        ),
    )
    .unwrap();
    (dir, spec.to_string_lossy().into_owned())
}

/// Processes whose process group is `pgid` (from /proc), zombies included.
fn group_members(pgid: u32) -> Vec<u32> {
    processes_where(2, pgid)
}

/// Processes whose parent is `pid`.
fn children_of(pid: u32) -> Vec<u32> {
    processes_where(1, pid)
}

/// Whether `pid` still runs (gone or a zombie: no).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X")
    })
}

/// Processes whose stat field `index` (counting from the state, 0) is `value`.
fn processes_where(index: usize, value: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid pgrp …`
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .map(|(_, rest)| rest.split_whitespace().collect())
            .unwrap_or_default();
        if fields.get(index).and_then(|p| p.parse::<u32>().ok()) == Some(value) {
            found.push(pid);
        }
    }
    found
}

/// Polls `done` until it holds or `limit` passes.
fn wait_until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn send(child: &Child, signal: &str) {
    let status = std::process::Command::new("kill")
        .args([format!("-{signal}"), child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Starts `lousho ARGS`, waits until the server is up (and its tool called
/// when `call_in_flight`), sends `signal`, and checks the exit code and that
/// no process of the server's group is left 2 s later.
fn stops_cleanly(args: &[&str], call_in_flight: bool, signal: &str, code: Option<i32>) {
    let (dir, spec) = setup();
    let args: Vec<&str> = args
        .iter()
        .map(|a| if *a == "SPEC" { spec.as_str() } else { a })
        .collect();
    // stdin stays open (it is `lousho mcp`'s client) until the end.
    let mut child = lousho()
        .args(&args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = |name: &str| dir.path().join(name).exists();
    let ready = wait_until(Duration::from_secs(30), || {
        started("pgid") && (!call_in_flight || started("called"))
    });
    if !ready {
        let _ = child.kill();
        panic!("{args:?}: the server did not start (or was not called)");
    }
    let pgid: u32 = std::fs::read_to_string(dir.path().join("pgid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        wait_until(Duration::from_secs(10), || group_members(pgid).len() >= 2),
        "server and grandchild run: {:?}",
        group_members(pgid)
    );

    // The real lousho under the supervisor (Linux): after SIGKILL of the
    // supervisor, it is the one that closes the servers.
    let inner = children_of(child.id());
    send(&child, signal);
    let mut status = None;
    wait_until(Duration::from_secs(20), || {
        status = child.try_wait().unwrap();
        status.is_some()
    });
    let Some(status) = status else {
        let _ = child.kill();
        panic!("{args:?}: lousho did not exit after SIG{signal}");
    };
    if code.is_none() {
        let closed = wait_until(Duration::from_secs(30), || {
            !inner.iter().any(|p| running(*p))
        });
        assert!(
            closed,
            "{args:?}: the supervised lousho {inner:?} did not exit"
        );
    }
    let gone = wait_until(Duration::from_secs(10), || group_members(pgid).is_empty());
    let left = group_members(pgid);
    if !gone {
        let _ = std::process::Command::new("kill")
            .args(["-s", "KILL", "--", &format!("-{pgid}")])
            .status();
    }
    // Read once the group is gone: the server holds the pipe's write end.
    let stderr = {
        use std::io::Read;
        let mut s = String::new();
        child.stderr.take().unwrap().read_to_string(&mut s).unwrap();
        s
    };
    match code {
        Some(code) => assert_eq!(status.code(), Some(code), "{args:?} SIG{signal}: {stderr}"),
        None => assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&status),
            Some(9),
            "{args:?} SIG{signal}: {stderr}"
        ),
    }
    assert!(
        gone,
        "{args:?} SIG{signal}: processes of the server's group left: {left:?}"
    );
}

#[test]
fn sigterm_to_call_closes_the_servers_group_and_exits_143() {
    stops_cleanly(&["call", "SPEC", "grp__wait"], true, "TERM", Some(143));
}

#[test]
fn sigint_to_call_closes_the_servers_group_and_exits_130() {
    stops_cleanly(&["call", "SPEC", "grp__wait"], true, "INT", Some(130));
}

#[test]
fn sigterm_to_run_closes_the_servers_group_and_exits_143() {
    stops_cleanly(&["run", "SPEC", "hello"], true, "TERM", Some(143));
}

#[test]
fn sigint_to_run_closes_the_servers_group_and_exits_130() {
    stops_cleanly(&["run", "SPEC", "hello"], true, "INT", Some(130));
}

#[test]
fn sigterm_to_mcp_closes_the_servers_group_and_exits_143() {
    stops_cleanly(&["mcp", "SPEC"], false, "TERM", Some(143));
}

#[test]
fn sigint_to_mcp_closes_the_servers_group_and_exits_130() {
    stops_cleanly(&["mcp", "SPEC"], false, "INT", Some(130));
}

#[test]
fn sigterm_to_mcp_over_http_exits_143() {
    stops_cleanly(
        &["mcp", "SPEC", "--http", "--port", "0"],
        false,
        "TERM",
        Some(143),
    );
}

// SIGKILL: lousho gets no chance, but the process the caller started is the
// supervisor (src/supervise.rs); its child gets SIGTERM and closes the groups.

#[cfg(target_os = "linux")]
#[test]
fn sigkill_to_call_still_closes_the_servers_group() {
    stops_cleanly(&["call", "SPEC", "grp__wait"], true, "KILL", None);
}

#[cfg(target_os = "linux")]
#[test]
fn sigkill_to_run_still_closes_the_servers_group() {
    stops_cleanly(&["run", "SPEC", "hello"], true, "KILL", None);
}

#[cfg(target_os = "linux")]
#[test]
fn sigkill_to_mcp_still_closes_the_servers_group() {
    stops_cleanly(&["mcp", "SPEC"], false, "KILL", None);
}
