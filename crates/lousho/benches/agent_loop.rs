//! Agent-loop overhead per tool step, with `ScriptedModel` and a no-op tool.
//!
//! Run: `cargo bench -p lousho --bench agent_loop`. Prints a table: for runs of
//! 0, 1, 10 and 50 tool steps, the median time per run, and the overhead per
//! step ((run with N steps − run with 0 steps) / N), on a current-thread and a
//! multi-thread runtime.
//!
//! With `--features otel` the table is printed twice in one run: first with
//! no subscriber (the spans are compiled in but disabled: the default), then
//! with lousho's spans exported over OTLP (`OtelConfig`, batch export to an
//! endpoint nobody listens on, so every span is built, recorded, encoded and
//! sent on the export thread): the difference per step is the tracing cost.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    missing_docs
)]

use lousho::model::testing::{ScriptedModel, ScriptedTurn};
use lousho::tool::DefinedTool;
use lousho::{Agent, ToolContext};
use serde_json::json;
use std::time::{Duration, Instant};

fn agent(steps: usize) -> Agent {
    let noop = DefinedTool::from_json(
        "noop",
        "does nothing",
        json!({"type": "object"}),
        |_, _: ToolContext| async { "" },
    );
    let mut script: Vec<ScriptedTurn> = (0..steps)
        .map(|_| ScriptedTurn::tool_call("noop", json!({})))
        .collect();
    script.push(ScriptedTurn::text("done"));
    Agent::builder()
        .model(ScriptedModel::repeating(script))
        .tool(noop)
        .max_turns(steps + 1)
        .build()
        .unwrap()
}

fn median_run(rt: &tokio::runtime::Runtime, steps: usize) -> Duration {
    let agent = agent(steps);
    // Enough runs for ~0.5 s of work, at least 50.
    let iterations = (20_000 / (steps + 1)).max(50);
    rt.block_on(async {
        for _ in 0..iterations / 10 {
            agent.send("go").await.unwrap();
        }
        let mut samples = Vec::with_capacity(iterations);
        for _ in 0..iterations {
            let t = Instant::now();
            let reply = agent.send("go").await.unwrap();
            samples.push(t.elapsed());
            assert_eq!(reply.tool_calls.len(), steps);
        }
        samples.sort();
        samples[samples.len() / 2]
    })
}

fn main() {
    let runtimes = [
        (
            "current_thread",
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap(),
        ),
        (
            "multi_thread",
            tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
                .unwrap(),
        ),
    ];
    println!("| tracing | runtime | tool steps per run | median per run | overhead per step |");
    println!("| --- | --- | ---: | ---: | ---: |");
    table("off", &runtimes);
    #[cfg(feature = "otel")]
    {
        use tracing_subscriber::Layer;
        use tracing_subscriber::layer::SubscriberExt;
        let (layer, guard) = lousho::telemetry::otel::OtelConfig::new()
            .endpoint("http://127.0.0.1:9")
            .layer()
            .unwrap();
        let filter = tracing_subscriber::filter::Targets::new()
            .with_target(lousho::telemetry::TARGET, tracing::Level::INFO);
        tracing::subscriber::set_global_default(
            tracing_subscriber::registry().with(layer.with_filter(filter)),
        )
        .unwrap();
        table("OTLP", &runtimes);
        drop(guard);
    }
}

fn table(tracing: &str, runtimes: &[(&str, tokio::runtime::Runtime)]) {
    for (name, rt) in runtimes {
        let base = median_run(rt, 0);
        println!(
            "| {tracing} | {name} | 0 | {:.1} µs | — |",
            base.as_secs_f64() * 1e6
        );
        for steps in [1, 10, 50] {
            let t = median_run(rt, steps);
            let per_step = (t.saturating_sub(base)).as_secs_f64() * 1e6 / steps as f64;
            println!(
                "| {tracing} | {name} | {steps} | {:.1} µs | {per_step:.2} µs |",
                t.as_secs_f64() * 1e6
            );
        }
    }
}
