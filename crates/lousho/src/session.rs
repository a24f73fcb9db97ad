//! Conversations that outlast a process: the [`SessionStore`] trait and its
//! backends.
//!
//! A store keeps each session's messages in order with a **version** (the
//! number of messages stored). An append names the version it expects; if
//! another writer got there first the append fails with
//! [`StoreError::Conflict`] and changes nothing, so two writers never
//! silently overwrite each other. Paused runs ([`RunState`](crate::RunState))
//! are saved and loaded by id, so a run that waits for approval can be
//! resumed by another process.
//!
//! | backend | feature | for |
//! | --- | --- | --- |
//! | [`MemoryStore`] | — | tests, one process |
//! | `SqliteStore` | `sqlite` | the embedded default: one file, WAL |
//! | `PostgresStore` | `postgres` | replicas of a served agent sharing one database |
//!
//! Continue a stored conversation with
//! [`Agent::open_session`](crate::Agent::open_session):
//!
//! ```
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use lousho::Agent;
//! use lousho::session::MemoryStore;
//! use std::sync::Arc;
//!
//! let store = Arc::new(MemoryStore::new());
//! let agent = Agent::builder().model("test").build()?;
//! let session = agent.open_session(store.clone(), "support-42").await?;
//! session.send("hello").await?;
//!
//! // Later, in another process with the same store: the history is back.
//! let again = agent.open_session(store, "support-42").await?;
//! assert_eq!(again.history().len(), 2);
//! # Ok(()) }
//! ```
//!
//! Schemas are versioned: opening a database runs its missing migrations
//! (in one transaction), and a database written by a newer lousho is refused.

mod error;
mod journal;
mod lease;
mod memory;
#[cfg(feature = "postgres")]
mod postgres;
/// Public as `lousho::agent::{RunState, RunStateError, RUN_STATE_VERSION}`.
pub(crate) mod run_state;
mod shared_task;
#[cfg(feature = "sqlite")]
mod sqlite;
mod store;
mod window;

pub use error::StoreError;
pub use journal::{JournalStart, JournalStatus, JournalStep, JournaledRun, RunSummary};
pub use lease::{DEFAULT_LEASE_TTL, DEFAULT_LEASE_WAIT, LeaseSettings, LeaseState};
pub use memory::MemoryStore;
#[cfg(feature = "postgres")]
pub use postgres::{DEFAULT_POSTGRES_POOL, PostgresStore};
pub use shared_task::{SharedTask, TaskRequest, TaskRequests};
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteStore;
pub use store::{PausedRun, SessionInfo, SessionStore, StoredSession, new_run_id};
pub use window::WindowCount;
