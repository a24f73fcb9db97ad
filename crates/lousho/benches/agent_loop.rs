//! Agent-loop overhead per tool step, with `ScriptedModel` and a no-op tool.
//!
//! Run: `cargo bench -p lousho --bench agent_loop`. Prints a table: for runs of
//! 0, 1, 10 and 50 tool steps, the median time per run, and the overhead per
//! step ((run with N steps − run with 0 steps) / N), on a current-thread and a
//! multi-thread runtime.

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
    println!("| runtime | tool steps per run | median per run | overhead per step |");
    println!("| --- | ---: | ---: | ---: |");
    for (name, rt) in &runtimes {
        let base = median_run(rt, 0);
        println!("| {name} | 0 | {:.1} µs | — |", base.as_secs_f64() * 1e6);
        for steps in [1, 10, 50] {
            let t = median_run(rt, steps);
            let per_step = (t.saturating_sub(base)).as_secs_f64() * 1e6 / steps as f64;
            println!(
                "| {name} | {steps} | {:.1} µs | {per_step:.2} µs |",
                t.as_secs_f64() * 1e6
            );
        }
    }
}
