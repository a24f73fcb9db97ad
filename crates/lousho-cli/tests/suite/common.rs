use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The binary with a clean environment and a cache directory of its own
/// (so no test sees another's tool manifests; set `LOUSHO_CACHE_DIR` again
/// to share one).
pub fn lousho() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lousho"));
    cmd.env_remove("LOUSHO_BIN")
        .env_remove("LOUSHO_TOKENS")
        .env_remove("LOUSHO_MODEL")
        .env_remove("LOUSHO_STORE")
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        .env("LOUSHO_LOG", "warn")
        .env("LOUSHO_CACHE_DIR", fresh_cache_dir())
        .stdin(Stdio::null());
    cmd
}

/// A cache directory no other command uses.
pub fn fresh_cache_dir() -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cache-{}-{n}", std::process::id()))
}

pub fn run(args: &[&str]) -> Output {
    lousho().args(args).output().unwrap()
}

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn example(name: &str) -> String {
    repo()
        .join("examples/agents")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Writes `text` as `name` in a fresh temp folder.
pub fn spec_file(name: &str, text: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    (dir, path.to_string_lossy().into_owned())
}

/// An interop peer script under `interop/clients` run by node, when the
/// official TypeScript SDK is installed (`interop/install.sh`): a failure
/// under `CI=true`, a visible skip otherwise.
pub fn node_peer(script: &str) -> Option<PathBuf> {
    let interop = repo().join("interop");
    if interop
        .join("node_modules/@modelcontextprotocol/sdk/package.json")
        .exists()
    {
        return Some(interop.join("clients").join(script).canonicalize().unwrap());
    }
    let msg =
        "the TypeScript MCP SDK (interop/node_modules) is not installed: run interop/install.sh";
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{msg}");
    }
    eprintln!("SKIPPED: {msg}");
    None
}

/// The interop venv's Python (the official MCP SDK), by its path in the
/// venv (not canonicalized: a venv's python must be run from there), when
/// installed (`interop/install.sh`): a failure under `CI=true`, a visible
/// skip otherwise.
pub fn interop_python() -> Option<PathBuf> {
    let python = std::path::absolute(repo().join("interop/.venv/bin/python")).unwrap();
    if python.exists() {
        return Some(python);
    }
    let msg = "the Python MCP SDK (interop/.venv) is not installed: run interop/install.sh";
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{msg}");
    }
    eprintln!("SKIPPED: {msg}");
    None
}

/// A SQLite session store (its file's path) in `dir`.
pub fn sqlite_store(dir: &tempfile::TempDir) -> String {
    dir.path()
        .join("sessions.db")
        .to_string_lossy()
        .into_owned()
}

/// Two `#[tokio::test]`s of `async fn BODY(store: String)`: `SQLITE` on a
/// SQLite file ([`sqlite_store`]), `POSTGRES` on a fresh PostgreSQL database
/// (skipped when PostgreSQL is not installed; a failure under `CI=true`):
/// `on_both_stores!(BODY: SQLITE, POSTGRES);`.
macro_rules! on_both_stores {
    ($body:ident: $sqlite:ident, $postgres:ident) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $sqlite() {
            let dir = tempfile::tempdir().unwrap();
            $body(super::common::sqlite_store(&dir)).await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $postgres() {
            if let Some(store) = lousho_testkit::replicas::postgres_store() {
                $body(store).await;
            }
        }
    };
}
pub(crate) use on_both_stores;

/// The stored messages of session `id` in `store`, as
/// `lousho sessions show ID --json` prints them.
pub async fn show_session(store: &str, id: &str) -> Vec<serde_json::Value> {
    let out = tokio::process::Command::from(lousho())
        .env("LOUSHO_STORE", store)
        .args(["sessions", "show", id, "--json"])
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_str(&stdout(&out)).unwrap()
}

