//! Load shedding of calls: at most `max_calls` `tools/call` requests in
//! flight, of them at most `max_agent_runs` agent runs, and of each a client
//! (a [`ClientId`]: its IP address, or the caller an authentication layer
//! names) holds at most its share, so one client cannot take every slot. A
//! call waits up to [`QUEUE_WAIT`] for its slots (in arrival order); past
//! that it is answered `503` with `Retry-After`, counted and logged.
//! Only complete requests wait here: the body has been read.

use super::client_id::ClientId;
use super::listen::{ShedCount, busy};
use crate::sync::MutexExt;
use axum::response::Response;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// How long a call waits for a slot before it is answered `503`.
const QUEUE_WAIT: Duration = Duration::from_secs(2);

/// The call limits and who holds what.
#[derive(Debug)]
pub(crate) struct Admission {
    calls: Limit,
    agent_runs: Limit,
    /// The agent tools' names (their calls are agent runs).
    agent_tools: HashSet<String>,
}

/// The settings [`Admission`] enforces.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CallLimits {
    /// `tools/call` requests in flight at once.
    pub(crate) max_calls: usize,
    /// Agent runs in flight at once.
    pub(crate) max_agent_runs: usize,
    /// The share of each limit one client may hold, in percent.
    pub(crate) client_share_percent: u8,
}

impl Admission {
    pub(crate) fn new(limits: CallLimits, agent_tools: HashSet<String>) -> Self {
        let share = |max: usize| {
            let percent = usize::from(limits.client_share_percent.clamp(1, 100));
            (max.saturating_mul(percent) / 100).max(1)
        };
        Admission {
            calls: Limit::new(
                limits.max_calls,
                share(limits.max_calls),
                ShedCount::new("calls in flight", "max_calls"),
            ),
            agent_runs: Limit::new(
                limits.max_agent_runs,
                share(limits.max_agent_runs),
                ShedCount::new("agent runs in flight", "max_agent_runs"),
            ),
            agent_tools,
        }
    }

    /// Whether a call of `tool` is an agent run.
    pub(crate) fn is_run(&self, tool: &str) -> bool {
        self.agent_tools.contains(tool)
    }

    /// Slots for a call of `tool` from `client`, or the `503` to answer.
    pub(crate) async fn admit(
        &self,
        client: ClientId,
        tool: Option<&str>,
    ) -> Result<Admitted, Response> {
        let deadline = tokio::time::Instant::now() + QUEUE_WAIT;
        let run = match tool.is_some_and(|t| self.agent_tools.contains(t)) {
            true => Some(self.agent_runs.admit(client.clone(), deadline).await?),
            false => None,
        };
        let call = self.calls.admit(client, deadline).await?;
        Ok(Admitted {
            _run: run,
            _call: call,
        })
    }
}

/// A call's slots, held until its response ends.
#[derive(Debug)]
pub(crate) struct Admitted {
    _run: Option<Held>,
    _call: Held,
}

/// One limit: a total and a share per client.
#[derive(Debug)]
struct Limit {
    max: usize,
    per_client: usize,
    total: Arc<Semaphore>,
    clients: Arc<Mutex<HashMap<ClientId, Arc<Semaphore>>>>,
    shed: ShedCount,
}

impl Limit {
    fn new(max: usize, per_client: usize, shed: ShedCount) -> Self {
        let max = max.max(1);
        Limit {
            max,
            per_client: per_client.min(max),
            total: Arc::new(Semaphore::new(max)),
            clients: Arc::default(),
            shed,
        }
    }

