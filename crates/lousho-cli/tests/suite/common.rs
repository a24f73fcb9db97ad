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
