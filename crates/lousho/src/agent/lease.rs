//! A stored session's run lease, as a run holds it: taken before the run's
//! first turn (waiting while another run of the session holds it), renewed
//! while the run goes on, given back when it ends. See
//! [`LeaseSettings`](crate::session::LeaseSettings).

use super::{AgentError, AgentEvent};
use crate::session::{LeaseSettings, LeaseState, SessionStore, StoreError, new_run_id};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// The first pause between two tries for a held lease; it doubles up to
/// [`MAX_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_millis(20);

/// The longest pause between two tries.
const MAX_PAUSE: Duration = Duration::from_millis(250);

/// A lease this run holds.
pub(crate) struct HeldLease {
    store: Arc<dyn SessionStore>,
    session: String,
    holder: String,
    ttl: Duration,
}

/// Takes `session`'s lease for a new holder id, waiting (up to
/// `settings.wait`) while another run holds it; the first time it waits it
/// sends [`AgentEvent::SessionBusy`].
pub(crate) async fn take(
    store: &Arc<dyn SessionStore>,
    session: &str,
    settings: LeaseSettings,
    tx: &mpsc::Sender<Result<AgentEvent, AgentError>>,
    cancel: &CancellationToken,
) -> Result<HeldLease, AgentError> {
    let holder = new_run_id();
    let started = Instant::now();
    let mut told = false;
    let mut pause = FIRST_PAUSE;
    loop {
        let state = store
            .acquire_lease(session, &holder, settings.ttl)
            .await
            .map_err(AgentError::Session)?;
        let LeaseState::Held {
            holder: other,
            expires_in,
        } = state
        else {
            return Ok(HeldLease {
                store: store.clone(),
                session: session.to_owned(),
                holder,
                ttl: settings.ttl,
            });
        };
        let waited = started.elapsed();
        if waited >= settings.wait {
            return Err(AgentError::Session(StoreError::Busy {
                session: session.to_owned(),
                holder: other,
                waited_secs: waited.as_secs(),
                expires_in_secs: expires_in.as_secs(),
            }));
        }
        // An empty holder: the lease was given back between two queries.
        if !told && !other.is_empty() {
            told = true;
            tracing::info!(target: "lousho::session", session, holder = %other, "waiting for the session's lease");
            let busy = AgentEvent::SessionBusy {
                session: session.to_owned(),
                holder: other,
            };
            tx.send(Ok(busy)).await.map_err(|_| AgentError::Cancelled)?;
        }
        // A random part spreads the waiters' tries.
        let nap = pause
            .mul_f64(0.5 + fastrand::f64() / 2.0)
            .min(settings.wait - waited);
        tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(AgentError::Cancelled),
            () = tokio::time::sleep(nap) => {}
        }
        pause = (pause * 2).min(MAX_PAUSE);
    }
}

impl HeldLease {
    /// The holder id this run took the lease under.
    pub(crate) fn holder(&self) -> &str {
        &self.holder
    }

    /// Renews the lease every third of its time, for as long as it is
    /// polled (the run's own future races it).
    pub(crate) async fn heartbeat(&self) -> Infallible {
        let every = self.ttl / 3;
        loop {
            tokio::time::sleep(every).await;
            match self
                .store
                .renew_lease(&self.session, &self.holder, self.ttl)
                .await
            {
                Ok(true) => {}
                Ok(false) => tracing::warn!(
                    target: "lousho::session",
                    session = %self.session,
                    "this run's lease of the session ran out and another run took it over (was the process stalled?); this run's turn may not be stored"
                ),
                Err(e) => tracing::warn!(
                    target: "lousho::session",
                    session = %self.session,
                    error = %e,
                    "could not renew the run's lease of the session"
                ),
            }
        }
    }

    /// Gives the lease back (a failure only delays the next run until the
    /// lease runs out).
    pub(crate) async fn release(self) {
        if let Err(e) = self.store.release_lease(&self.session, &self.holder).await {
            tracing::warn!(
                target: "lousho::session",
                session = %self.session,
                error = %e,
                "could not give back the run's lease of the session; the next run waits until it runs out"
            );
        }
    }
}
