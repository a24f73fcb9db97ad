//! Where OAuth grants live between runs: the [`TokenStore`] trait (the
//! product's `AgentStore.tokens`), an in-memory store and a file store.
//!
//! A store holds one grant per MCP server, keyed by the server's URL plus,
//! for entries with credentials of their own, a digest of their identity
//! (see [`store_key`](super::store_key)). The
//! file store keeps them in one JSON file created with `0600` permissions and
//! replaced atomically (temporary file + rename) on every write.

use async_trait::async_trait;
use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One server's grant: the client id, the tokens and the granted scopes.
/// `Debug` never shows the tokens.
#[derive(Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub struct StoredToken(pub(crate) StoredCredentials);

impl StoredToken {
    /// The OAuth client id the grant was issued to.
    pub fn client_id(&self) -> &str {
        &self.0.client_id
    }

    /// The scopes the authorization server granted.
    pub fn scopes(&self) -> &[String] {
        &self.0.granted_scopes
    }

    /// Whether the grant holds an access token (a bare client registration
    /// does not).
    pub fn has_access_token(&self) -> bool {
        self.0.token_response.is_some()
    }

    /// Whether the grant can be refreshed without the operator.
    pub fn has_refresh_token(&self) -> bool {
        use oauth2::TokenResponse as _;
        self.0
            .token_response
            .as_ref()
            .is_some_and(|t| t.refresh_token().is_some())
    }
}

impl fmt::Debug for StoredToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoredToken")
            .field("client_id", &self.0.client_id)
            .field(
                "tokens",
                &self.0.token_response.as_ref().map(|_| "[redacted]"),
            )
            .field("scopes", &self.0.granted_scopes)
            .finish()
    }
}

/// A token store could not be read or written. The message never holds a
/// token.
#[derive(Debug, Clone, thiserror::Error)]
#[error("token store: {message}")]
pub struct TokenStoreError {
    message: String,
}

impl TokenStoreError {
    /// An error with this message (must not contain secrets).
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }
}

/// Keeps each OAuth-protected server's grant, keyed by
/// [`store_key`](super::store_key): the server's URL, plus a digest of the
/// credentials' identity when the entry has its own (the product's
/// `AgentStore.tokens`). Implement it to keep grants in a database
/// or keychain; [`MemoryTokenStore`] and [`FileTokenStore`] are built in.
#[async_trait]
pub trait TokenStore: Send + Sync + fmt::Debug + 'static {
    /// The grant for `server_url`, if any.
    async fn load(&self, server_url: &str) -> Result<Option<StoredToken>, TokenStoreError>;
    /// Stores (replaces) the grant for `server_url`.
    async fn save(&self, server_url: &str, token: StoredToken) -> Result<(), TokenStoreError>;
    /// Forgets the grant for `server_url` (no error when there is none).
    async fn remove(&self, server_url: &str) -> Result<(), TokenStoreError>;
}

/// Grants kept in memory (lost when the process ends).
#[derive(Debug, Default, Clone)]
pub struct MemoryTokenStore {
    tokens: Arc<tokio::sync::RwLock<BTreeMap<String, StoredToken>>>,
}

impl MemoryTokenStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

#[async_trait]
impl TokenStore for MemoryTokenStore {
    async fn load(&self, server_url: &str) -> Result<Option<StoredToken>, TokenStoreError> {
        Ok(self.tokens.read().await.get(server_url).cloned())
    }

    async fn save(&self, server_url: &str, token: StoredToken) -> Result<(), TokenStoreError> {
        self.tokens
            .write()
            .await
            .insert(server_url.to_owned(), token);
        Ok(())
    }

    async fn remove(&self, server_url: &str) -> Result<(), TokenStoreError> {
        self.tokens.write().await.remove(server_url);
        Ok(())
    }
}

