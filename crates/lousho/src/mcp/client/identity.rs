//! Who a server is, without its secrets: the one key that tool manifests
//! (catalog), pins and remembered approvals share for "this server".
//!
//! A stdio server is its command, arguments and working directory, plus a
//! SHA-256 of its environment's names and values; an HTTP server is its URL
//! (without user info or query), its header names, plus a SHA-256 of the
//! full URL and the header values. So an identity can be written to a cache
//! or a lock file and shown in a table: the values that often hold secrets
//! (tokens in `env`, `Authorization` headers, `?key=` in a URL) appear only
//! hashed. Changing any of them makes another identity: a server reached
//! with other credentials, or started another way, is another server.

use super::config::{McpServer, McpTransport};
use crate::mcp::digest;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

/// The variable in which lousho passes the chain of spec files that mount
/// one another (`lousho mcp other.yaml` as a stdio server) to the servers it
/// starts; see the CLI's `lousho mcp`.
pub const SPEC_CHAIN_VAR: &str = "LOUSHO_SPEC_CHAIN";

/// The environment variables lousho itself adds to the stdio servers it
/// starts. They say who started a server, not what it is, so they are not
/// part of its [`ServerIdentity`]: one server mounted by two specs shares
/// one manifest, one pin and its remembered approvals.
pub const OWN_ENV_VARS: &[&str] = &[SPEC_CHAIN_VAR];

/// A server's identity: what is launched or dialled, secrets hashed.
///
/// Serialises as `{"transport": "stdio", "command": …, "args": […], "cwd": …,
/// "envNames": […], "valuesSha256": "…"}` or `{"transport": "http", "url": …,
/// "headerNames": […], "valuesSha256": "…"}`.
///
/// ```
/// use lousho::McpServer;
/// use lousho::mcp::ServerIdentity;
/// let a = ServerIdentity::of(&McpServer::stdio("npx").arg("srv").env("TOKEN", "one"));
/// let b = ServerIdentity::of(&McpServer::stdio("npx").arg("srv").env("TOKEN", "two"));
/// assert_ne!(a.digest(), b.digest());
/// assert!(!serde_json::to_string(&a).unwrap().contains("one"));
/// ```
#[derive(Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "transport", rename_all = "lowercase")]
#[non_exhaustive]
pub enum ServerIdentity {
    /// A child process spoken to over stdio.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Its working directory, when one is set.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cwd: Option<PathBuf>,
        /// The names of the variables the entry adds (sorted).
        #[serde(rename = "envNames")]
        env_names: Vec<String>,
        /// SHA-256 (hex) of the variables' names and values.
        #[serde(rename = "valuesSha256")]
        values_sha256: String,
    },
    /// A Streamable HTTP endpoint.
    Http {
        /// The URL without user info and query.
        url: String,
        /// The names of the static headers (sorted).
        #[serde(rename = "headerNames")]
        header_names: Vec<String>,
        /// SHA-256 (hex) of the full URL and the headers' names and values.
        #[serde(rename = "valuesSha256")]
        values_sha256: String,
    },
}

impl ServerIdentity {
    /// The identity of a server entry.
    pub fn of(server: &McpServer) -> Self {
        match &server.transport {
            McpTransport::Stdio(s) => {
                // lousho's own variables (the spec chain) say who started
                // the server, not what it is: left out.
                let env: BTreeMap<String, String> = s
                    .env
                    .iter()
                    .filter(|(name, _)| !OWN_ENV_VARS.contains(&name.as_str()))
                    .map(|(name, value)| (name.clone(), value.clone()))
                    .collect();
                ServerIdentity::Stdio {
                    command: s.command.clone(),
                    args: s.args.clone(),
                    // A relative folder is relative to where the server is
                    // started from: the same `.` in two projects is two
                    // servers.
                    cwd: s
                        .cwd
                        .as_ref()
                        .map(|cwd| std::path::absolute(cwd).unwrap_or_else(|_| cwd.clone())),
                    env_names: env.keys().cloned().collect(),
                    values_sha256: sha256_hex(&pairs(&env)),
                }
            }
            McpTransport::Http(h) => ServerIdentity::Http {
                url: super::http::display_url(&h.url),
                header_names: h.headers.keys().cloned().collect(),
                values_sha256: sha256_hex(&format!("{}\n{}", h.url, pairs(&h.headers))),
            },
        }
    }

