//! The doctor's checks: each gives a [`Check`] row.

use lousho::mcp::McpClient;
use lousho::mcp::ServerStatus;
use lousho::mcp::{DiskManifestStore, McpTransport};
use lousho::model::ModelError;
use lousho::spec::AgentSpec;
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Fine.
    Ok,
    /// Works, but worth a look.
    Warn,
    /// Will not work as it is.
    Fail,
}

impl Status {
    /// `ok`, `warn`, `FAIL`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Warn => "warn",
            Status::Fail => "FAIL",
        }
    }
}

/// One row: what was checked, how it came out, and what to do next.
#[derive(Debug, Clone)]
pub struct Check {
    /// What was checked (`spec`, `model`, `mcp files`…).
    pub name: String,
    /// How it came out.
    pub status: Status,
    /// What was found.
    pub detail: String,
    /// What to do about it.
    pub next: Option<String>,
}

impl Check {
    fn new(name: impl Into<String>, status: Status, detail: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            status,
            detail: detail.into(),
            next: None,
        }
    }

    /// A check that passed.
    pub fn ok(name: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(name, Status::Ok, detail)
    }

    /// A warning.
    pub fn warn(name: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(name, Status::Warn, detail)
    }

    /// A failure.
    pub fn fail(name: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(name, Status::Fail, detail)
    }

    /// What to do next.
    #[must_use]
    pub fn next(mut self, next: impl Into<String>) -> Self {
        self.next = Some(next.into());
        self
    }
}

/// The providers that need a key, and its variable.
const KEY_VARS: [(&str, &str); 3] = [
    ("openai", "OPENAI_API_KEY"),
    ("anthropic", "ANTHROPIC_API_KEY"),
    ("openrouter", "OPENROUTER_API_KEY"),
];

fn env_set(var: &str) -> bool {
    std::env::var_os(var).is_some_and(|v| !v.is_empty())
}

/// Without a spec: which providers' keys are set (names only).
pub fn keys_present() -> Check {
    let (set, unset): (Vec<&str>, Vec<&str>) = KEY_VARS
        .iter()
        .map(|(_, var)| *var)
        .partition(|var| env_set(var));
    if set.is_empty() {
        return Check::warn(
            "API keys",
            format!("none set ({}): only `test` and `ollama/…` models run", unset.join(", ")),
        )
        .next("export the key of the provider you use, e.g. export OPENAI_API_KEY=… (or use --model test offline)");
    }
    let unset = if unset.is_empty() {
        String::new()
    } else {
        format!("; not set: {}", unset.join(", "))
    };
    Check::ok("API keys", format!("set: {}{unset}", set.join(", ")))
}

/// The model resolves and its provider's key is in the environment (the
/// variable is named; its value is never shown).
pub fn model(model: Option<&str>) -> Check {
    let Some(model) = model else {
        return Check::fail("model", "the spec has no `model:`").next(
            "add `model: test` (offline) or e.g. `model: openai/gpt-4o-mini`, or pass --model",
        );
    };
    let asked = RefCell::new(Vec::<String>::new());
    let env = |var: &str| {
        asked.borrow_mut().push(var.to_owned());
        std::env::var(var).ok().filter(|v| !v.is_empty())
    };
    match lousho::model::resolve_model_with_env(model, &env) {
        Ok(_) => {
            let key = asked
                .borrow()
                .iter()
                .find(|var| var.ends_with("_API_KEY") && env_set(var))
                .cloned();
            match key {
                Some(var) => Check::ok("model", format!("`{model}`: {var} is set")),
                None => Check::ok("model", format!("`{model}`: needs no API key")),
            }
        }
        Err(ModelError::MissingApiKey { provider, env_var }) => Check::fail(
            "model",
            format!("`{model}`: {env_var} is not set ({provider} needs an API key)"),
        )
        .next(format!(
            "export {env_var}=… in this shell (or run offline with --model test)"
        )),
        Err(e) => Check::fail("model", format!("`{model}`: {e}"))
            .next("use a model such as openai/gpt-4o-mini, anthropic/claude-sonnet-4-5, ollama/llama3.2 or test"),
    }
}

