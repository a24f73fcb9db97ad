//! The built-in `grep` tool against the `rg` command on one generated tree.
//!
//! Generates 10,000 text files (about 50 MB) in 100 folders, plus 1,000 files
//! under a `.gitignore`d `target/` and 50 binary files, then runs the same
//! searches with lousho's `grep` tool (through `Tool::call`, as an agent
//! would) and with `rg`, and prints a table of times (fastest and median run) and the ratios.
//! Both are checked to find the same number of matching lines.
//!
//! Run: `cargo bench -p lousho --bench grep`. Without `rg` on PATH the table
//! shows lousho's figures alone (install it with `cargo install ripgrep --locked`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    missing_docs
)]

use lousho::ToolContext;
use lousho::builtin::fs_tools;
use serde_json::json;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const FILES: usize = 10_000;
const DIRS: usize = 100;
const RUNS: usize = 21;

const WORDS: &[&str] = &[
    "let", "mut", "value", "config", "request", "response", "handler", "buffer", "index", "return",
    "match", "self", "error", "result", "stream", "token", "parse", "client", "server", "async",
    "await", "Ok", "Err", "Some", "None", "timeout", "retry", "state", "session", "path",
];

/// A small deterministic generator (xorshift), so every run sees the same tree.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn generate(root: &Path) -> u64 {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut bytes = 0u64;
    let write = |path: &Path, text: &[u8]| {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        text.len() as u64
    };
    let file_text = |rng: &mut Rng| {
        let mut text = String::new();
        for _ in 0..40 + rng.below(80) {
            match rng.below(400) {
                0 => text.push_str("    // TODO(lousho): remove this workaround\n"),
                1 | 2 => {
                    let name = WORDS[rng.below(WORDS.len())].to_lowercase();
                    text.push_str(&format!("fn {name}_handler(req: Request) -> Response {{\n"));
                }
                _ => {
                    text.push_str("    ");
                    for _ in 0..4 + rng.below(10) {
                        text.push_str(WORDS[rng.below(WORDS.len())]);
                        text.push(' ');
                    }
                    text.push_str(";\n");
                }
            }
        }
        text
    };
    for i in 0..FILES {
        let text = file_text(&mut rng);
        bytes += write(
            &root.join(format!("src/mod{:03}/file{i:05}.rs", i % DIRS)),
            text.as_bytes(),
        );
    }
    for i in 0..1_000 {
        let text = file_text(&mut rng);
        write(
            &root.join(format!("target/debug/gen{i:04}.rs")),
            text.as_bytes(),
        );
    }
    for i in 0..50 {
        let mut blob = b"TODO(lousho) binary header\0\0\x01\x02".to_vec();
        blob.extend((0..4096).map(|_| rng.below(256) as u8));
        write(&root.join(format!("assets/blob{i:02}.bin")), &blob);
    }
    write(&root.join(".gitignore"), b"target/\n");
    bytes
}

struct Case {
    name: &'static str,
    pattern: &'static str,
    case_insensitive: bool,
}

const CASES: &[Case] = &[
    Case {
        name: "literal, rare",
        pattern: "TODO\\(lousho\\)",
        case_insensitive: false,
    },
    Case {
        name: "regex",
        pattern: "fn [a-z]+_handler\\(",
        case_insensitive: false,
    },
    Case {
        name: "case-insensitive",
        pattern: "todo\\(LOUSHO\\)",
        case_insensitive: true,
    },
    Case {
        name: "no match",
        pattern: "zq[0-9]xw",
        case_insensitive: false,
    },
];

/// The fastest and the median run (wall clock), and the mean CPU time
/// (user + system, all threads) per run where the OS reports it.
#[derive(Clone, Copy)]
struct Timing {
    min: Duration,
    median: Duration,
    cpu: Option<Duration>,
}

/// Where a search's CPU time is read: this process or its waited-for children.
#[derive(Clone, Copy)]
enum CpuOf {
    Me,
    Children,
}

/// CPU time so far from `/proc/self/stat` (utime+stime, or cutime+cstime
/// for children), in clock ticks of 10 ms; `None` off Linux.
fn cpu_time(of: CpuOf) -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    // After the command name: state is field 3; utime 14, stime 15, cutime 16, cstime 17.
    let (a, b) = match of {
        CpuOf::Me => (11, 12),
        CpuOf::Children => (13, 14),
    };
    let ticks: u64 = fields.get(a)?.parse::<u64>().ok()? + fields.get(b)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

