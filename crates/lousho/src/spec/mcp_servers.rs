//! `mcpServers`: the entries of the file or of a Claude-style `.mcp.json`,
//! with their relative paths resolved. Without the `mcp-client` feature a
//! file that names servers is an error naming the feature.

use super::file::McpServersField;
use super::{SpecError, SpecErrorKind, SpecLoader};
use crate::spec::locate::line_of_key;
#[cfg(feature = "mcp-client")]
use std::collections::BTreeMap;
use std::path::Path;
#[cfg(feature = "mcp-client")]
use {
    super::file::{McpOptionsFile, NamingFile, OnErrorFile},
    super::host_config,
    super::join_clean,
    super::read::{ReadError, read_bounded},
    crate::mcp::client::config::expand_variables,
    crate::mcp::client::{ConfigError, McpTransport, servers_from_value},
    crate::mcp::{ConnectOptions, McpServers, OnError, ToolNaming},
};

impl SpecLoader {
    /// The file's MCP servers, resolved.
    #[cfg(feature = "mcp-client")]
    pub(super) fn mcp_servers(
        &self,
        field: Option<McpServersField>,
        dir: &Path,
        path: &Path,
        text: &str,
    ) -> Result<McpServers, SpecError> {
        Ok(match field {
            None => McpServers::new(),
            Some(McpServersField::Map(map)) => resolve_servers(map, dir),
            Some(McpServersField::Path(p)) => {
                self.read_mcp_json(&join_clean(dir, Path::new(&p)), path, text)?
            }
        })
    }

    /// Without `mcp-client`: no servers, or an error naming the feature.
    #[cfg(not(feature = "mcp-client"))]
    pub(super) fn no_mcp_servers(
        &self,
        field: Option<McpServersField>,
        path: &Path,
        text: &str,
    ) -> Result<(), SpecError> {
        match field {
            Some(McpServersField::Map(map)) if map.is_empty() => Ok(()),
            None => Ok(()),
            Some(_) => Err(SpecError::new(
                path,
                SpecErrorKind::MissingFeature {
                    feature: "mcp-client",
                    needed_for: "MCP servers",
                },
            )
            .at(line_of_key(text, "mcpServers"), None)
            .key("mcpServers")),
        }
    }

    /// The MCP config file named by `mcpServers`, in any host's format
    /// (Claude Code / Claude Desktop / Cursor JSON, VS Code's `servers`,
    /// Codex's TOML; see `host_config`). Its strings are expanded too, its
    /// relative paths resolve from its own folder (the workspace folder for
    /// `.vscode/` and `.cursor/` files), and its errors name it and its line.
    #[cfg(feature = "mcp-client")]
    fn read_mcp_json(
        &self,
        json_path: &Path,
        spec: &Path,
        text: &str,
    ) -> Result<McpServers, SpecError> {
        let fail = |message: String| {
            SpecError::new(spec, SpecErrorKind::Invalid(message))
                .at(line_of_key(text, "mcpServers"), None)
                .key("mcpServers")
        };
        let limit = self.limit();
        let json = read_bounded(json_path, limit).map_err(|e| {
            let shown = json_path.display();
            fail(match e {
                ReadError::Io(e) => format!("cannot read `{shown}`: {e}"),
                ReadError::TooLarge => {
                    format!("`{shown}` is larger than {limit} bytes, the limit for spec files")
                }
                ReadError::NotAFile(kind) => {
                    format!("cannot read `{shown}`: it is {kind}; name a JSON or TOML file")
                }
                ReadError::NotUtf8 => format!("`{shown}` is not UTF-8 text"),
            })
        })?;
        let (_, servers) = self.checked_host_file(&json, json_path, false)?;
        Ok(resolve_servers(
            servers,
            &host_config::workspace_folder(json_path),
        ))
    }

