//! Where `lousho` keeps OAuth grants: one JSON file shared by every spec,
//! keyed by server URL (`--tokens FILE`, `LOUSHO_TOKENS`, or the user's state
//! directory).

use lousho::mcp::McpServers;
use lousho::mcp::oauth::{FileTokenStore, TokenStore};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The token file: the one given, else `$XDG_STATE_HOME/lousho/tokens.json`,
/// else `~/.local/state/lousho/tokens.json`.
pub fn path(given: Option<&Path>) -> anyhow::Result<PathBuf> {
    if let Some(path) = given {
        return Ok(path.to_path_buf());
    }
    let non_empty = |var: &str| std::env::var_os(var).filter(|v| !v.is_empty());
    if let Some(state) = non_empty("XDG_STATE_HOME") {
        return Ok(PathBuf::from(state).join("lousho/tokens.json"));
    }
    if let Some(home) = non_empty("HOME") {
        return Ok(PathBuf::from(home).join(".local/state/lousho/tokens.json"));
    }
    anyhow::bail!("no place for the OAuth token file: pass --tokens FILE or set LOUSHO_TOKENS")
}

/// The file store at [`path`].
pub fn file_store(given: Option<&Path>) -> anyhow::Result<FileTokenStore> {
    Ok(FileTokenStore::new(path(given)?))
}

/// The store for a spec's servers: only when one of them has `oauth` (the
/// others never need it, so a missing home directory does not matter).
pub fn for_servers(
    servers: &McpServers,
    given: Option<&Path>,
) -> anyhow::Result<Option<Arc<dyn TokenStore>>> {
    if servers.values().all(|s| s.oauth.is_none()) {
        return Ok(None);
    }
    Ok(Some(Arc::new(file_store(given)?)))
}
