//! The session store: `--store` / `LOUSHO_STORE` (a SQLite file, or a
//! `postgres://` URL), else `sessions.db` in the user's data folder.

use anyhow::Context;
use lousho::session::{LeaseSettings, SessionStore};
use std::path::PathBuf;
use std::sync::Arc;

/// Opens the store the command line names (creating the SQLite file and its
/// folder on first use).
pub async fn open(flag: Option<&str>) -> anyhow::Result<Arc<dyn SessionStore>> {
    match flag {
        Some(url) if url.starts_with("postgres://") || url.starts_with("postgresql://") => {
            postgres(url).await
        }
        Some(path) => sqlite(PathBuf::from(path)).await,
        None => sqlite(default_path()?).await,
    }
}

/// The environment variable for the lease time of a session's run, in seconds.
pub const LEASE_ENV: &str = "LOUSHO_SESSION_LEASE";

/// How runs of a stored session take its lease: `LOUSHO_SESSION_LEASE`
/// seconds (a whole number from 1; default 30) is how long a crashed run
/// keeps the session from the next run.
pub fn lease() -> anyhow::Result<LeaseSettings> {
    let Ok(value) = std::env::var(LEASE_ENV) else {
        return Ok(LeaseSettings::default());
    };
    match value.trim().parse::<u64>() {
        Ok(secs) if secs >= 1 => {
            Ok(LeaseSettings::default().ttl(std::time::Duration::from_secs(secs)))
        }
        _ => Err(crate::exit::Usage(format!(
            "{LEASE_ENV}={value:?} is not a lease time: give whole seconds from 1 (default 30)"
        ))
        .into()),
    }
}

/// `$XDG_DATA_HOME/lousho/sessions.db`, else `~/.local/share/lousho/sessions.db`
/// (the platform's data folder elsewhere).
pub fn default_path() -> anyhow::Result<PathBuf> {
    let dirs = directories::ProjectDirs::from("", "", "lousho")
        .context("no home folder to keep sessions in; pass --store FILE")?;
    Ok(dirs.data_dir().join("sessions.db"))
}

async fn sqlite(path: PathBuf) -> anyhow::Result<Arc<dyn SessionStore>> {
    let store = lousho::session::SqliteStore::open(&path)
        .await
        .with_context(|| format!("opening the session store {}", path.display()))?;
    Ok(Arc::new(store))
}

#[cfg(feature = "postgres")]
async fn postgres(url: &str) -> anyhow::Result<Arc<dyn SessionStore>> {
    let store = lousho::session::PostgresStore::connect(url)
        .await
        .context("connecting to the PostgreSQL session store (--store)")?;
    Ok(Arc::new(store))
}

#[cfg(not(feature = "postgres"))]
async fn postgres(_url: &str) -> anyhow::Result<Arc<dyn SessionStore>> {
    Err(crate::exit::Usage(
        "--store is a postgres:// URL, but this lousho was built without the `postgres` feature; \
         rebuild with it (cargo install lousho-cli --features postgres) or use a SQLite file"
            .into(),
    )
    .into())
}
