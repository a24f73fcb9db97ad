//! What can go wrong in a session store.

/// A session store operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// Another writer appended first: the session is at `found`, the append
    /// expected `expected`. Nothing was written; load the session again and
    /// retry (or tell the user).
    #[error(
        "session {session:?} changed meanwhile: it is at version {found}, this write expected {expected}; load it again and retry"
    )]
    Conflict {
        /// The session.
        session: String,
        /// The version the write expected.
        expected: u64,
        /// The version the store holds.
        found: u64,
    },
    /// Another run of the session held its lease for longer than this run
    /// would wait ([`LeaseSettings::wait`](crate::session::LeaseSettings)).
    #[error(
        "session {session:?} is in use by run {holder} and stayed so for {waited_secs} s; try again once it has finished (the lease of a run that crashed runs out by itself, {expires_in_secs} s from now at the latest unless it is still renewed)"
    )]
    Busy {
        /// The session.
        session: String,
        /// The run holding its lease.
        holder: String,
        /// How long this run waited, in seconds.
        waited_secs: u64,
        /// How long the holder's lease has left unless renewed, in seconds.
        expires_in_secs: u64,
    },
    /// No session has this id.
    #[error("no session {session:?} in the store; create it first (or check the name)")]
    NotFound {
        /// The session.
        session: String,
    },
    /// A session with this id exists already.
    #[error("a session {session:?} exists already; open it instead of creating it")]
    AlreadyExists {
        /// The session.
        session: String,
    },
    /// A session id or run id is empty, too long or has control characters.
    #[error(
        "{what} {id:?} is not a valid id: use 1 to {max} characters, no control characters",
        max = crate::session::store::MAX_ID_LEN
    )]
    InvalidId {
        /// "session id" or "run id".
        what: &'static str,
        /// The id as given.
        id: String,
    },
    /// A stored record could not be read back (written by another program,
    /// or damaged).
    #[error("the stored {what} could not be read: {source}")]
    Corrupt {
        /// What was read ("message 3 of session \"a\"", "paused run \"x\"").
        what: String,
        /// The decoding error.
        #[source]
        source: serde_json::Error,
    },
    /// The database was written by a newer lousho (its schema version is
    /// past the one this build knows).
    #[error(
        "the session database has schema version {found}, this lousho knows up to {supported}; use a newer lousho or another database"
    )]
    SchemaTooNew {
        /// The database's schema version.
        found: i64,
        /// The newest this build knows.
        supported: i64,
    },
    /// The database failed (cannot open, I/O, connection lost).
    #[error("the {backend} session store failed: {source}")]
    Backend {
        /// "sqlite" or "postgres".
        backend: &'static str,
        /// The driver's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl StoreError {
    /// Whether this is a version conflict (another writer appended first).
    pub fn is_conflict(&self) -> bool {
        matches!(self, StoreError::Conflict { .. })
    }

    #[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
    pub(crate) fn backend(
        backend: &'static str,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        StoreError::Backend {
            backend,
            source: Box::new(source),
        }
    }
}