/// Each stdio server's command is on `PATH` (or a file that exists), and an
/// `npx`/`uvx` package names its version.
pub fn commands(spec: &AgentSpec) -> Vec<Check> {
    let mut checks = Vec::new();
    for (name, server) in &spec.mcp_servers {
        let McpTransport::Stdio(stdio) = &server.transport else {
            continue;
        };
        let row = format!("mcp {name}: command");
        match find_command(&stdio.command) {
            Some(path) => checks.push(Check::ok(
                row,
                format!("`{}` is {}", stdio.command, path.display()),
            )),
            None => checks.push(
                Check::fail(row, format!("`{}` is not on PATH", stdio.command))
                    .next(install_hint(&stdio.command)),
            ),
        }
        if let Some(package) = unpinned_package(&stdio.command, &stdio.args) {
            checks.push(
                Check::warn(
                    format!("mcp {name}: version"),
                    format!("`{package}` names no version: each start may fetch a newer one"),
                )
                .next(format!(
                    "pin it in the spec's args, e.g. `{}`",
                    pinned_example(&stdio.command, &package)
                )),
            );
        }
    }
    checks
}

/// Where `command` is: a path that exists, or the first match on `PATH`.
pub fn find_command(command: &str) -> Option<PathBuf> {
    if command.contains('/') {
        let path = PathBuf::from(command);
        return path.is_file().then_some(path);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(command))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        path.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

fn base_name(command: &str) -> &str {
    command.rsplit('/').next().unwrap_or(command)
}

fn install_hint(command: &str) -> String {
    match base_name(command) {
        "npx" | "node" | "npm" => {
            "install Node.js (it brings node and npx), then open a new shell".into()
        }
        "uvx" | "uv" => {
            "install uv (it brings uvx): pip install uv, or see docs.astral.sh/uv".into()
        }
        "python" | "python3" => {
            "install Python 3, or give the interpreter's full path in `command:`".into()
        }
        "docker" => "install Docker and start its daemon".into(),
        other => format!("install `{other}`, or give its full path in the server's `command:`"),
    }
}

/// The package an `npx` or `uvx` command runs when it names no version
/// (`npx -y @scope/pkg`, `uvx pkg`); `None` when pinned or not such a command.
pub fn unpinned_package(command: &str, args: &[String]) -> Option<String> {
    let runner = base_name(command);
    if runner != "npx" && runner != "uvx" {
        return None;
    }
    // uvx options that take a value; `--from` names the package itself.
    const UVX_VALUED: [&str; 6] = [
        "--with",
        "--python",
        "-p",
        "--index",
        "--index-url",
        "--with-requirements",
    ];
    let mut package = None;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        if runner == "uvx" && arg == "--from" {
            package = args.next().cloned();
            break;
        }
        if runner == "uvx" && UVX_VALUED.contains(&arg.as_str()) {
            args.next();
            continue;
        }
        if runner == "npx" && (arg == "-p" || arg == "--package") {
            package = args.next().cloned();
            break;
        }
        if let Some(value) = arg
            .strip_prefix("--package=")
            .or(arg.strip_prefix("--from="))
        {
            package = Some(value.to_owned());
            break;
        }
        if arg.starts_with('-') {
            continue;
        }
        package = Some(arg.clone());
        break;
    }
    let package = package?;
    let pinned = match runner {
        "npx" => {
            // `@scope/name@1.2.3` or `name@1.2.3`; `@latest` is not a pin.
            let bare = package.strip_prefix('@').unwrap_or(&package);
            bare.split_once('@')
                .is_some_and(|(_, version)| !version.is_empty() && version != "latest")
        }
        _ => {
            package.contains("==")
                || package
                    .split_once('@')
                    .is_some_and(|(_, version)| !version.is_empty() && version != "latest")
        }
    };
    (!pinned).then_some(package)
}

fn pinned_example(command: &str, package: &str) -> String {
    let bare = package.trim_end_matches("@latest");
    match base_name(command) {
        "uvx" => format!("{bare}==1.2.3"),
        _ => format!("{bare}@1.2.3"),
    }
}

