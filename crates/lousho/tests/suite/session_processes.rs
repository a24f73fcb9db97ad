//! Session stores shared by processes: two writer processes appending to one
//! session, and a writer killed with SIGKILL mid-append. The writers are
//! this test binary again, running the ignored `writer_process` test.

use lousho::model::Message;
use lousho::session::{SessionStore, StoreError};
use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;

/// Messages per append in the SIGKILL test (so a kill can land mid-append).
const BATCH: usize = 3;

/// Where a writer process finds the store.
#[derive(Clone)]
enum Target {
    #[cfg(feature = "sqlite")]
    Sqlite(std::path::PathBuf),
    #[cfg(feature = "postgres")]
    Postgres(String),
}

impl Target {
    fn env(&self) -> (&'static str, String) {
        match self {
            #[cfg(feature = "sqlite")]
            Target::Sqlite(path) => ("sqlite", path.display().to_string()),
            #[cfg(feature = "postgres")]
            Target::Postgres(url) => ("postgres", url.clone()),
        }
    }

    async fn open(&self) -> Arc<dyn SessionStore> {
        let (backend, target) = self.env();
        open_store(backend, &target).await
    }
}

async fn open_store(backend: &str, target: &str) -> Arc<dyn SessionStore> {
    match backend {
        #[cfg(feature = "sqlite")]
        "sqlite" => Arc::new(lousho::session::SqliteStore::open(target).await.unwrap()),
        #[cfg(feature = "postgres")]
        "postgres" => Arc::new(
            lousho::session::PostgresStore::connect(target)
                .await
                .unwrap(),
        ),
        other => panic!("unknown backend {other}"),
    }
}

/// A writer process: `count` appends of `batch` messages named
/// `<name>-<i>-<j>`, each retried at the version a conflict reports.
/// Prints `committed <i>` after each append returned, `conflicts <n>` at the end.
#[tokio::test]
#[ignore = "a writer process the other tests start"]
async fn writer_process() {
    let var = |k: &str| std::env::var(k).unwrap();
    let store = open_store(&var("WRITER_BACKEND"), &var("WRITER_TARGET")).await;
    let (name, count): (String, usize) = (var("WRITER_NAME"), var("WRITER_COUNT").parse().unwrap());
    let batch: usize = var("WRITER_BATCH").parse().unwrap();
    let padding = "x".repeat(var("WRITER_PAD").parse().unwrap());
    let session = var("WRITER_SESSION");
    let mut version = store.open(&session).await.unwrap().info.version;
    let mut conflicts = 0u64;
    for i in 0..count {
        let messages: Vec<Message> = (0..batch)
            .map(|j| Message::user(format!("{name}-{i}-{j} {padding}")))
            .collect();
        loop {
            match store.append(&session, version, &messages).await {
                Ok(v) => {
                    version = v;
                    break;
                }
                Err(StoreError::Conflict { found, .. }) => {
                    conflicts += 1;
                    version = found;
                }
                Err(e) => panic!("append failed: {e}"),
            }
        }
        println!("committed {i}");
    }
    println!("conflicts {conflicts}");
}

fn spawn_writer(
    target: &Target,
    session: &str,
    name: &str,
    count: usize,
    batch: usize,
    pad: usize,
) -> Child {
    let (backend, where_) = target.env();
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "suite::session_processes::writer_process",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("WRITER_BACKEND", backend)
        .env("WRITER_TARGET", where_)
        .env("WRITER_SESSION", session)
        .env("WRITER_NAME", name)
        .env("WRITER_COUNT", count.to_string())
        .env("WRITER_BATCH", batch.to_string())
        .env("WRITER_PAD", pad.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap()
}

/// Waits for a writer and returns its `conflicts` count.
fn finish(child: Child) -> u64 {
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "writer failed:\n{text}");
    text.lines()
        .find_map(|l| l.strip_prefix("conflicts "))
        .unwrap_or_else(|| panic!("no conflicts line:\n{text}"))
        .parse()
        .unwrap()
}

