//! The step journal's cost (issue 34): a 10-step run — 5 model turns with a
//! tool call each, their 5 results (the last turn's answer is the 10th step
//! plus the commit) — per step, on SQLite and PostgreSQL, next to the same
//! run without a store (an in-memory session) and the in-memory store.
//!
//! Run: `cargo bench -p lousho --bench journal --features sqlite,postgres`.
//! Two tables: the store alone (median of each `journal_step`, one
//! transaction each) and whole runs of a scripted model and a no-op tool
//! (median run time over the runs, divided by its 10 steps). PostgreSQL is
//! the testkit's throwaway server (fsync off); SQLite a temp file (WAL,
//! synchronous=NORMAL). A last column: whole runs per second with 32 runs at
//! once, each in its own session, as a served agent has them.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    missing_docs
)]

use lousho::model::testing::{ScriptedModel, ScriptedTurn};
use lousho::session::{JournalStep, MemoryStore, SessionStore};
use lousho::tool::DefinedTool;
use lousho::{Agent, ToolOutput};
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};

const RUNS: usize = 40;
const TOOL_ROUNDS: usize = 5;
/// Journal steps per run: each tool round's turn and result, the answer.
const STEPS: u32 = (2 * TOOL_ROUNDS + 1) as u32;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1000.0)
}

fn agent() -> Agent {
    agent_for(RUNS)
}

/// An agent whose scripted model answers `runs` runs of [`STEPS`] steps.
fn agent_for(runs: usize) -> Agent {
    let mut turns: Vec<ScriptedTurn> = Vec::new();
    for _ in 0..runs {
        for i in 0..TOOL_ROUNDS {
            turns.push(ScriptedTurn::tool_call("noop", json!({"i": i})));
        }
        turns.push(ScriptedTurn::text("done"));
    }
    let noop = DefinedTool::from_json(
        "noop",
        "Does nothing",
        json!({"type": "object"}),
        |_input: serde_json::Value, _ctx: lousho::ToolContext| async { ToolOutput::text("ok") },
    );
    Agent::builder()
        .model(ScriptedModel::new(turns))
        .tool(noop)
        .build()
        .unwrap()
}

/// Median whole-run time per step: in a stored session of `store`, or in
/// memory (`None`).
async fn runs(store: Option<Arc<dyn SessionStore>>) -> Duration {
    let agent = agent();
    let mut samples = Vec::new();
    for i in 0..RUNS {
        let session = match &store {
            Some(store) => agent
                .open_session(store.clone(), format!("run-{i}"))
                .await
                .unwrap(),
            None => agent.session(),
        };
        let start = Instant::now();
        let reply = session.send("go").await.unwrap();
        samples.push(start.elapsed());
        assert_eq!(reply.text, "done");
    }
    median(samples) / STEPS
}

/// Runs at once on one store, as a served agent has them.
const AT_ONCE: usize = 32;
/// Runs each of the [`AT_ONCE`] workers makes, one after the other.
const RUNS_EACH: usize = 10;

/// Journaled runs per second with [`AT_ONCE`] runs at once on `store`, each
/// in its own session (whole runs of [`STEPS`] steps).
async fn concurrent(store: &Arc<dyn SessionStore>, name: &str) -> f64 {
    let start = Instant::now();
    let workers = (0..AT_ONCE).map(|w| {
        let store = store.clone();
        let name = name.to_owned();
        tokio::spawn(async move {
            let agent = agent_for(RUNS_EACH);
            for r in 0..RUNS_EACH {
                let session = agent
                    .open_session(store.clone(), format!("{name}-{w}-{r}"))
                    .await
                    .unwrap();
                assert_eq!(session.send("go").await.unwrap().text, "done");
            }
        })
    });
    for w in futures::future::join_all(workers).await {
        w.unwrap();
    }
    (AT_ONCE * RUNS_EACH) as f64 / start.elapsed().as_secs_f64()
}

/// Median of single `journal_step` calls (each its own transaction).
async fn steps(store: &Arc<dyn SessionStore>) -> Duration {
    let agent = agent();
    let session = agent.open_session(store.clone(), "steps").await.unwrap();
    // A real journal to take steps from: the run's turns, replayed as steps.
    let reply = session.send("go").await.unwrap();
    let mut samples = Vec::new();
    for r in 0..RUNS {
        let start = lousho::session::JournalStart::new(
            format!("bench-{r}"),
            "steps",
            "bench",
            0,
            vec![lousho::model::Message::user("go")],
        );
        store.journal_begin(&start).await.unwrap();
        for (seq, record) in reply.tool_calls.iter().enumerate() {
            let step = JournalStep::ToolResult {
                call: record.call.clone(),
                output: record.output.clone(),
            };
            let t = Instant::now();
            store
                .journal_step(&start.run, seq as u64, &step)
                .await
                .unwrap();
            samples.push(t.elapsed());
        }
        store.journal_delete(&start.run).await.unwrap();
    }
    median(samples)
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut rows: Vec<(&str, Option<Duration>, Duration, f64)> = Vec::new();
    rt.block_on(async {
        rows.push(("none (in-memory session)", None, runs(None).await, f64::NAN));
        let memory: Arc<dyn SessionStore> = Arc::new(MemoryStore::new());
        rows.push((
            "memory",
            Some(steps(&memory).await),
            runs(Some(memory.clone())).await,
            concurrent(&memory, "memory").await,
        ));
        #[cfg(feature = "sqlite")]
        {
            let dir = tempfile::tempdir().unwrap();
            let store: Arc<dyn SessionStore> = Arc::new(
                lousho::session::SqliteStore::open(dir.path().join("bench.db"))
                    .await
                    .unwrap(),
            );
            rows.push((
                "sqlite",
                Some(steps(&store).await),
                runs(Some(store.clone())).await,
                concurrent(&store, "sqlite").await,
            ));
        }
        #[cfg(feature = "postgres")]
        if let Some(server) = lousho_testkit::postgres::PgServer::shared() {
            // The default pool, and one connection (as the store had before
            // its pool): side by side in one run.
            for (name, pool) in [
                ("postgres", lousho::session::DEFAULT_POSTGRES_POOL),
                ("postgres, 1 connection", 1),
            ] {
                let url = server.create_database();
                let store: Arc<dyn SessionStore> = Arc::new(
                    lousho::session::PostgresStore::connect_pooled(&url, pool)
                        .await
                        .unwrap(),
                );
                rows.push((
                    name,
                    Some(steps(&store).await),
                    runs(Some(store.clone())).await,
                    concurrent(&store, "postgres").await,
                ));
            }
        }
    });
    println!(
        "| store | journal_step median (ms) | run time per step, median (ms) | runs/s, {AT_ONCE} at once |"
    );
    println!("| --- | ---: | ---: | ---: |");
    for (store, step, per_step, per_sec) in &rows {
        println!(
            "| {store} | {} | {} | {} |",
            step.map_or_else(|| "—".to_owned(), ms),
            ms(*per_step),
            if per_sec.is_nan() {
                "—".to_owned()
            } else {
                format!("{per_sec:.0}")
            }
        );
    }
}