    /// The client's share first, then the total, by `deadline`.
    async fn admit(
        &self,
        client: ClientId,
        deadline: tokio::time::Instant,
    ) -> Result<Held, Response> {
        let own = self
            .clients
            .lock_unpoisoned()
            .entry(client.clone())
            .or_insert_with(|| Arc::new(Semaphore::new(self.per_client)))
            .clone();
        let mut held = Held {
            client,
            own,
            clients: self.clients.clone(),
            permits: None,
        };
        let both = acquire_both(held.own.clone(), self.total.clone());
        let acquired = tokio::time::timeout_at(deadline, both).await;
        if let Ok(Some(permits)) = acquired {
            held.permits = Some(permits);
            return Ok(held);
        }
        self.shed.record(self.max);
        tracing::debug!(client = ?held.client, limit = self.max, share = self.per_client, "shed a call");
        Err(busy(&format!("{} {}", self.max, self.shed.what())))
    }
}

/// A permit of the client's share, then one of the total.
async fn acquire_both(
    own: Arc<Semaphore>,
    total: Arc<Semaphore>,
) -> Option<(OwnedSemaphorePermit, OwnedSemaphorePermit)> {
    let mine = own.acquire_owned().await.ok()?;
    let total = total.acquire_owned().await.ok()?;
    Some((mine, total))
}

/// Slots of one limit; the client's entry goes when nobody holds or waits for it.
#[derive(Debug)]
struct Held {
    client: ClientId,
    own: Arc<Semaphore>,
    clients: Arc<Mutex<HashMap<ClientId, Arc<Semaphore>>>>,
    permits: Option<(OwnedSemaphorePermit, OwnedSemaphorePermit)>,
}

impl Drop for Held {
    fn drop(&mut self) {
        self.permits = None;
        let mut clients = self.clients.lock_unpoisoned();
        // The map's and ours: nobody else holds or waits for this share.
        if Arc::strong_count(&self.own) == 2 {
            clients.remove(&self.client);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{IpAddr, Ipv4Addr};

    const A: ClientId = ClientId::Address(IpAddr::V4(Ipv4Addr::new(192, 0, 2, 1)));
    const B: ClientId = ClientId::Address(IpAddr::V4(Ipv4Addr::new(192, 0, 2, 2)));

    fn admission(max_calls: usize, max_agent_runs: usize) -> Admission {
        Admission::new(
            CallLimits {
                max_calls,
                max_agent_runs,
                client_share_percent: 50,
            },
            HashSet::from(["agent".to_owned()]),
        )
    }

    #[tokio::test(start_paused = true)]
    async fn one_client_gets_its_share_and_another_still_gets_in() {
        let a = admission(4, 4);
        let mut held = Vec::new();
        for _ in 0..2 {
            held.push(a.admit(A, Some("echo")).await.unwrap());
        }
        let over = a.admit(A, Some("echo")).await.unwrap_err();
        assert_eq!(over.status(), 503);
        assert_eq!(over.headers()["retry-after"], "1");
        held.push(a.admit(B, Some("echo")).await.unwrap());
        assert_eq!(a.calls.shed.total(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn agent_runs_have_their_own_limit() {
        let a = admission(8, 2);
        let _runs = (
            a.admit(A, Some("agent")).await.unwrap(),
            a.admit(B, Some("agent")).await.unwrap(),
        );
        assert!(a.admit(B, Some("agent")).await.is_err());
        assert!(
            a.admit(B, Some("echo")).await.is_ok(),
            "other calls still get in"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_waiting_call_gets_the_slot_freed_before_its_deadline() {
        let a = Arc::new(admission(2, 2));
        let first = a.admit(A, None).await.unwrap();
        let waiting = tokio::spawn({
            let a = a.clone();
            async move { a.admit(A, None).await.is_ok() }
        });
        tokio::time::sleep(QUEUE_WAIT / 2).await;
        drop(first);
        assert!(waiting.await.unwrap());
    }

    #[tokio::test(start_paused = true)]
    async fn a_client_with_nothing_held_leaves_no_entry() {
        let a = admission(4, 4);
        let held = a.admit(A, None).await.unwrap();
        let _other = a.admit(A, None).await.unwrap();
        assert!(a.admit(A, None).await.is_err());
        drop(held);
        drop(_other);
        assert!(a.calls.clients.lock_unpoisoned().is_empty());
    }
}
