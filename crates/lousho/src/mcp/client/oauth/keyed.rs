//! Stored grants are keyed by the server's URL **and** the identity of the
//! credentials that fetched them (#12 item 6): a changed `clientId`,
//! `clientSecret`, private key, grant or identity provider for the same URL
//! starts from an empty slot instead of reusing a token fetched with the old
//! credentials. The key holds a SHA-256 digest of that identity (of the
//! secrets' digests, never the secrets). An entry with no credentials of its
//! own (authorization code with dynamic registration) keeps the bare URL, as
//! stores written before this change have it.

use super::store::{StoredToken, TokenStore, TokenStoreError};
use crate::mcp::client::config::OAuthSettings;
use crate::mcp::digest::sha256_hex;
use async_trait::async_trait;
use std::sync::Arc;

/// `store`, with every server URL turned into the key for `settings`.
pub(crate) fn keyed(store: Arc<dyn TokenStore>, settings: &OAuthSettings) -> Arc<dyn TokenStore> {
    match identity(settings) {
        None => store,
        Some(suffix) => Arc::new(Keyed {
            inner: store,
            suffix,
        }),
    }
}

/// The store key for `server_url` with `settings`.
pub(crate) fn key_for(server_url: &str, settings: &OAuthSettings) -> String {
    format!("{server_url}{}", identity(settings).unwrap_or_default())
}

/// `#cred=<16 hex digits>` for entries with credentials of their own.
fn identity(settings: &OAuthSettings) -> Option<String> {
    let idp = settings.idp.as_ref();
    let own = settings.client_id.is_some()
        || settings.client_secret.is_some()
        || settings.private_key_pem.is_some()
        || settings.private_key_file.is_some()
        || idp.is_some()
        || settings.grant != Default::default();
    if !own {
        return None;
    }
    let digest = |s: Option<&str>| s.map(|s| sha256_hex(s.as_bytes()));
    let parts = serde_json::json!({
        "grant": settings.grant,
        "clientId": settings.client_id,
        "clientSecret": digest(settings.client_secret.as_deref()),
        "privateKey": digest(settings.private_key_pem.as_deref()),
        "privateKeyFile": settings.private_key_file,
        "idp": idp.map(|i| serde_json::json!({
            "issuer": i.issuer,
            "clientId": i.client_id,
            "clientSecret": digest(i.client_secret.as_deref()),
        })),
    });
    let full = sha256_hex(parts.to_string().as_bytes());
    Some(format!("#cred={}", &full[..16]))
}

#[derive(Debug)]
struct Keyed {
    inner: Arc<dyn TokenStore>,
    suffix: String,
}

impl Keyed {
    fn key(&self, server_url: &str) -> String {
        format!("{server_url}{}", self.suffix)
    }
}

#[async_trait]
impl TokenStore for Keyed {
    async fn load(&self, server_url: &str) -> Result<Option<StoredToken>, TokenStoreError> {
        self.inner.load(&self.key(server_url)).await
    }

    async fn save(&self, server_url: &str, token: StoredToken) -> Result<(), TokenStoreError> {
        self.inner.save(&self.key(server_url), token).await
    }

    async fn remove(&self, server_url: &str) -> Result<(), TokenStoreError> {
        self.inner.remove(&self.key(server_url)).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::client::config::OAuthGrant;

    fn machine(client_id: &str, secret: &str) -> OAuthSettings {
        OAuthSettings::client_credentials(client_id).client_secret(secret)
    }

    #[test]
    fn the_key_changes_with_the_credentials_and_never_holds_the_secret() {
        let a = identity(&machine("app", "s3cret-one")).unwrap();
        assert_eq!(identity(&machine("app", "s3cret-one")).unwrap(), a);
        assert_ne!(identity(&machine("app", "s3cret-two")).unwrap(), a);
        assert_ne!(identity(&machine("other", "s3cret-one")).unwrap(), a);
        assert!(!a.contains("s3cret"));
        let mut code = machine("app", "s3cret-one");
        code.grant = OAuthGrant::AuthorizationCode;
        assert_ne!(identity(&code).unwrap(), a);
        assert_eq!(identity(&OAuthSettings::default()), None);
    }
}