/// The text of each message (the `sessions show --json` form).
pub fn texts(messages: &[serde_json::Value]) -> Vec<String> {
    messages
        .iter()
        .map(|m| {
            m["parts"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect()
        })
        .collect()
}

/// The id of the run a paused `lousho run`/`resume` saved (exit code 4),
/// checking the commands it prints to approve or deny `tool`.
pub fn paused_run_id(out: &Output, tool: &str) -> String {
    assert_eq!(out.status.code(), Some(4), "{}", stderr(out));
    let err = stderr(out);
    let id = err
        .split("the run is saved as ")
        .nth(1)
        .and_then(|rest| rest.split('.').next())
        .unwrap_or_else(|| panic!("no run id in: {err}"))
        .to_owned();
    assert!(
        err.contains(&format!("resume {id} --approve {tool}")),
        "{err}"
    );
    assert!(err.contains(&format!("resume {id} --deny {tool}")), "{err}");
    id
}

/// The environment of a run the test crashes: a 2 s session lease (a
/// killed run's runs out soon), and no supervisor — a crash is a SIGKILL of
/// the process that runs; with a supervisor the kill would hit it, and its
/// child (told by SIGTERM) would still journal a result that arrives while
/// it closes.
pub const CRASHABLE: [(&str, &str); 2] =
    [("LOUSHO_SESSION_LEASE", "2"), ("LOUSHO_SUPERVISOR", "0")];

/// The tool server of the crash tests, `interop/python/gated_server.py` on
/// the official Python SDK, and a fresh temp folder for its files: its
/// tools `peek` (read-only) and `poke` (a write) log each call as `NAME
/// IDEMPOTENCY-KEY` ([`Gate::calls`]), then read a path and answer its text
/// — a [FIFO](Gate::fifo) keeps them running until [`release`].
pub struct Gate {
    dir: tempfile::TempDir,
    log: PathBuf,
    python: PathBuf,
    script: PathBuf,
}

impl Gate {
    /// `None` when the interop venv is missing (see [`interop_python`]).
    pub fn new() -> Option<Self> {
        let python = interop_python()?;
        let script = repo().join("interop/python/gated_server.py");
        let dir = tempfile::tempdir().unwrap();
        Some(Gate {
            log: dir.path().join("calls.log"),
            script: script.canonicalize().unwrap(),
            python,
            dir,
        })
    }

    /// `name` in the gate's folder.
    pub fn path(&self, name: &str) -> String {
        self.dir.path().join(name).display().to_string()
    }

    /// A plain file `name` holding `text`.
    pub fn file(&self, name: &str, text: &str) -> String {
        let path = self.path(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    /// A FIFO `name`: a tool reading it blocks until [`release`].
    pub fn fifo(&self, name: &str) -> String {
        let path = self.path(name);
        let made = Command::new("mkfifo").arg(&path).status().unwrap();
        assert!(made.success(), "mkfifo {path}");
        path
    }

    /// Writes the spec `name`: `head` (ending in a newline), the server as
    /// `gate` (its tools `gate__peek`, `gate__poke`), then `tail`.
    pub fn spec(&self, name: &str, head: &str, tail: &str) -> String {
        let servers = format!(
            "mcpServers:\n  gate:\n    command: \"{}\"\n    args: [\"{}\"]\n    env:\n      GATE_LOG: \"{}\"\n",
            self.python.display(),
            self.script.display(),
            self.log.display()
        );
        self.file(name, &format!("{head}{servers}{tail}"))
    }

    /// Two [crashable](CRASHABLE) replicas on `store` of the agent `chat`
    /// (its model `mock`'s, the gate's tools), whose spec's `serve:` section
    /// holds `serve` (indented lines, each ending in a newline).
    pub fn replicas(
        &self,
        mock: &lousho_testkit::mock_provider::MockProvider,
        store: String,
        serve: &str,
    ) -> lousho_testkit::replicas::Replicas {
        let spec = self.spec(
            "chat.yaml",
            "name: chat\nmodel: openai/gpt-test\nmodelOptions:\n  baseUrl: ${MOCK_URL}\n",
            &format!("serve:\n{serve}"),
        );
        let mock_url = mock.base_url();
        let env = [
            ("MOCK_URL", mock_url.as_str()),
            ("OPENAI_API_KEY", "sk-test"),
        ];
        let env = [&env[..], &CRASHABLE].concat();
        lousho_testkit::replicas::Replicas::start_on(lousho, store, &spec, &env)
    }

    /// The calls logged so far, one line each.
    pub fn calls(&self) -> Vec<String> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// Waits until a tool opens `fifo` to read it (it logged its call just
    /// before) and returns the FIFO's write end, held: the tool's read
    /// goes on until [`release`]. Fails with what `ended` says if it
    /// finishes first (the process under test ended), and after 180 s.
    pub async fn reader_of(&self, fifo: &str, ended: impl Future<Output = String>) -> File {
        let path = fifo.to_owned();
        // Opening a FIFO to write blocks until a reader opens it too.
        let mut opened =
            tokio::task::spawn_blocking(move || OpenOptions::new().write(true).open(path));
        let outcome = tokio::time::timeout(std::time::Duration::from_secs(180), async {
            tokio::select! {
                opened = &mut opened => Ok(opened.unwrap().unwrap()),
                why = ended => Err(why),
            }
        })
        .await
        .unwrap_or_else(|_| Err(format!("no tool read {fifo}: {:?}", self.calls())));
        let why = match outcome {
            Ok(writer) => return writer,
            Err(why) => why,
        };
        // Be the reader the blocked open waits for (until it is done: the
        // runtime waits for it), then fail.
        let reader = OpenOptions::new()
            .read(true)
            .custom_flags(O_NONBLOCK)
            .open(fifo);
        let _ = opened.await;
        drop(reader);
        panic!("{why}");
    }
}

/// Linux's `O_NONBLOCK`: opening a FIFO to read it does not wait for a
/// writer.
const O_NONBLOCK: i32 = 0o4000;

/// How many of `calls` (see [`Gate::calls`]) are of `tool`.
pub fn count(calls: &[String], tool: &str) -> usize {
    calls.iter().filter(|l| l.starts_with(tool)).count()
}

/// Lets the tool reading `fifo` go (its read sees EOF once `writer`, from
/// [`Gate::reader_of`], is closed), then makes the path a plain file
/// holding `text`.
pub fn release(writer: File, fifo: &str, text: &str) {
    drop(writer);
    std::fs::remove_file(fifo).unwrap();
    std::fs::write(fifo, text).unwrap();
}
