//! The open connections and what each is doing, so that at the cap the loop
//! closes one that no ready request needs: an idle kept-alive connection
//! first, then one that has sent nothing (or only part of a request) for a
//! while, taken from the client holding the most connections. The phase
//! also tells when a request's head is due (the header timeout). A connection
//! with a complete request in flight is never closed to make room.

use crate::sync::MutexExt;
use std::collections::HashMap;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_util::sync::CancellationToken;

/// How long a connection may stay silent (or send part of a request) before
/// it can be closed to make room: a client that just connected gets this
/// long to send its request.
pub(super) const STALL_GRACE: Duration = Duration::from_secs(1);
/// How long a kept-alive connection must have been idle before it can be
/// closed to make room: a client calling at full speed sends its next
/// request within this, and closing a connection just as a request arrives
/// on it would reset it without an answer.
pub(super) const IDLE_GRACE: Duration = Duration::from_millis(250);

/// What a connection is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(super) enum Phase {
    /// Accepted; no byte of a request read yet.
    Silent = 0,
    /// Part of a request's head (request line and headers) has arrived.
    Head = 1,
    /// The head is in; the body is arriving.
    Body = 2,
    /// A complete request is being answered.
    Busy = 3,
    /// Answered; kept alive for the next request, none of which has arrived.
    Idle = 4,
}

impl Phase {
    fn from_u8(v: u8) -> Phase {
        match v {
            0 => Phase::Silent,
            1 => Phase::Head,
            2 => Phase::Body,
            3 => Phase::Busy,
            _ => Phase::Idle,
        }
    }

    /// Whether the connection waits for a request's head (the header
    /// timeout runs).
    fn awaits_head(self) -> bool {
        matches!(self, Phase::Silent | Phase::Head | Phase::Idle)
    }
}

/// One connection's phase and since when, shared by its reader, its
/// requests and the table.
#[derive(Debug)]
pub(super) struct State {
    phase: AtomicU8,
    /// Milliseconds since the table's epoch when the phase began.
    since_ms: AtomicU64,
    /// Milliseconds since the table's epoch when the connection began to
    /// wait for its next request (the connect, or the end of the last
    /// answer): the header timeout counts from there.
    waiting_ms: AtomicU64,
    epoch: Instant,
}

impl State {
    fn new(epoch: Instant) -> Self {
        let s = State {
            phase: AtomicU8::new(Phase::Silent as u8),
            since_ms: AtomicU64::new(0),
            waiting_ms: AtomicU64::new(0),
            epoch,
        };
        s.stamp();
        s.waiting_ms
            .store(s.since_ms.load(Ordering::Relaxed), Ordering::Relaxed);
        s
    }

