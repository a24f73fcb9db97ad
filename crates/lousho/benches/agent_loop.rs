//! Agent-loop overhead per tool step, with `ScriptedModel` and a no-op tool.
//!
//! Run: `cargo bench -p lousho --bench agent_loop`. Prints a table: for runs of
//! 0, 1, 10 and 50 tool steps, the median time per run, and the overhead per
//! step ((run with N steps − run with 0 steps) / N), on a current-thread and a
//! multi-thread runtime.
//!
//! With `--features otel` each round measures both, side by side: no
//! subscriber (the spans are compiled in but disabled: the default) and
//! lousho's spans exported over OTLP (`OtelConfig`, batch export to an
//! endpoint nobody listens on, so every span is built, recorded, encoded and
//! sent on the export thread). Rounds interleave the two, and the table shows
//! the median over rounds; the difference per step is the tracing cost. The
//! OTLP subscriber is installed per thread (`dispatcher::with_default`, and
//! on a second multi-thread runtime's workers), so the "off" rows also pay
//! tracing's per-callsite check for a scoped subscriber: a conservative
//! baseline.

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

/// Rounds of the whole set, interleaved.
const ROUNDS: usize = 5;
const STEPS: [usize; 4] = [0, 1, 10, 50];

/// A runtime and the subscriber its runs see (`None`: tracing off).
struct Setup {
    tracing: &'static str,
    runtime: &'static str,
    rt: tokio::runtime::Runtime,
    dispatch: Option<tracing::Dispatch>,
}

impl Setup {
    fn median(&self, steps: usize) -> Duration {
        match &self.dispatch {
            Some(d) => tracing::dispatcher::with_default(d, || median_run(&self.rt, steps)),
            None => median_run(&self.rt, steps),
        }
    }
}

fn multi_thread(dispatch: Option<tracing::Dispatch>) -> tokio::runtime::Runtime {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if let Some(d) = dispatch {
        builder.on_thread_start(move || {
            // The worker keeps the subscriber for its whole life.
            std::mem::forget(tracing::dispatcher::set_default(&d));
        });
    }
    builder.enable_all().build().unwrap()
}

fn current_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn main() {
    #[cfg_attr(not(feature = "otel"), allow(unused_mut, clippy::useless_vec))]
    let mut setups = vec![
        Setup {
            tracing: "off",
            runtime: "current_thread",
            rt: current_thread(),
            dispatch: None,
        },
        Setup {
            tracing: "off",
            runtime: "multi_thread",
            rt: multi_thread(None),
            dispatch: None,
        },
    ];
    #[cfg(feature = "otel")]
    let _guard = {
        use tracing_subscriber::Layer;
        use tracing_subscriber::layer::SubscriberExt;
        let (layer, guard) = lousho::telemetry::otel::OtelConfig::new()
            .endpoint("http://127.0.0.1:9")
            .layer()
            .unwrap();
        let filter = tracing_subscriber::filter::Targets::new()
            .with_target(lousho::telemetry::TARGET, tracing::Level::INFO);
        let dispatch =
            tracing::Dispatch::new(tracing_subscriber::registry().with(layer.with_filter(filter)));
        setups.push(Setup {
            tracing: "OTLP",
            runtime: "current_thread",
            rt: current_thread(),
            dispatch: Some(dispatch.clone()),
        });
        setups.push(Setup {
            tracing: "OTLP",
            runtime: "multi_thread",
            rt: multi_thread(Some(dispatch.clone())),
            dispatch: Some(dispatch),
        });
        guard
    };
    // samples[setup][steps] = one median per round.
    let mut samples = vec![vec![Vec::with_capacity(ROUNDS); STEPS.len()]; setups.len()];
    for _ in 0..ROUNDS {
        for (i, setup) in setups.iter().enumerate() {
            for (j, steps) in STEPS.iter().enumerate() {
                samples[i][j].push(setup.median(*steps));
            }
        }
    }
    println!(
        "{ROUNDS} interleaved rounds; each cell: the median over rounds of each round's median run"
    );
    println!("| tracing | runtime | tool steps per run | median per run | overhead per step |");
    println!("| --- | --- | ---: | ---: | ---: |");
    let mut per_step = Vec::new();
    for (setup, rows) in setups.iter().zip(&mut samples) {
        let medians: Vec<Duration> = rows
            .iter_mut()
            .map(|r| {
                r.sort();
                r[r.len() / 2]
            })
            .collect();
        let base = medians[0];
        for (steps, t) in STEPS.iter().zip(&medians) {
            let step =
                (*steps > 0).then(|| t.saturating_sub(base).as_secs_f64() * 1e6 / *steps as f64);
            println!(
                "| {} | {} | {steps} | {:.1} µs | {} |",
                setup.tracing,
                setup.runtime,
                t.as_secs_f64() * 1e6,
                step.map_or("—".to_owned(), |s| format!("{s:.2} µs")),
            );
            if *steps == 50 {
                per_step.push((setup.tracing, setup.runtime, step.unwrap_or(0.0)));
            }
        }
    }
    for runtime in ["current_thread", "multi_thread"] {
        let of = |tracing| {
            per_step
                .iter()
                .find(|(t, r, _)| *t == tracing && *r == runtime)
                .map(|(_, _, s)| *s)
        };
        if let (Some(off), Some(on)) = (of("off"), of("OTLP")) {
            println!(
                "{runtime}: OTLP adds {:.2} µs per tool step ({:.2}× the step's cost with tracing off)",
                on - off,
                on / off
            );
        }
    }
}