async fn two_processes_append_a_thousand_times_each(target: Target) {
    const N: usize = 1000;
    let store = target.open().await;
    store.create("shared").await.unwrap();
    let a = spawn_writer(&target, "shared", "a", N, 1, 0);
    let b = spawn_writer(&target, "shared", "b", N, 1, 0);
    let (ca, cb) = (finish(a), finish(b));
    let loaded = store.load("shared").await.unwrap().unwrap();
    assert_eq!(loaded.info.version, 2 * N as u64);
    let texts: Vec<String> = loaded
        .messages
        .iter()
        .map(|m| m.text().trim().to_owned())
        .collect();
    let unique: HashSet<&String> = texts.iter().collect();
    assert_eq!(unique.len(), 2 * N, "no message lost or duplicated");
    for name in ["a", "b"] {
        let order: Vec<usize> = texts
            .iter()
            .filter_map(|t| t.strip_prefix(&format!("{name}-")))
            .map(|rest| rest.split('-').next().unwrap().parse().unwrap())
            .collect();
        assert_eq!(
            order,
            (0..N).collect::<Vec<_>>(),
            "writer {name}'s order kept"
        );
    }
    eprintln!("two writers, {N} appends each: {ca} + {cb} conflicts, each retried");
}

async fn a_writer_killed_mid_append_leaves_every_committed_message(target: Target) {
    let store = target.open().await;
    store.create("killed").await.unwrap();
    // Large appends (3 messages of 16 KiB) keep the writer inside a
    // transaction much of the time.
    let mut child = spawn_writer(&target, "killed", "k", 1_000_000, BATCH, 16 * 1024);
    let stdout = child.stdout.take().unwrap();
    let mut committed = 0usize;
    let mut lines = BufReader::new(stdout).lines();
    while committed < 150 {
        let line = lines.next().expect("the writer ended early").unwrap();
        if line.starts_with("committed ") {
            committed += 1;
        }
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    // Commits the writer made after the last line we read count too.
    committed += lines
        .map_while(Result::ok)
        .filter(|l| l.starts_with("committed "))
        .count();
    drop(store);

    // A fresh open (the migrations check runs again) sees every committed
    // append, whole, in order; the store takes the next append.
    let store = target.open().await;
    let loaded = store.load("killed").await.unwrap().unwrap();
    let version = loaded.info.version as usize;
    assert_eq!(version, loaded.messages.len());
    assert_eq!(version % BATCH, 0, "no append stored in part");
    assert!(
        version >= committed * BATCH,
        "{version} messages stored, {committed} appends reported committed"
    );
    for (n, message) in loaded.messages.iter().enumerate() {
        let text = message.text();
        let expected = format!("k-{}-{} ", n / BATCH, n % BATCH);
        assert!(text.starts_with(&expected), "message {n}: {}", &text[..20]);
    }
    store
        .append("killed", version as u64, &[Message::user("after")])
        .await
        .unwrap();
    eprintln!("killed after {committed} committed appends; {version} messages stored");
}

#[cfg(feature = "sqlite")]
mod sqlite {
    use super::*;

    fn target() -> (tempfile::TempDir, Target) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sessions.db");
        (dir, Target::Sqlite(path))
    }

    #[tokio::test]
    async fn two_processes_append_a_thousand_times_each() {
        let (_dir, target) = target();
        super::two_processes_append_a_thousand_times_each(target).await;
    }

    #[tokio::test]
    async fn a_writer_killed_mid_append_leaves_every_committed_message() {
        let (_dir, target) = target();
        super::a_writer_killed_mid_append_leaves_every_committed_message(target).await;
    }
}

#[cfg(feature = "postgres")]
mod postgres {
    use super::*;

    fn target() -> Option<Target> {
        let server = lousho_testkit::postgres::PgServer::shared()?;
        Some(Target::Postgres(server.create_database()))
    }

    #[tokio::test]
    async fn two_processes_append_a_thousand_times_each() {
        if let Some(target) = target() {
            super::two_processes_append_a_thousand_times_each(target).await;
        }
    }

    #[tokio::test]
    async fn a_writer_killed_mid_append_leaves_every_committed_message() {
        if let Some(target) = target() {
            super::a_writer_killed_mid_append_leaves_every_committed_message(target).await;
        }
    }
}