    /// The state of a connection outside the table (one past the cap).
    pub(super) fn detached() -> Self {
        Self::new(Instant::now())
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    fn stamp(&self) {
        self.since_ms.store(self.now_ms(), Ordering::Relaxed);
    }

    pub(super) fn phase(&self) -> Phase {
        Phase::from_u8(self.phase.load(Ordering::Acquire))
    }

    fn since(&self) -> Instant {
        self.epoch + Duration::from_millis(self.since_ms.load(Ordering::Relaxed))
    }

    /// When the head of the awaited request is due (`header_timeout` after
    /// the connection began to wait), or `None` while a request is past its
    /// head.
    pub(super) fn head_due(&self, header_timeout: Duration) -> Option<Instant> {
        if !self.phase().awaits_head() {
            return None;
        }
        let waiting = Duration::from_millis(self.waiting_ms.load(Ordering::Relaxed));
        Some(self.epoch + waiting + header_timeout)
    }

    /// Moves to `to`, stamping the time, when the phase is one of `from`.
    fn advance(&self, from: &[Phase], to: Phase) {
        let now = self.phase.load(Ordering::Acquire);
        if from.contains(&Phase::from_u8(now))
            && self
                .phase
                .compare_exchange(now, to as u8, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        {
            self.stamp();
        }
    }

    /// Bytes of a request arrived.
    fn saw_bytes(&self) {
        self.advance(&[Phase::Silent, Phase::Idle], Phase::Head);
    }

    /// A request's head is in; its body follows.
    pub(super) fn head_complete(&self) {
        self.advance(&[Phase::Silent, Phase::Head, Phase::Idle], Phase::Body);
    }

    /// The request is complete (its body read, or it has none).
    pub(super) fn request_complete(&self) {
        self.advance(
            &[Phase::Silent, Phase::Head, Phase::Body, Phase::Idle],
            Phase::Busy,
        );
    }

    /// The response has been sent (or abandoned): the connection waits for
    /// the next request.
    pub(super) fn answered(&self) {
        let now = self.now_ms();
        self.waiting_ms.store(now, Ordering::Relaxed);
        self.since_ms.store(now, Ordering::Relaxed);
        self.phase.store(Phase::Idle as u8, Ordering::Release);
    }
}

/// The open connections.
#[derive(Debug)]
pub(super) struct Table {
    epoch: Instant,
    next: AtomicU64,
    conns: Mutex<HashMap<u64, Conn>>,
}

#[derive(Debug)]
struct Conn {
    client: IpAddr,
    state: Arc<State>,
    evict: CancellationToken,
}

impl Default for Table {
    fn default() -> Self {
        Table {
            epoch: Instant::now(),
            next: AtomicU64::new(0),
            conns: Mutex::new(HashMap::new()),
        }
    }
}

impl Table {
    fn lock(&self) -> MutexGuard<'_, HashMap<u64, Conn>> {
        self.conns.lock_unpoisoned()
    }

    /// Adds a connection from `client`; `evict` closes it.
    pub(super) fn insert(self: &Arc<Self>, client: IpAddr, evict: CancellationToken) -> Entry {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let state = Arc::new(State::new(self.epoch));
        self.lock().insert(
            id,
            Conn {
                client,
                state: state.clone(),
                evict: evict.clone(),
            },
        );
        Entry {
            id,
            table: self.clone(),
            state,
            evict,
        }
    }

    /// Asks one connection that no ready request needs to close: the one
    /// idle longest (for at least [`IDLE_GRACE`]); else, of those silent or
    /// part-way through a request for longer than [`STALL_GRACE`], the
    /// oldest of the client holding the most connections. False when there
    /// is none.
    pub(super) fn make_room(&self) -> bool {
        let conns = self.lock();
        let now = Instant::now();
        let live = || conns.values().filter(|c| !c.evict.is_cancelled());
        let idle = live()
            .filter(|c| {
                c.state.phase() == Phase::Idle && now.duration_since(c.state.since()) >= IDLE_GRACE
            })
            .min_by_key(|c| c.state.since());
        if let Some(c) = idle {
            tracing::debug!(
                idle_ms = now.duration_since(c.state.since()).as_millis(),
                "closing the longest-idle HTTP connection to make room"
            );
            c.evict.cancel();
            return true;
        }
        let stalled = |c: &&Conn| {
            matches!(c.state.phase(), Phase::Silent | Phase::Head | Phase::Body)
                && now.duration_since(c.state.since()) >= STALL_GRACE
        };
        let mut held: HashMap<IpAddr, usize> = HashMap::new();
        for c in live() {
            *held.entry(c.client).or_default() += 1;
        }
        let victim = live().filter(stalled).min_by_key(|c| {
            let n = held.get(&c.client).copied().unwrap_or(0);
            (std::cmp::Reverse(n), c.state.since())
        });
        match victim {
            Some(c) => {
                tracing::debug!(
                    client = %c.client,
                    phase = ?c.state.phase(),
                    "closing a stalled HTTP connection to make room"
                );
                c.evict.cancel();
                true
            }
            None => false,
        }
    }
}

/// A connection's row in the table; removed when the connection ends.
#[derive(Debug)]
pub(super) struct Entry {
    id: u64,
    table: Arc<Table>,
    pub(super) state: Arc<State>,
    pub(super) evict: CancellationToken,
}

impl Drop for Entry {
    fn drop(&mut self) {
        self.table.lock().remove(&self.id);
    }
}

/// The socket as hyper sees it, noting when bytes of a request arrive.
#[derive(Debug)]
pub(super) struct Watched<S> {
    pub(super) inner: S,
    pub(super) state: Arc<State>,
}

impl<S: AsyncRead + Unpin> AsyncRead for Watched<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(r, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.state.saw_bytes();
        }
        r
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Watched<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table_with(clients: &[(IpAddr, Phase, u64)]) -> (Arc<Table>, Vec<Entry>) {
        let table = Arc::new(Table {
            epoch: Instant::now() - Duration::from_secs(100),
            ..Table::default()
        });
        let entries = clients
            .iter()
            .map(|&(ip, phase, age_s)| {
                let e = table.insert(ip, CancellationToken::new());
                e.state.phase.store(phase as u8, Ordering::Release);
                e.state
                    .since_ms
                    .store((100 - age_s) * 1000, Ordering::Relaxed);
                e
            })
            .collect();
        (table, entries)
    }

    const A: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(192, 0, 2, 1));
    const B: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(192, 0, 2, 2));

    #[test]
    fn an_idle_connection_goes_first_then_the_biggest_clients_stalled_one() {
        let (table, e) = table_with(&[
            (A, Phase::Silent, 50),
            (B, Phase::Head, 60),
            (B, Phase::Silent, 40),
            (A, Phase::Busy, 90),
            (B, Phase::Idle, 5),
            (B, Phase::Idle, 7),
        ]);
        assert!(table.make_room());
        assert!(e[5].evict.is_cancelled(), "the longest idle goes first");
        assert!(table.make_room());
        assert!(e[4].evict.is_cancelled());
        assert!(table.make_room());
        // Left: A (Silent 50 s, Busy), B (Sending 60 s, Silent 40 s): a tie,
        // so the oldest stalled one goes; then A holds the most.
        assert!(e[1].evict.is_cancelled(), "the oldest stalled one");
        assert!(table.make_room());
        assert!(e[0].evict.is_cancelled(), "A holds the most");
        assert!(table.make_room());
        assert!(e[2].evict.is_cancelled());
        assert!(
            !table.make_room(),
            "a busy connection is never closed to make room"
        );
        assert!(!e[3].evict.is_cancelled());
    }

    #[test]
    fn a_connection_that_just_connected_or_was_just_answered_is_not_closed_to_make_room() {
        let (table, e) = table_with(&[
            (A, Phase::Silent, 0),
            (A, Phase::Head, 0),
            (A, Phase::Body, 0),
            (A, Phase::Idle, 0),
        ]);
        assert!(!table.make_room());
        assert!(e.iter().all(|e| !e.evict.is_cancelled()));
    }
}