/// Starts every MCP server of the spec (no tool manifests: each really
/// starts) and reports how long each took, its tools and their cost.
pub async fn servers(spec: &AgentSpec, tokens: Option<&Path>) -> Vec<Check> {
    if spec.mcp_servers.is_empty() {
        return Vec::new();
    }
    let mut options = spec.mcp_options.clone();
    match crate::tokens::for_servers(&spec.mcp_servers, tokens) {
        Ok(Some(store)) => options = options.tokens(store),
        Ok(None) => {}
        Err(e) => {
            return vec![
                Check::fail("OAuth tokens", format!("{e:#}"))
                    .next("pass --tokens FILE or set LOUSHO_TOKENS"),
            ];
        }
    }
    let mut servers = spec.mcp_servers.clone();
    crate::logging::keep_from_children(&mut servers);
    let client = McpClient::new(servers, options);
    let names: Vec<String> = client.server_names().map(str::to_owned).collect();
    let spinner =
        crate::progress::Spinner::start(format!("starting MCP servers: {}", names.join(", ")));
    let timed = futures::future::join_all(names.iter().map(|name| {
        let client = &client;
        async move {
            let started = Instant::now();
            let result = client.connect_server(name).await;
            (name.clone(), result, started.elapsed())
        }
    }))
    .await;
    drop(spinner);
    let spec_file = spec.path.display().to_string();
    let mut checks = Vec::new();
    for (name, result, took) in timed {
        let row = format!("mcp {name}");
        let took = seconds(took);
        let status = client.status().get(&name).cloned();
        let check = match (result, status) {
            (Ok(()), _) => {
                let tools = client.server_tools(&name).ok();
                let tools: Vec<_> = tools.iter().flat_map(|t| t.iter().cloned()).collect();
                let tokens: usize = tools
                    .iter()
                    .map(|t| {
                        let spec = t.spec();
                        let text = serde_json::json!({
                            "name": spec.name, "description": spec.description,
                            "inputSchema": spec.input_schema,
                        })
                        .to_string();
                        text.len().div_ceil(4)
                    })
                    .sum();
                let bare = tools
                    .iter()
                    .filter(|t| t.spec().annotations == Default::default())
                    .count();
                let bare = if bare > 0 {
                    format!("; {bare} without annotations")
                } else {
                    String::new()
                };
                Check::ok(
                    row,
                    format!(
                        "started in {took}; {} tool{}, ~{tokens} tokens of definitions{bare}",
                        tools.len(),
                        if tools.len() == 1 { "" } else { "s" }
                    ),
                )
            }
            (Err(_), Some(ServerStatus::NeedsAuth)) => Check::fail(row, "needs an OAuth sign-in")
                .next(format!("lousho login {spec_file} {name}")),
            (Err(e), _) => {
                let cause = format!("{:#}", anyhow::Error::new(e));
                let next = match spec.mcp_servers.get(&name).map(|s| &s.transport) {
                    Some(McpTransport::Stdio(stdio)) => format!(
                        "run its command by hand to see why: {} {}",
                        stdio.command,
                        stdio.args.join(" ")
                    ),
                    _ => "check the URL, that the server is up, and its auth headers".to_owned(),
                };
                Check::fail(row, format!("failed after {took}: {cause}")).next(next)
            }
        };
        checks.push(check);
    }
    client.close().await;
    checks
}