/// Runs each search once to warm up, then `RUNS` times, alternating between
/// them so a change in machine load hits both alike. Gives each one's timing
/// and the line count it reported (checked to be the same every run).
fn measure(searches: &mut [(&mut dyn FnMut() -> usize, CpuOf)]) -> Vec<(Timing, usize)> {
    let counts: Vec<usize> = searches.iter_mut().map(|(f, _)| f()).collect();
    let mut times = vec![Vec::with_capacity(RUNS); searches.len()];
    let mut cpu = vec![Some(Duration::ZERO); searches.len()];
    for _ in 0..RUNS {
        for (i, (f, of)) in searches.iter_mut().enumerate() {
            let cpu_before = cpu_time(*of);
            let start = Instant::now();
            let n = f();
            times[i].push(start.elapsed());
            cpu[i] = match (cpu[i], cpu_before, cpu_time(*of)) {
                (Some(sum), Some(before), Some(after)) => Some(sum + (after - before)),
                _ => None,
            };
            assert_eq!(
                n, counts[i],
                "the same search found a different number of lines"
            );
        }
    }
    times
        .into_iter()
        .zip(cpu)
        .map(|(mut t, cpu)| {
            t.sort_unstable();
            Timing {
                min: t[0],
                median: t[t.len() / 2],
                cpu: cpu.map(|c| c / RUNS as u32),
            }
        })
        .zip(counts)
        .collect()
}

/// The total from the tool's closing note (`[N matching lines in …]` or
/// `[showing K of N matching lines …]`).
fn total_from_note(text: &str) -> usize {
    let note = text.lines().last().unwrap_or_default();
    if note.starts_with("no matches") {
        return 0;
    }
    let words: Vec<&str> = note.trim_start_matches('[').split(' ').collect();
    let n = if words[0] == "showing" {
        words[3]
    } else {
        words[0]
    };
    n.parse()
        .unwrap_or_else(|_| panic!("unexpected note: {note}"))
}

fn rg_available() -> bool {
    Command::new("rg")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn rg_version() -> String {
    Command::new("rg")
        .arg("--version")
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .unwrap_or("")
                .to_owned()
        })
        .unwrap_or_default()
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let start = Instant::now();
    let bytes = generate(root);
    println!(
        "tree: {FILES} files, {:.1} MB searched (+1,000 .gitignored, 50 binary), generated in {:.1?}",
        bytes as f64 / 1e6,
        start.elapsed()
    );
    let threads = std::thread::available_parallelism()
        .map(usize::from)
        .unwrap_or(1);
    let rg = rg_available();
    if rg {
        println!("rg: {} ({threads} threads, same as lousho)", rg_version());
    } else {
        println!(
            "rg: not found on PATH (install it with `cargo install ripgrep --locked` to compare)"
        );
    }
    println!(
        "{RUNS} runs each, lousho and rg alternating, warm page cache; wall times are min / median, \
         CPU is user + system time per run (mean)\n"
    );

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let tools = fs_tools(root).unwrap();
    let grep = tools.get("grep").unwrap().clone();

    println!(
        "| search | matches | lousho wall | rg wall | ratio (min) | ratio (median) | lousho CPU | rg CPU | ratio (CPU) |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for case in CASES {
        let args = json!({
            "pattern": case.pattern,
            "case_insensitive": case.case_insensitive,
            "max_results": 1000,
        });
        let mut ours = || {
            let out = runtime
                .block_on(grep.call(args.clone(), ToolContext::new("bench")))
                .unwrap();
            total_from_note(&out.to_model_text())
        };
        let mut theirs = || {
            let mut cmd = Command::new("rg");
            cmd.args(["--no-heading", "-n", "--color", "never", "--no-require-git"]);
            if case.case_insensitive {
                cmd.arg("-i");
            }
            let out = cmd
                .arg(case.pattern)
                .arg(".")
                .current_dir(root)
                .output()
                .unwrap();
            out.stdout.iter().filter(|&&b| b == b'\n').count()
        };
        let results = if rg {
            measure(&mut [(&mut ours, CpuOf::Me), (&mut theirs, CpuOf::Children)])
        } else {
            measure(&mut [(&mut ours, CpuOf::Me)])
        };
        let (ours, ours_count) = results[0];
        let theirs = results.get(1).map(|&(t, rg_count)| {
            assert_eq!(
                ours_count, rg_count,
                "{}: lousho and rg disagree on the match count",
                case.name
            );
            t
        });
        let ms = |t: Timing| {
            format!(
                "{:.1} / {:.1} ms",
                t.min.as_secs_f64() * 1e3,
                t.median.as_secs_f64() * 1e3
            )
        };
        let cpu = |t: Timing| {
            t.cpu.map_or("-".to_owned(), |c| {
                format!("{:.0} ms", c.as_secs_f64() * 1e3)
            })
        };
        let ratio = |a: Duration, b: Duration| format!("{:.2}×", a.as_secs_f64() / b.as_secs_f64());
        match theirs {
            Some(t) => println!(
                "| {} `{}` | {ours_count} | {} | {} | {} | {} | {} | {} | {} |",
                case.name,
                case.pattern,
                ms(ours),
                ms(t),
                ratio(ours.min, t.min),
                ratio(ours.median, t.median),
                cpu(ours),
                cpu(t),
                match (ours.cpu, t.cpu) {
                    (Some(a), Some(b)) if !b.is_zero() => ratio(a, b),
                    _ => "-".to_owned(),
                },
            ),
            None => println!(
                "| {} `{}` | {ours_count} | {} | (no rg) | - | - | {} | - | - |",
                case.name,
                case.pattern,
                ms(ours),
                cpu(ours),
            ),
        }
    }
}