    /// The host file's entries in lousho's format (unexpanded) and, checked
    /// with this loader's variables, the servers they make.
    #[cfg(feature = "mcp-client")]
    fn checked_host_file(
        &self,
        json: &str,
        json_path: &Path,
        unset_ok: bool,
    ) -> Result<(host_config::HostServers, McpServers), SpecError> {
        let in_file = |line: Option<usize>, key: String, kind: SpecErrorKind| {
            SpecError::new(json_path, kind).at(line, None).key(key)
        };
        let host = host_config::translate(json, json_path)
            .map_err(|e| in_file(e.line, e.key, SpecErrorKind::Invalid(e.message)))?;
        let container = host.container;
        let full_key = |path: &str| match container {
            Some(c) if path.is_empty() || path == "." => c.to_owned(),
            Some(c) => format!("{c}.{path}"),
            None => path.to_owned(),
        };
        let value = expand_variables(serde_json::Value::Object(host.servers.clone()), &|n| {
            self.lookup(n).or_else(|| unset_ok.then(String::new))
        })
        .map_err(|e| config_error(e, json, host.format, &full_key, &in_file))?;
        let servers = servers_from_value(value)
            .map_err(|e| config_error(e, json, host.format, &full_key, &in_file))?;
        Ok((host, servers))
    }

    /// The MCP servers of another client's config file — Claude Code's
    /// `.mcp.json`, Claude Desktop's `claude_desktop_config.json`, Cursor's
    /// `.cursor/mcp.json`, VS Code's `.vscode/mcp.json` or Codex's
    /// `config.toml` — as spec entries (JSON values in the `mcpServers`
    /// format, `${VAR}` references kept: `${env:X}` becomes `${X}`,
    /// `${workspaceFolder}` the folder's absolute path). Every entry is
    /// checked (variables need not be set: they are for the run); errors
    /// name the file, the line and the key. For `lousho mcp import`.
    #[cfg(feature = "mcp-client")]
    pub fn import_mcp_servers(
        &self,
        path: impl AsRef<Path>,
    ) -> Result<BTreeMap<String, serde_json::Value>, SpecError> {
        let path = path.as_ref();
        let limit = self.limit();
        let text = read_bounded(path, limit).map_err(|e| {
            let kind = match e {
                ReadError::TooLarge => SpecErrorKind::TooLarge { limit },
                ReadError::NotAFile(kind) => SpecErrorKind::NotAFile(kind.to_owned()),
                ReadError::Io(e) => return SpecError::new(path, SpecErrorKind::Read).source(e),
                ReadError::NotUtf8 => SpecErrorKind::Invalid("the file is not UTF-8 text".into()),
            };
            SpecError::new(path, kind)
        })?;
        let (host, _) = self.checked_host_file(&text, path, true)?;
        Ok(host.servers.into_iter().collect())
    }
}

/// A [`ConfigError`] from a referenced file, at its line there.
#[cfg(feature = "mcp-client")]
fn config_error(
    e: ConfigError,
    json: &str,
    format: host_config::HostFormat,
    full_key: &dyn Fn(&str) -> String,
    in_file: &dyn Fn(Option<usize>, String, SpecErrorKind) -> SpecError,
) -> SpecError {
    match e {
        ConfigError::Invalid { path, message } => {
            let key = full_key(&path);
            in_file(
                host_config::line_of(json, format, &key),
                key,
                SpecErrorKind::Invalid(message),
            )
        }
        ConfigError::Variable { path, reason } => {
            let key = full_key(&path);
            let kind = match reason {
                crate::interpolate::VariableError::Unset(_) => {
                    SpecErrorKind::UnsetVariable(reason.to_string())
                }
                _ => SpecErrorKind::Invalid(reason.to_string()),
            };
            in_file(host_config::line_of(json, format, &key), key, kind)
        }
    }
}