fn seconds(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

/// The folders lousho writes to: the tool manifests (cache), the session
/// store, the OAuth token file. Nothing is created; a folder that does not
/// exist yet is judged by the nearest one that does.
pub fn folders(store: Option<&str>, tokens: Option<&Path>) -> Vec<Check> {
    let mut checks = Vec::new();
    match DiskManifestStore::from_env() {
        Ok(manifests) => checks.push(writable(
            "cache folder",
            manifests.dir(),
            "LOUSHO_CACHE_DIR",
        )),
        Err(e) => {
            checks.push(Check::warn("cache folder", e.to_string()).next("set LOUSHO_CACHE_DIR"))
        }
    }
    match store {
        Some(url) if url.contains("://") => checks.push(Check::ok(
            "session store",
            "a database URL (--store / LOUSHO_STORE): not checked",
        )),
        Some(path) => {
            let path = PathBuf::from(path);
            let dir = path.parent().unwrap_or(Path::new(".")).to_path_buf();
            checks.push(writable("session store", &dir, "--store / LOUSHO_STORE"));
        }
        None => match crate::store::default_path() {
            Ok(path) => {
                let dir = path.parent().unwrap_or(Path::new(".")).to_path_buf();
                checks.push(writable("session store", &dir, "--store / LOUSHO_STORE"));
            }
            Err(e) => checks.push(Check::warn("session store", format!("{e:#}"))),
        },
    }
    match crate::tokens::path(tokens) {
        Ok(path) => {
            let dir = path.parent().unwrap_or(Path::new(".")).to_path_buf();
            checks.push(writable("token file", &dir, "--tokens / LOUSHO_TOKENS"));
        }
        Err(e) => checks.push(Check::warn("token file", format!("{e:#}"))),
    }
    checks
}

/// Whether files can be made in `dir` (or, while it does not exist, in the
/// nearest folder above it that does).
fn writable(name: &str, dir: &Path, setting: &str) -> Check {
    let mut existing = dir;
    while !existing.exists() {
        match existing.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => existing = parent,
            _ => break,
        }
    }
    let later = if existing == dir {
        String::new()
    } else {
        " (created on first use)".to_owned()
    };
    if !existing.is_dir() {
        return Check::fail(
            name,
            format!("{}: {} is not a folder", dir.display(), existing.display()),
        )
        .next(format!("point {setting} somewhere else, or move that file"));
    }
    let probe = existing.join(format!(".lousho-doctor-{}", std::process::id()));
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
    {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Check::ok(name, format!("{} is writable{later}", dir.display()))
        }
        Err(e) => Check::fail(
            name,
            format!(
                "{}: cannot write in {}: {e}",
                dir.display(),
                existing.display()
            ),
        )
        .next(format!("fix the folder's permissions, or set {setting}")),
    }
}

/// Without a spec: which of the commands servers often need are here.
pub fn runners() -> Check {
    let (found, missing): (Vec<&str>, Vec<&str>) = ["node", "npx", "uvx", "docker"]
        .into_iter()
        .partition(|c| find_command(c).is_some());
    let missing = if missing.is_empty() {
        String::new()
    } else {
        format!(
            "; not found: {} (needed only by servers started with them)",
            missing.join(", ")
        )
    };
    let found = if found.is_empty() {
        "none".to_owned()
    } else {
        found.join(", ")
    };
    Check::ok("commands", format!("found: {found}{missing}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn npx_and_uvx_packages_without_a_version_are_found() {
        let unpinned = |c: &str, a: &[&str]| unpinned_package(c, &args(a));
        assert_eq!(
            unpinned(
                "npx",
                &["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]
            )
            .as_deref(),
            Some("@modelcontextprotocol/server-filesystem")
        );
        assert_eq!(unpinned("npx", &["-y", "@scope/srv@1.2.0"]), None);
        assert_eq!(
            unpinned("/usr/bin/npx", &["srv@latest"]).as_deref(),
            Some("srv@latest")
        );
        assert_eq!(unpinned("npx", &["srv@2"]), None);
        assert_eq!(
            unpinned("uvx", &["mcp-server-fetch"]).as_deref(),
            Some("mcp-server-fetch")
        );
        assert_eq!(unpinned("uvx", &["mcp-server-fetch==0.6.2"]), None);
        assert_eq!(unpinned("uvx", &["--python", "3.12", "srv@1.0"]), None);
        assert_eq!(
            unpinned("uvx", &["--from", "git+https://x/y", "srv"]).as_deref(),
            Some("git+https://x/y")
        );
        assert_eq!(unpinned("node", &["server.js"]), None);
    }

    #[test]
    fn a_missing_command_is_not_found_and_a_present_one_is() {
        assert!(find_command("lousho-no-such-command").is_none());
        assert!(find_command("sh").is_some());
        assert!(install_hint("npx").contains("Node.js"));
        assert!(install_hint("uvx").contains("uv"));
    }
}