    /// `"stdio"` or `"http"`.
    pub fn transport(&self) -> &'static str {
        match self {
            ServerIdentity::Stdio { .. } => "stdio",
            ServerIdentity::Http { .. } => "http",
        }
    }

    /// SHA-256 (64 hex digits) of the identity's canonical JSON: a short,
    /// stable key for maps and file names.
    pub fn digest(&self) -> String {
        // serde_json writes struct fields in declaration order and the lists
        // are sorted, so the text is stable.
        let text = serde_json::to_string(self).unwrap_or_default();
        sha256_hex(&text)
    }

    /// The first 12 hex digits of the [`digest`](Self::digest).
    pub fn short(&self) -> String {
        self.digest().chars().take(12).collect()
    }
}

/// `stdio npx -y srv` or `http https://example.com/mcp`.
impl fmt::Display for ServerIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServerIdentity::Stdio { command, args, .. } => {
                write!(f, "stdio {command}")?;
                for a in args {
                    write!(f, " {a}")?;
                }
                Ok(())
            }
            ServerIdentity::Http { url, .. } => write!(f, "http {url}"),
        }
    }
}

impl fmt::Debug for ServerIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ServerIdentity({self}; {})", self.short())
    }
}

/// `name=value` lines, sorted by name (the map is sorted), as JSON strings
/// so no value can forge a line break.
fn pairs(map: &BTreeMap<String, String>) -> String {
    serde_json::to_string(map).unwrap_or_default()
}

fn sha256_hex(text: &str) -> String {
    digest::sha256_hex(text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_hashed_and_change_the_identity() {
        let http = |url: &str, token: &str| {
            ServerIdentity::of(
                &McpServer::http(url).header("Authorization", format!("Bearer {token}")),
            )
        };
        let a = http("https://u:pw@example.com/mcp?key=k1", "t1");
        let json = serde_json::to_string(&a).unwrap();
        for secret in ["t1", "k1", "pw"] {
            assert!(!json.contains(secret), "{secret} in {json}");
            assert!(!format!("{a:?} {a}").contains(secret));
        }
        assert!(json.contains("Authorization") && json.contains("example.com/mcp"));
        assert_eq!(a, http("https://u:pw@example.com/mcp?key=k1", "t1"));
        assert_ne!(
            a.digest(),
            http("https://u:pw@example.com/mcp?key=k1", "t2").digest()
        );
        assert_ne!(
            a.digest(),
            http("https://u:pw@example.com/mcp?key=k2", "t1").digest()
        );
        assert_eq!(a.transport(), "http");

        let stdio = |arg: &str, value: &str| {
            ServerIdentity::of(&McpServer::stdio("srv").arg(arg).env("API_KEY", value))
        };
        let s = stdio("--x", "secret-1");
        assert!(!serde_json::to_string(&s).unwrap().contains("secret-1"));
        assert_ne!(s.digest(), stdio("--x", "secret-2").digest());
        assert_ne!(s.digest(), stdio("--y", "secret-1").digest());
        assert_eq!(s.to_string(), "stdio srv --x");
        assert_eq!(s.digest().len(), 64);
        let back: ServerIdentity =
            serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
        assert_eq!(back, s);
    }

    #[test]
    fn lousho_own_variables_are_not_part_of_a_server() {
        let plain = ServerIdentity::of(&McpServer::stdio("srv").env("API_KEY", "k"));
        let chained = ServerIdentity::of(
            &McpServer::stdio("srv")
                .env("API_KEY", "k")
                .env(SPEC_CHAIN_VAR, r#"["/a/main.yaml"]"#),
        );
        assert_eq!(plain, chained);
        assert_eq!(plain.digest(), chained.digest());
        let other_user_var = ServerIdentity::of(
            &McpServer::stdio("srv")
                .env("API_KEY", "k")
                .env("LOUSHO_SOMETHING", "x"),
        );
        assert_ne!(
            plain, other_user_var,
            "only lousho's own variables are left out"
        );
    }

    #[test]
    fn a_relative_folder_is_resolved_before_it_identifies_a_server() {
        let relative = ServerIdentity::of(&McpServer::stdio("srv").cwd("."));
        let here = std::env::current_dir().unwrap();
        let ServerIdentity::Stdio { cwd: Some(cwd), .. } = &relative else {
            panic!("{relative:?}");
        };
        assert!(cwd.is_absolute(), "{cwd:?}");
        assert_eq!(
            relative,
            ServerIdentity::of(&McpServer::stdio("srv").cwd(std::path::absolute(".").unwrap()))
        );
        assert!(cwd.starts_with(&here));
    }
}
