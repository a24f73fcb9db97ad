//! `lousho login` / `logout` against a local OAuth-protected MCP server
//! (authorization server + MCP server on loopback): the operator's browser is
//! played by a client that follows the authorization server's redirect.

use super::common::{lousho, spec_file, stderr, stdout};
use lousho_testkit::oauth_fixture::{approve_in_background, free_port, serve_oauth};
use serde_json::Value;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::ChildStderr;

fn oauth_spec(url: &str) -> (tempfile::TempDir, String) {
    let port = free_port();
    spec_file(
        "agent.yaml",
        &format!(
            "model: test\ntools: [day_name]\nmcpServers:\n  docs:\n    url: {url}\n    oauth:\n      redirectUri: http://127.0.0.1:{port}/callback\n"
        ),
    )
}

async fn lousho_output(args: &[&str], tokens: &std::path::Path) -> std::process::Output {
    let mut cmd = tokio::process::Command::from(lousho());
    cmd.arg("--tokens").arg(tokens).args(args);
    cmd.output().await.unwrap()
}

async fn tools_json(spec: &str, tokens: &std::path::Path) -> Value {
    let out = lousho_output(&["tools", spec, "--json"], tokens).await;
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_str(&stdout(&out)).unwrap()
}

/// `lousho --tokens TOKENS login SPEC SERVER --no-browser`, running.
struct Login {
    child: tokio::process::Child,
    lines: Lines<BufReader<ChildStderr>>,
    /// The stderr lines read up to the authorization URL's.
    seen: Vec<String>,
}

