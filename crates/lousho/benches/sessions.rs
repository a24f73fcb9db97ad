//! Session store latency: append one message and load a whole session, for
//! sessions of 10, 1,000 and 10,000 messages, on SQLite and PostgreSQL (the
//! in-memory store as the floor).
//!
//! Run: `cargo bench -p lousho --bench sessions --features sqlite,postgres`.
//! PostgreSQL is the testkit's throwaway server (Debian's package; skipped
//! when not installed): fsync off, so its appends show the protocol and
//! transaction cost, not the disk's. SQLite runs in a temp file with WAL and
//! synchronous=NORMAL (its default here: no fsync per commit).
//! Messages are ~300 bytes of JSON each (user and assistant text in turn).
//! Target: loading a 1,000-message session under 5 ms on SQLite.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    missing_docs
)]

use lousho::model::Message;
use lousho::session::{MemoryStore, SessionStore};
use std::sync::Arc;
use std::time::{Duration, Instant};

const SIZES: [usize; 3] = [10, 1_000, 10_000];

fn message(i: usize) -> Message {
    let text = format!(
        "message {i}: {}",
        "the quick brown fox jumps over the lazy dog; ".repeat(5)
    );
    if i.is_multiple_of(2) {
        Message::user(text)
    } else {
        Message::assistant(text)
    }
}

/// Median and 95th percentile.
fn stats(mut samples: Vec<Duration>) -> (Duration, Duration) {
    samples.sort();
    let p = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    (p(0.5), p(0.95))
}

fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1000.0)
}

struct Row {
    backend: &'static str,
    size: usize,
    append: (Duration, Duration),
    load: (Duration, Duration),
}

async fn measure(backend: &'static str, store: Arc<dyn SessionStore>) -> Vec<Row> {
    let mut rows = Vec::new();
    for size in SIZES {
        let id = format!("bench-{size}");
        store.create(&id).await.unwrap();
        let all: Vec<Message> = (0..size).map(message).collect();
        let mut version = 0;
        for chunk in all.chunks(500) {
            version = store.append(&id, version, chunk).await.unwrap();
        }
        // Appends of one message each (the session grows by these few).
        let mut appends = Vec::new();
        for i in 0..200 {
            let m = message(size + i);
            let start = Instant::now();
            version = store
                .append(&id, version, std::slice::from_ref(&m))
                .await
                .unwrap();
            appends.push(start.elapsed());
        }
        let rounds = if size >= 10_000 { 20 } else { 100 };
        let mut loads = Vec::new();
        for _ in 0..rounds {
            let start = Instant::now();
            let loaded = store.load(&id).await.unwrap().unwrap();
            loads.push(start.elapsed());
            assert_eq!(loaded.messages.len() as u64, version);
        }
        rows.push(Row {
            backend,
            size,
            append: stats(appends),
            load: stats(loads),
        });
    }
    rows
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut rows = Vec::new();
    rt.block_on(async {
        rows.extend(measure("memory", Arc::new(MemoryStore::new())).await);
        #[cfg(feature = "sqlite")]
        {
            let dir = tempfile::tempdir().unwrap();
            let store = lousho::session::SqliteStore::open(dir.path().join("bench.db"))
                .await
                .unwrap();
            rows.extend(measure("sqlite", Arc::new(store)).await);
        }
        #[cfg(feature = "postgres")]
        if let Some(server) = lousho_testkit::postgres::PgServer::shared() {
            let url = server.create_database();
            let store = lousho::session::PostgresStore::connect(&url).await.unwrap();
            rows.extend(measure("postgres", Arc::new(store)).await);
        }
    });
    println!(
        "| store | messages | append median (ms) | append p95 (ms) | load median (ms) | load p95 (ms) |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: |");
    for r in &rows {
        println!(
            "| {} | {} | {} | {} | {} | {} |",
            r.backend,
            r.size,
            ms(r.append.0),
            ms(r.append.1),
            ms(r.load.0),
            ms(r.load.1)
        );
    }
    if let Some(r) = rows
        .iter()
        .find(|r| r.backend == "sqlite" && r.size == 1_000)
    {
        let target = Duration::from_millis(5);
        println!(
            "\nSQLite, load of 1,000 messages: median {} ms — target < 5 ms: {}",
            ms(r.load.0),
            if r.load.0 < target { "met" } else { "NOT met" }
        );
    }
}
