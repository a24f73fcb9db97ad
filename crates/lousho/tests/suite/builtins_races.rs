//! The file tools under a swapping race and on special files: a folder
//! swapped for a symlink to outside between the check and the read leaks
//! nothing, and FIFOs, devices and sockets neither block nor get read.

#![cfg(target_os = "linux")]

use super::builtins_fs::{call, err, ok, tree};
use lousho::builtin::fs_tools;
use rustix::fs::{CWD, RenameFlags, renameat_with};
use serde_json::{Value, json};
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// In every outside file's name and text: it must never reach the model.
const MARKER: &str = "OUTSIDE_MARKER_7f3a";

/// Swaps `a` and `b` (a folder and a symlink) atomically until `stop`.
fn flipper(a: PathBuf, b: PathBuf, stop: Arc<AtomicBool>, flips: Arc<AtomicUsize>) {
    while !stop.load(Ordering::Relaxed) {
        renameat_with(CWD, &a, CWD, &b, RenameFlags::EXCHANGE).unwrap();
        flips.fetch_add(1, Ordering::Relaxed);
    }
}

fn calls() -> Vec<(&'static str, Value)> {
    vec![
        ("read_file", json!({"path": "sub/inside.txt"})),
        ("read_file", json!({"path": "sub/deep/inside.txt"})),
        ("list_dir", json!({"path": "sub"})),
        ("list_dir", json!({"path": "sub/deep"})),
        ("glob", json!({"pattern": "**/*.txt", "path": "sub"})),
        ("glob", json!({"pattern": "**/*.txt"})),
        ("grep", json!({"pattern": "MARKER|inside", "path": "sub"})),
        ("grep", json!({"pattern": "MARKER|inside"})),
        (
            "grep",
            json!({"pattern": "MARKER|inside", "path": "sub/inside.txt"}),
        ),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_folder_swapped_for_a_symlink_mid_call_leaks_nothing() {
    let outside_text = format!("{MARKER} secret line\n");
    let dir = tree(&[
        ("ws/sub/inside.txt", b"inside text\n"),
        ("ws/sub/deep/inside.txt", b"inside deep\n"),
        ("ws/.swap/.keep", b""),
        ("outside/inside.txt", outside_text.as_bytes()),
        (&format!("outside/{MARKER}.txt"), outside_text.as_bytes()),
        ("outside/deep/inside.txt", outside_text.as_bytes()),
        (
            &format!("outside/deep/{MARKER}.txt"),
            outside_text.as_bytes(),
        ),
    ]);
    let ws = dir.path().join("ws");
    // `sub` (a real folder) and `.swap/sub` (a symlink to outside) trade
    // places as fast as the kernel allows.
    symlink(dir.path().join("outside"), ws.join(".swap/sub")).unwrap();
    let tools = Arc::new(fs_tools(&ws).unwrap());
    let stop = Arc::new(AtomicBool::new(false));
    let flips = Arc::new(AtomicUsize::new(0));
    let flip = {
        let (a, b) = (ws.join("sub"), ws.join(".swap/sub"));
        let (stop, flips) = (stop.clone(), flips.clone());
        std::thread::spawn(move || flipper(a, b, stop, flips))
    };

    let deadline = Instant::now() + Duration::from_secs(3);
    let leaks = Arc::new(std::sync::Mutex::new(Vec::new()));
    let inside_seen = Arc::new(AtomicUsize::new(0));
    let total = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for (tool, args) in calls() {
        for _ in 0..16 {
            let (tools, args, leaks) = (tools.clone(), args.clone(), leaks.clone());
            let (inside_seen, total) = (inside_seen.clone(), total.clone());
            tasks.push(tokio::spawn(async move {
                while Instant::now() < deadline {
                    let called = call(&tools, tool, args.clone()).await;
                    total.fetch_add(1, Ordering::Relaxed);
                    if called.text.contains(MARKER) || called.text.contains("secret line") {
                        leaks
                            .lock()
                            .unwrap()
                            .push(format!("{tool} {args}: {}", called.text));
                    }
                    if called.text.contains("inside") {
                        inside_seen.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }));
        }
    }
    for task in tasks {
        task.await.unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    flip.join().unwrap();

    let leaks = leaks.lock().unwrap();
    let total = total.load(Ordering::Relaxed);
    let by_tool: Vec<String> = ["read_file", "list_dir", "glob", "grep"]
        .iter()
        .map(|t| format!("{t}: {}", leaks.iter().filter(|l| l.starts_with(t)).count()))
        .collect();
    assert!(
        leaks.is_empty(),
        "{} of {total} calls returned outside bytes ({}), e.g.\n{}",
        leaks.len(),
        by_tool.join(", "),
        leaks.iter().take(3).cloned().collect::<Vec<_>>().join("\n")
    );
    // The race really ran, and the tools still worked between the flips.
    assert!(flips.load(Ordering::Relaxed) > 1000, "too few flips");
    assert!(inside_seen.load(Ordering::Relaxed) > 0);
    eprintln!(
        "{total} calls, {} flips, 0 leaks",
        flips.load(Ordering::Relaxed)
    );
}

fn mkfifo(path: &Path) {
    rustix::fs::mknodat(
        CWD,
        path,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
}

/// A bound far above what a call takes: a call that blocks fails the test.
async fn within<T>(
    call: impl std::future::Future<Output = T>,
) -> Result<T, tokio::time::error::Elapsed> {
    tokio::time::timeout(Duration::from_secs(20), call).await
}

#[tokio::test]
async fn fifos_and_sockets_are_refused_without_blocking() {
    let dir = tree(&[("a.txt", b"needle\n")]);
    mkfifo(&dir.path().join("pipe"));
    let _socket = std::os::unix::net::UnixListener::bind(dir.path().join("sock")).unwrap();
    let tools = fs_tools(dir.path()).unwrap();

    for path in ["pipe", "sock"] {
        let msg = within(err(&tools, "read_file", json!({"path": path})))
            .await
            .expect("read_file blocked");
        assert!(msg.contains("not a regular file"), "{path}: {msg}");
    }
    let msg = within(err(&tools, "read_file", json!({"path": "/dev/null"})))
        .await
        .unwrap();
    assert!(msg.contains("outside the workspace"), "{msg}");

    // grep and glob skip them, whole-tree or named.
    let text = within(ok(&tools, "grep", json!({"pattern": "needle"})))
        .await
        .unwrap();
    assert!(text.starts_with("a.txt:1:needle\n"), "{text}");
    let text = within(ok(&tools, "grep", json!({"pattern": "x", "path": "pipe"})))
        .await
        .unwrap();
    assert!(!text.contains("pipe:"), "{text}");
    let text = within(ok(&tools, "glob", json!({"pattern": "*"})))
        .await
        .unwrap();
    assert_eq!(text, "a.txt\n");
    let text = within(ok(&tools, "list_dir", json!({}))).await.unwrap();
    assert!(text.contains("other pipe"), "{text}");
}