/// Grants kept in one JSON file (`{ "<server url>": { … } }`), created with
/// `0600` permissions; every write replaces the file atomically. Writes from
/// one process are serialised; several processes sharing one file should use
/// one store each and accept last-writer-wins per write.
#[derive(Clone)]
pub struct FileTokenStore {
    path: Arc<PathBuf>,
    lock: Arc<tokio::sync::Mutex<()>>,
}

impl fmt::Debug for FileTokenStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FileTokenStore")
            .field("path", &self.path)
            .finish()
    }
}

impl FileTokenStore {
    /// A store in `path` (the file is created on the first write).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            path: Arc::new(path.into()),
            lock: Arc::default(),
        }
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    async fn update(
        &self,
        change: impl FnOnce(&mut BTreeMap<String, StoredToken>) + Send + 'static,
    ) -> Result<(), TokenStoreError> {
        let _guard = self.lock.lock().await;
        let path = self.path.clone();
        tokio::task::spawn_blocking(move || {
            let mut all = read_file(&path)?;
            change(&mut all);
            write_file(&path, &all)
        })
        .await
        .map_err(|e| TokenStoreError::new(format!("the file task failed: {e}")))?
    }
}

fn read_file(path: &Path) -> Result<BTreeMap<String, StoredToken>, TokenStoreError> {
    match std::fs::read(path) {
        Ok(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => Ok(BTreeMap::new()),
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
            TokenStoreError::new(format!(
                "{} is not a token file ({e}); move it away and sign in again",
                path.display()
            ))
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
        Err(e) => Err(TokenStoreError::new(format!(
            "cannot read {}: {e}",
            path.display()
        ))),
    }
}

fn write_file(path: &Path, all: &BTreeMap<String, StoredToken>) -> Result<(), TokenStoreError> {
    use std::io::Write;
    let fail = |what: &str, e: std::io::Error| {
        TokenStoreError::new(format!("cannot {what} {}: {e}", path.display()))
    };
    let bytes = serde_json::to_vec_pretty(all)
        .map_err(|e| TokenStoreError::new(format!("cannot encode the tokens: {e}")))?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| fail("create the directory of", e))?;
    }
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{file_name}.{}.tmp", std::process::id()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let result = (|| {
        let mut file = options.open(&tmp).map_err(|e| fail("write", e))?;
        file.write_all(&bytes).map_err(|e| fail("write", e))?;
        file.sync_all().map_err(|e| fail("write", e))?;
        std::fs::rename(&tmp, path).map_err(|e| fail("replace", e))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[async_trait]
impl TokenStore for FileTokenStore {
    async fn load(&self, server_url: &str) -> Result<Option<StoredToken>, TokenStoreError> {
        let path = self.path.clone();
        let url = server_url.to_owned();
        tokio::task::spawn_blocking(move || read_file(&path).map(|mut all| all.remove(&url)))
            .await
            .map_err(|e| TokenStoreError::new(format!("the file task failed: {e}")))?
    }

    async fn save(&self, server_url: &str, token: StoredToken) -> Result<(), TokenStoreError> {
        let url = server_url.to_owned();
        self.update(move |all| {
            all.insert(url, token);
        })
        .await
    }

    async fn remove(&self, server_url: &str) -> Result<(), TokenStoreError> {
        let url = server_url.to_owned();
        self.update(move |all| {
            all.remove(&url);
        })
        .await
    }
}

/// rmcp's view of one server's entry in a [`TokenStore`].
#[derive(Clone)]
pub(crate) struct ServerCredentials {
    pub(crate) store: Arc<dyn TokenStore>,
    pub(crate) url: String,
}

fn store_error(e: TokenStoreError) -> AuthError {
    AuthError::CredentialStoreError(e.to_string())
}

#[async_trait]
impl CredentialStore for ServerCredentials {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        Ok(self
            .store
            .load(&self.url)
            .await
            .map_err(store_error)?
            .map(|t| t.0))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.store
            .save(&self.url, StoredToken(credentials))
            .await
            .map_err(store_error)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.store.remove(&self.url).await.map_err(store_error)
    }
}