/// Stdio servers start in the spec's folder; relative `cwd` and relative
/// commands with a `/` resolve from it, as do `oauth.privateKeyFile`,
/// `oauth.idp.idTokenFile` and `roots`.
#[cfg(feature = "mcp-client")]
fn resolve_servers(mut servers: McpServers, dir: &Path) -> McpServers {
    for server in servers.values_mut() {
        for root in server.roots.iter_mut().filter(|r| r.is_relative()) {
            *root = join_clean(dir, root);
        }
        if let Some(oauth) = server.oauth.as_mut() {
            let idp_file = oauth.idp.as_mut().and_then(|i| i.id_token_file.as_mut());
            for file in [oauth.private_key_file.as_mut(), idp_file]
                .into_iter()
                .flatten()
                .filter(|f| f.is_relative())
            {
                *file = join_clean(dir, file);
            }
        }
        if let McpTransport::Stdio(stdio) = &mut server.transport {
            stdio.cwd = Some(match stdio.cwd.take() {
                Some(cwd) if cwd.is_relative() => join_clean(dir, &cwd),
                Some(cwd) => cwd,
                None => dir.to_path_buf(),
            });
            let command = Path::new(&stdio.command);
            if command.is_relative() && stdio.command.contains('/') {
                stdio.command = join_clean(dir, command).to_string_lossy().into_owned();
            }
        }
    }
    servers
}

/// The `mcp:` section as [`ConnectOptions`] (unset keys keep the defaults).
#[cfg(feature = "mcp-client")]
pub(super) fn connect_options(file: McpOptionsFile) -> ConnectOptions {
    let mut options = ConnectOptions::new();
    if let Some(naming) = file.naming {
        options = options.naming(match naming {
            NamingFile::Prefixed => ToolNaming::Prefixed,
            NamingFile::Mcp => ToolNaming::McpPrefixed,
        });
    }
    if let Some(lazy) = file.lazy {
        options = options.lazy(lazy);
    }
    if let Some(on_error) = file.on_error {
        options = options.on_error(match on_error {
            OnErrorFile::Throw => OnError::Throw,
            OnErrorFile::Skip => OnError::Skip,
        });
    }
    options
}

/// `options` with the pins of the lock file next to the spec at `spec`
/// ([`lock_path`](crate::policy::lock_path)), when one exists. A lock file
/// that cannot be read is an error naming it, with line and column.
#[cfg(feature = "mcp-client")]
pub(super) fn with_lock_file(
    options: ConnectOptions,
    spec: &Path,
) -> Result<ConnectOptions, SpecError> {
    use crate::policy::{Pins, PinsError, lock_path};
    let lock = lock_path(spec);
    if !lock.is_file() {
        return Ok(options);
    }
    match Pins::load(&lock) {
        Ok(pins) => Ok(options.pins(pins)),
        Err(e) => {
            let (line, column) = match &e {
                PinsError::Parse { line, column, .. } => (Some(*line), Some(*column)),
                _ => (None, None),
            };
            let message = match &e {
                PinsError::Parse { message, .. } => format!(
                    "the lock file is broken: {message}; fix it, or delete it and run `lousho pin` to write it again"
                ),
                other => other.to_string(),
            };
            Err(SpecError::new(lock, SpecErrorKind::Invalid(message))
                .at(line, column)
                .source(e))
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::spec::SpecLoader;

    #[test]
    fn a_file_without_servers_loads_in_every_build() {
        let spec = SpecLoader::new()
            .without_env()
            .parse("model: test\nmcpServers: {}\n", "agent.yaml")
            .unwrap();
        assert_eq!(spec.model.as_deref(), Some("test"));
    }

    #[cfg(not(feature = "builtin"))]
    #[test]
    fn built_in_tools_without_the_feature_are_an_error_naming_it() {
        use crate::spec::SpecErrorKind;
        let e = SpecLoader::new()
            .without_env()
            .parse("model: test\ntools: [read_file]\n", "agent.yaml")
            .unwrap_err();
        assert_eq!(
            *e.kind,
            SpecErrorKind::MissingFeature {
                feature: "builtin",
                needed_for: "built-in tools"
            }
        );
        assert!(e.to_string().contains("`builtin` cargo feature"), "{e}");
    }
}