impl Login {
    fn start(tokens: &Path, spec: &str, server: &str) -> Self {
        let mut child = tokio::process::Command::from(lousho())
            .arg("--tokens")
            .arg(tokens)
            .args(["login", spec, server, "--no-browser"])
            .env_remove("BROWSER")
            .stderr(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let lines = BufReader::new(child.stderr.take().unwrap()).lines();
        Login {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// The authorization URL it prints on stderr (within 60 s).
    async fn url(&mut self) -> String {
        tokio::time::timeout(Duration::from_secs(60), async {
            while let Some(line) = self.lines.next_line().await.unwrap() {
                self.seen.push(line.clone());
                if let Some(url) = line.trim().strip_prefix("http") {
                    return format!("http{url}");
                }
            }
            panic!("no authorization URL in {:?}", self.seen);
        })
        .await
        .unwrap()
    }

    /// Its exit status and the rest of its stderr (within 60 s).
    async fn finish(mut self) -> (ExitStatus, String) {
        let mut rest = String::new();
        let status = tokio::time::timeout(Duration::from_secs(60), async {
            while let Some(line) = self.lines.next_line().await.unwrap() {
                rest.push_str(&line);
                rest.push('\n');
            }
            self.child.wait().await.unwrap()
        })
        .await
        .unwrap();
        (status, rest)
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn login_signs_in_once_and_later_runs_use_the_grant_until_logout() {
    let server = serve_oauth(Duration::from_secs(3600)).await;
    let (dir, spec) = oauth_spec(&server.url);
    let tokens = dir.path().join("state/tokens.json");

    // Before sign-in: the server needs auth, the agent's other tools still work.
    let before = tools_json(&spec, &tokens).await;
    assert_eq!(
        before["servers"]["docs"]["status"], "needs-auth",
        "{before}"
    );
    let names: Vec<&str> = before["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["day_name"]);

    // Sign in: the URL is printed on stderr; the "browser" approves it.
    let mut login = Login::start(&tokens, &spec, "docs");
    let url = login.url().await;
    assert!(url.contains("code_challenge_method=S256"), "{url}");
    approve_in_background(&url);
    let seen = login.seen.clone();
    let (status, rest) = login.finish().await;
    assert!(status.success(), "{rest}");
    assert!(rest.contains("signed in to `docs`"), "{rest}");
    assert!(rest.contains(&tokens.display().to_string()), "{rest}");
    assert_eq!(server.log.code_exchanges.load(Ordering::Relaxed), 1);

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&tokens).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "token file mode {mode:o}");
    }
    let file: Value = serde_json::from_slice(&std::fs::read(&tokens).unwrap()).unwrap();
    assert!(file.get(&server.url).is_some(), "{file}");

    // The next start uses the grant without signing in again; the token file
    // can also come from LOUSHO_TOKENS.
    let out = tokio::process::Command::from(lousho())
        .env("LOUSHO_TOKENS", &tokens)
        .args(["call", &spec, "docs__echo", r#"{"text": "signed"}"#])
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("signed"), "{}", stdout(&out));
    let after = tools_json(&spec, &tokens).await;
    assert_eq!(after["servers"]["docs"]["status"], "connected", "{after}");
    assert_eq!(server.log.code_exchanges.load(Ordering::Relaxed), 1);
    assert!(server.log.authorized_mcp_requests.load(Ordering::Relaxed) > 0);

    // No token ever reaches the output.
    let issued = server.log.issued.lock().unwrap().clone();
    assert!(!issued.is_empty());
    for token in &issued {
        assert!(!rest.contains(token) && !seen.concat().contains(token));
        assert!(!stderr(&out).contains(token) && !stdout(&out).contains(token));
    }

    // Logout forgets the grant: the server needs auth again.
    let out = lousho_output(&["logout", &spec, "docs"], &tokens).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("signed out of `docs`"),
        "{}",
        stderr(&out)
    );
    let gone = tools_json(&spec, &tokens).await;
    assert_eq!(gone["servers"]["docs"]["status"], "needs-auth", "{gone}");
    let out = lousho_output(&["logout", &spec, "docs"], &tokens).await;
    assert!(
        stderr(&out).contains("had no stored sign-in"),
        "{}",
        stderr(&out)
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn login_names_the_problem_with_the_server_argument() {
    let (dir, spec) = spec_file(
        "agent.yaml",
        "model: test\nmcpServers:\n  plain:\n    url: http://127.0.0.1:9/mcp\n",
    );
    let tokens = dir.path().join("tokens.json");
    let out = lousho_output(&["login", &spec, "nope"], &tokens).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("no MCP server `nope`") && stderr(&out).contains("plain"),
        "{}",
        stderr(&out)
    );
    let out = lousho_output(&["login", &spec, "plain"], &tokens).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("has no `oauth`") && stderr(&out).contains("redirectUri"),
        "{}",
        stderr(&out)
    );
    assert!(!tokens.exists());
}

/// `lousho login` signs in to a served lousho agent (`lousho mcp --http`
/// with `serve.auth: {type: oauth}`) trusting a real authorization server
/// (`oidc-provider`, interop/oidc/provider.mjs): the client registers
/// itself, the user `carol` signs in and consents on the provider's pages
/// (played by `oidc_provider::sign_in`), and `lousho call` then calls the
/// served agent with the grant.
#[tokio::test(flavor = "multi_thread")]
async fn login_signs_in_to_a_served_agent_behind_an_identity_provider() {
    use lousho_testkit::oidc_provider::{self, Idp};
    let Some(idp) = Idp::start().await else {
        return;
    };
    let port = free_port();
    let audience = format!("http://127.0.0.1:{port}/mcp");
    let (dir, served) = spec_file(
        "served.yaml",
        &format!(
            "name: helper\nmodel: test\nserve:\n  auth:\n    type: oauth\n    issuer: {}\n    audience: {audience}\n    scopes: [\"mcp:use\"]\n",
            idp.issuer
        ),
    );
    let mut server = lousho()
        .args(["mcp", &served, "--http", "--port", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut server_err = std::io::BufReader::new(server.stderr.take().unwrap());
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        let n = std::io::BufRead::read_line(&mut server_err, &mut line).unwrap();
        assert!(n > 0, "lousho mcp exited before serving: {seen}");
        seen.push_str(&line);
        if line.contains(" over MCP at ") {
            break;
        }
    }
    std::thread::spawn(move || {
        let _ = std::io::Read::read_to_end(&mut server_err, &mut Vec::new());
    });

    let client = dir.path().join("client.yaml");
    std::fs::write(
        &client,
        format!(
            "model: test\nmcpServers:\n  agents:\n    url: {audience}\n    oauth:\n      redirectUri: http://127.0.0.1:{}/callback\n",
            free_port()
        ),
    )
    .unwrap();
    let client = client.display().to_string();
    let tokens = dir.path().join("tokens.json");
    let mut login = Login::start(&tokens, &client, "agents");
    let url = login.url().await;
    assert!(url.starts_with(&idp.issuer), "{url}");
    oidc_provider::sign_in_in_background(&idp.issuer, "carol", &url);
    let (status, rest) = login.finish().await;
    assert!(status.success(), "{rest}");
    assert!(rest.contains("signed in to `agents`"), "{rest}");
    assert!(rest.contains("mcp:use"), "the granted scopes: {rest}");

    let out = lousho_output(
        &[
            "call",
            &client,
            "agents__helper",
            r#"{"message": "hello carol"}"#,
        ],
        &tokens,
    )
    .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("hello carol"), "{}", stdout(&out));
    let _ = server.kill();
    let _ = server.wait();
}
