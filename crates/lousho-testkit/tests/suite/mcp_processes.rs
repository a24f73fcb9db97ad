//! Process hygiene: process groups, no orphans, no zombies.

use super::fixture::{fixture, logged_pids, process_exists, processes_tagged, scratch, unique_tag};
use lousho::connect_mcp;
use lousho::mcp::{ConnectOptions, McpClient};
use std::time::Duration;

async fn settle(pids: &[u32]) -> Vec<u32> {
    // Killed processes vanish from /proc once reaped. lousho reaps its own
    // child; orphaned grandchildren are the init process's to reap, which
    // may take it a few seconds (`close` does not wait for that).
    for _ in 0..500 {
        let left: Vec<u32> = pids
            .iter()
            .copied()
            .filter(|p| process_exists(*p))
            .collect();
        if left.is_empty() {
            return left;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    pids.iter()
        .copied()
        .filter(|p| process_exists(*p))
        .collect()
}

#[tokio::test]
async fn close_stops_the_whole_process_group_grandchildren_included() {
    let dir = scratch("group");
    let log = dir.join("spawns");
    let tag = unique_tag("group");
    let mcp = connect_mcp(
        [(
            "fx",
            fixture("serve")
                .arg(&tag)
                .env("FIXTURE_GRANDCHILD", "1")
                .env("FIXTURE_SPAWN_LOG", log.display().to_string()),
        )],
        ConnectOptions::default(),
    )
    .await
    .unwrap();
    // The server starts its grandchild on its own schedule: wait for it.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while logged_pids(&log, "sleeper").is_empty() && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let sleeper = logged_pids(&log, "sleeper");
    assert_eq!(sleeper.len(), 1, "the grandchild started");
    assert!(process_exists(sleeper[0]));
    mcp.close().await;
    let mut all = logged_pids(&log, "serve");
    all.extend(sleeper);
    assert_eq!(
        settle(&all).await,
        Vec::<u32>::new(),
        "server and grandchild are gone (no zombie either)"
    );
    assert!(processes_tagged(&tag).is_empty());
}

#[tokio::test]
async fn a_launcher_connected_and_closed_fifty_times_leaves_no_process() {
    let dir = scratch("orphans");
    let log = dir.join("spawns");
    let tag = unique_tag("orphans");
    let entry = fixture("launcher")
        .arg(&tag)
        .env("FIXTURE_GRANDCHILD", "1")
        .env("FIXTURE_SPAWN_LOG", log.display().to_string());
    for _ in 0..50 {
        let mcp = connect_mcp([("fx", entry.clone())], ConnectOptions::default())
            .await
            .unwrap();
        assert!(mcp.tools().contains("fx__echo"));
        mcp.close().await;
    }
    let mut all = logged_pids(&log, "launcher");
    assert_eq!(all.len(), 50);
    all.extend(logged_pids(&log, "serve"));
    all.extend(logged_pids(&log, "sleeper"));
    assert_eq!(all.len(), 150, "launcher → server → grandchild, 50 times");
    let left = settle(&all).await;
    assert!(left.is_empty(), "leftover processes: {left:?}");
    assert!(
        processes_tagged(&tag).is_empty(),
        "tagged processes left: {:?}",
        processes_tagged(&tag)
    );
}

#[tokio::test]
async fn dropping_a_client_without_close_still_kills_the_group() {
    let dir = scratch("drop");
    let log = dir.join("spawns");
    let mcp = McpClient::new(
        [(
            "fx",
            fixture("launcher")
                .env("FIXTURE_GRANDCHILD", "1")
                .env("FIXTURE_SPAWN_LOG", log.display().to_string()),
        )],
        ConnectOptions::default(),
    );
    mcp.connect_all().await.unwrap();
    // The server starts its grandchild on its own schedule: wait for it.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while logged_pids(&log, "sleeper").is_empty() && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let tools = mcp.tools();
    drop(tools);
    drop(mcp);
    let mut all = logged_pids(&log, "launcher");
    all.extend(logged_pids(&log, "serve"));
    all.extend(logged_pids(&log, "sleeper"));
    assert_eq!(all.len(), 3);
    assert!(settle(&all).await.is_empty(), "processes left after drop");
}

/// Running (not gone, not a zombie waiting for a reaper that may never come).
#[cfg(target_os = "linux")]
fn process_running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        // `pid (comm) STATE …`: the state follows the last `)`.
        stat.rsplit_once(')')
            .and_then(|(_, rest)| rest.trim_start().chars().next())
            .is_some_and(|state| state != 'Z' && state != 'X')
    })
}

#[cfg(target_os = "linux")]
#[test]
fn stdio_servers_die_with_a_lousho_process_killed_by_sigkill() {
    use std::io::BufRead;
    let dir = scratch("parent-death");
    let log = dir.join("spawns");
    let tag = unique_tag("parent-death");
    // The server ignores stdin EOF, so only the parent-death signal stops it.
    let mut parent = std::process::Command::new(env!("CARGO_BIN_EXE_lousho-mcp-parent"))
        .args([super::fixture::fixture_bin(), "serve", &tag])
        .env("FIXTURE_SPAWN_LOG", &log)
        .env("FIXTURE_IGNORE_EOF", "1")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(parent.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.starts_with("connected "), "{line:?}");
    let server = logged_pids(&log, "serve");
    assert_eq!(server.len(), 1, "one server process");
    assert!(process_running(server[0]));

    parent.kill().unwrap(); // SIGKILL: lousho gets no chance to clean up
    parent.wait().unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while process_running(server[0]) && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let survived = process_running(server[0]);
    if survived {
        let _ = std::process::Command::new("kill")
            .args(["-9", &server[0].to_string()])
            .status();
    }
    assert!(!survived, "the server outlived its killed parent");
}
