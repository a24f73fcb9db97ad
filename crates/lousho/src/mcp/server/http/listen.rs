//! The HTTP accept loop (instead of `axum::serve`, which has none of this):
//! at most `max_connections` connections served at once, a deadline for each
//! request's headers that also bounds how long a kept-alive connection may
//! sit idle (see [`late`]: a client that owes a request is answered `408`),
//! load shedding with an answer, and a close that lets in-flight requests
//! finish.
//!
//! Past the cap, a connection's one request is read first (its head within
//! [`SHED_HEADER_TIMEOUT`], else `408`; a small body within a second): only
//! a complete request waits for a slot — a silent or slow connection never
//! takes the slot a ready request needs. While it waits (up to
//! [`READY_WAIT`]), room is made for it (see [`conns`]: an idle kept-alive
//! connection, else one stalled before sending its request, is closed — with
//! `408` if it owed one; one with a complete request in flight never is).
//! It is served if a slot frees, else answered `503` with `Retry-After`;
//! either way the connection then closes. Up to [`spare_connections`]
//! connections past the cap are handled so at a time; past that, new ones
//! wait in the kernel's backlog (they hold no file descriptor of ours; see
//! `bind` for its size). A client never sees a reset without an answer.

mod conns;
mod late;
mod shed;

use super::super::error::ServeError;
use axum::body::Body;
use conns::{Entry, Phase, State, Table, Watched};
use hyper::body::{Body as HttpBody, Bytes, Frame, Incoming, SizeHint};
use hyper_util::rt::{TokioIo, TokioTimer};
use late::End;
pub(crate) use shed::{ShedCount, busy};
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

/// How long `close()` waits for requests in flight before dropping them.
const CLOSE_GRACE: Duration = Duration::from_secs(5);
/// How long to pause accepting after the process ran out of file descriptors.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);
/// How long a complete request past the cap waits for a slot before it is
/// answered `503`: long enough for a stalled connection to pass its grace
/// and be closed to make room ([`conns::STALL_GRACE`] + [`EVICT_GRACE`]),
/// and for a burst to be served by the connections under the cap.
const READY_WAIT: Duration = Duration::from_secs(2);
/// How often a connection waiting for a slot asks for room again (a stalled
/// connection may have passed its grace meanwhile).
const ROOM_TICK: Duration = Duration::from_millis(100);
/// How long a connection closed to make room may still send its request
/// (it is then answered and closed); one that has not by then is dropped.
const EVICT_GRACE: Duration = Duration::from_millis(250);
/// The largest body of a request past the cap that may still be served.
const LAST_CHANCE_BODY_BYTES: usize = 64 * 1024;
/// The header deadline of a connection past the cap: short, as a client
/// sends its request right after connecting, and the connections queued
/// behind a silent one (a burst of idle sockets, say) wait for its slot.
const SHED_HEADER_TIMEOUT: Duration = Duration::from_millis(500);

/// The connection limits the loop enforces.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ConnLimits {
    /// A request's headers must arrive within this, counted from the end of
    /// the previous response (or the connect): slow headers and idle
    /// kept-alive connections are closed after it.
    pub(crate) header_timeout: Duration,
    /// The most connections served at once.
    pub(crate) max_connections: usize,
    /// After [`BODY_RATE_GRACE`], a request body must have arrived at this
    /// many bytes a second on average (0: no minimum); else `408`.
    pub(crate) min_body_rate: u64,
}

/// How long a request body may arrive at any rate before `min_body_rate`
/// applies.
pub(crate) const BODY_RATE_GRACE: Duration = Duration::from_secs(5);

/// The client's address, in each request's extensions.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ClientAddr(pub(crate) IpAddr);

/// A request body that arrived more slowly than `min_body_rate`.
#[derive(Debug, thiserror::Error)]
#[error("the request body arrived at under {0} bytes a second")]
pub(crate) struct BodyTooSlow(pub(crate) u64);

/// How many connections past `max_connections` may be read, wait for a slot
/// or be answered at once: a third of the file descriptors the cap leaves
/// (an eighth of the cap when the limit is unknown), 4 to 256.
pub(crate) fn spare_connections(max_connections: usize, fd_limit: Option<usize>) -> usize {
    let spare = match fd_limit {
        Some(fds) => fds.saturating_sub(max_connections) / 3,
        None => max_connections / 8,
    };
    spare.clamp(4, 256)
}

/// What every connection task shares.
struct Shared {
    app: axum::Router,
    http: hyper::server::conn::http1::Builder,
    shed_http: hyper::server::conn::http1::Builder,
    table: Arc<Table>,
    slots: Arc<Semaphore>,
    stop: CancellationToken,
    shed: ShedCount,
    limits: ConnLimits,
}

/// Serves `app` on `listener` until `stop` fires; then stops accepting,
/// closes idle connections, lets requests in flight finish (up to 5 s) and
/// returns.
pub(crate) async fn serve(
    listener: TcpListener,
    app: axum::Router,
    limits: ConnLimits,
    stop: CancellationToken,
) -> Result<(), ServeError> {
    let max = limits.max_connections.max(1);
    let mut http = hyper::server::conn::http1::Builder::new();
    // The header timeout is ours (see `late`): hyper's closes without an
    // answer.
    http.timer(TokioTimer::new())
        .header_read_timeout(None)
        .keep_alive(true);
    let mut shed_http = hyper::server::conn::http1::Builder::new();
    shed_http
        .timer(TokioTimer::new())
        .header_read_timeout(None)
        .keep_alive(false);
    let shared = Arc::new(Shared {
        app,
        http,
        shed_http,
        table: Arc::new(Table::default()),
        slots: Arc::new(Semaphore::new(max)),
        stop: stop.clone(),
        shed: ShedCount::new("HTTP connections", "max_connections"),
        limits,
    });
    let spare_total = spare_connections(max, super::super::options::fd_limit());
    let spare = Arc::new(Semaphore::new(spare_total));
    let mut tasks = JoinSet::new();
    loop {
        while tasks.try_join_next().is_some() {}
        let (stream, client) = tokio::select! {
            r = listener.accept() => match r {
                Ok((stream, addr)) => (stream, addr.ip()),
                Err(e) => {
                    accept_failed(&e).await;
                    continue;
                }
            },
            () = stop.cancelled() => break,
        };
        let _ = stream.set_nodelay(true);
        if let Ok(slot) = shared.slots.clone().try_acquire_owned() {
            tasks.spawn(shared.clone().serve(stream, client, slot));
            continue;
        }
        let waiting = match spare.clone().try_acquire_owned() {
            Ok(w) => w,
            Err(_) => {
                tracing::debug!(
                    max,
                    "every HTTP connection slot is taken and as many wait; new connections wait in the backlog"
                );
                // Until a slot or a spare place frees, accept nothing more.
                tokio::select! {
                    slot = shared.slot() => {
                        tasks.spawn(shared.clone().serve(stream, client, slot));
                        continue;
                    }
                    w = spare.clone().acquire_owned() => match w {
                        Ok(w) => w,
                        Err(_) => break,
                    },
                    () = stop.cancelled() => break,
                }
            }
        };
        tasks.spawn(shared.clone().last_chance(stream, client, waiting));
    }
    drop(listener);
    let drain = async { while tasks.join_next().await.is_some() {} };
    if tokio::time::timeout(CLOSE_GRACE, drain).await.is_err() {
        tracing::warn!("HTTP connections did not close in time; dropping them");
        tasks.abort_all();
    }
    Ok(())
}

impl Shared {
    /// A free connection slot, asking for room every [`ROOM_TICK`] meanwhile.
    async fn slot(&self) -> OwnedSemaphorePermit {
        loop {
            tokio::select! {
                p = self.slots.clone().acquire_owned() => match p {
                    Ok(p) => return p,
                    // The semaphore is never closed; wait for the stop.
                    Err(_) => std::future::pending::<()>().await,
                },
                () = tokio::time::sleep(ROOM_TICK) => {
                    self.table.make_room();
                }
            }
        }
    }

    /// A connection past the cap (holding one of the `spare` places) gets
    /// one request read: a complete one (the body within
    /// [`LAST_CHANCE_BODY_BYTES`] and a second) waits up to [`READY_WAIT`]
    /// for a slot, room being made for it, and is served; otherwise it is
    /// answered `503` with `Retry-After`. A head that does not arrive within
    /// [`SHED_HEADER_TIMEOUT`] is answered `408`. Then the connection closes.
    async fn last_chance(
        self: Arc<Self>,
        stream: TcpStream,
        client: IpAddr,
        spare: OwnedSemaphorePermit,
    ) {
        let shared = self.clone();
        let state = Arc::new(State::detached());
        let head_in = state.clone();
        let service = hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
            // The head is in: no longer late, whatever the wait for a slot.
            head_in.head_complete();
            shared.clone().serve_once(req, client)
        });
        let io = TokioIo::new(Watched {
            inner: stream,
            state: state.clone(),
        });
        let mut conn = self.shed_http.serve_connection(io, service);
        let header_timeout = SHED_HEADER_TIMEOUT.min(self.limits.header_timeout);
        if late::run(&mut conn, &state, header_timeout, &self.stop).await == End::HeadLate {
            tracing::debug!(%client, "the head of a request past the cap was late: answering 408");
            let stream = conn.into_parts().io.into_inner().inner;
            // The next connection past the cap may start while this one
            // lingers over its `408`: a silent client must not hold the way
            // for the ones behind it (out of descriptors, accepting backs off).
            drop(spare);
            late::request_timeout(stream, &late_head(header_timeout)).await;
        }
    }

    /// The one request of a connection past the cap (see [`Self::last_chance`]).
    async fn serve_once(
        self: Arc<Self>,
        req: hyper::Request<Incoming>,
        client: IpAddr,
    ) -> Result<hyper::Response<Holding<Option<OwnedSemaphorePermit>>>, Infallible> {
        let (parts, body) = req.into_parts();
        let read = axum::body::to_bytes(Body::new(body), LAST_CHANCE_BODY_BYTES);
        let read = tokio::time::timeout(Duration::from_secs(1), read).await;
        // Only a complete request waits for a slot.
        if let Ok(Ok(bytes)) = read {
            let slot = tokio::select! {
                slot = self.slot() => Some(slot),
                () = tokio::time::sleep(READY_WAIT) => None,
                () = self.stop.cancelled() => None,
            };
            if let Some(slot) = slot {
                let mut req = hyper::Request::from_parts(parts, Body::from(bytes));
                req.extensions_mut().insert(ClientAddr(client));
                let mut app = self.app.clone();
                let response = match tower_service::Service::call(&mut app, req).await {
                    Ok(r) => r,
                    Err(never) => match never {},
                };
                return Ok(response.map(|inner| Holding {
                    inner,
                    _guard: Some(slot),
                }));
            }
        }
        self.shed.record(self.limits.max_connections);
        tracing::debug!(%client, "at the HTTP connection cap: answering 503");
        let what = format!("{} connections", self.limits.max_connections);
        Ok(busy(&what).map(|inner| Holding {
            inner,
            _guard: None,
        }))
    }

    /// Serves one connection holding `slot`.
    async fn serve(self: Arc<Self>, stream: TcpStream, client: IpAddr, slot: OwnedSemaphorePermit) {
        let entry: Entry = self.table.insert(client, self.stop.child_token());
        let state = entry.state.clone();
        let app = self.app.clone();
        let min_rate = self.limits.min_body_rate;
        let service = hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
            let state = state.clone();
            if req.body().is_end_stream() {
                state.request_complete();
            } else {
                state.head_complete();
            }
            let mut req = req.map(|inner| {
                Body::new(Reading {
                    inner,
                    state: state.clone(),
                    rate: (min_rate > 0).then(|| RateCheck::new(min_rate)),
                })
            });
            req.extensions_mut().insert(ClientAddr(client));
            let answering = Answering(state);
            let mut app = app.clone();
            let response = tower_service::Service::call(&mut app, req);
            async move {
                let response = match response.await {
                    Ok(r) => r,
                    Err(never) => match never {},
                };
                // Answered (perhaps without reading the whole body).
                answering.0.request_complete();
                Ok::<_, Infallible>(response.map(|inner| Holding {
                    inner,
                    _guard: answering,
                }))
            }
        });
        let io = TokioIo::new(Watched {
            inner: stream,
            state: entry.state.clone(),
        });
        let mut conn = self.http.serve_connection(io, service);
        let header_timeout = self.limits.header_timeout;
        let why = match late::run(&mut conn, &entry.state, header_timeout, &entry.evict).await {
            End::Finished => return,
            // A kept-alive connection idle that long just closes.
            End::HeadLate if entry.state.phase() == Phase::Idle => return,
            End::HeadLate => late_head(header_timeout),
            End::Evicted if self.stop.is_cancelled() => {
                // Closing: an idle or unfinished connection just goes; one
                // with a request in flight finishes it first.
                if entry.state.phase() == Phase::Busy {
                    Pin::new(&mut conn).graceful_shutdown();
                    let _ = conn.await;
                }
                return;
            }
            End::Evicted => {
                // Closed to make room: a request that arrives within the
                // grace is still answered (then the connection closes).
                Pin::new(&mut conn).graceful_shutdown();
                tokio::select! {
                    _ = &mut conn => return,
                    () = tokio::time::sleep(EVICT_GRACE) => {}
                }
                match entry.state.phase() {
                    Phase::Busy => {
                        let _ = conn.await;
                        return;
                    }
                    Phase::Idle => return,
                    Phase::Silent | Phase::Head | Phase::Body => {
                        "the server is at its connection limit and the request did not arrive in time; retry".to_owned()
                    }
                }
            }
        };
        // The client owes a request: it is told so, on the connection's own
        // time (its slot is free for another).
        drop(entry);
        drop(slot);
        tracing::debug!(%client, "answering 408 to a request that did not arrive in time");
        let stream = conn.into_parts().io.into_inner().inner;
        late::request_timeout(stream, &why).await;
    }
}

/// The `408` message for a head that did not arrive within `timeout`.
fn late_head(timeout: Duration) -> String {
    format!(
        "the request's headers did not arrive within {} s",
        timeout.as_secs_f32()
    )
}

/// Logs a failed `accept`; after running out of descriptors or memory, pauses
/// briefly (the error would repeat at once) while open connections time out.
async fn accept_failed(e: &io::Error) {
    match e.kind() {
        io::ErrorKind::ConnectionAborted
        | io::ErrorKind::ConnectionReset
        | io::ErrorKind::ConnectionRefused
        | io::ErrorKind::Interrupted => {
            tracing::debug!(error = %e, "a connection went away before it was accepted");
        }
        _ => {
            tracing::warn!(error = %e, "cannot accept HTTP connections (out of file descriptors? lower max_connections)");
            tokio::time::sleep(ACCEPT_BACKOFF).await;
        }
    }
}

/// A request being answered; the connection is idle again when it drops.
struct Answering(Arc<State>);

impl Drop for Answering {
    fn drop(&mut self) {
        self.0.answered();
    }
}

/// A request body that marks its request complete when it ends, and fails
/// with [`BodyTooSlow`] when it arrives under the minimum rate.
struct Reading {
    inner: Incoming,
    state: Arc<State>,
    rate: Option<RateCheck>,
}

/// The minimum body rate: the body's bytes so far must have arrived by
/// `start + grace + received / min`. The timer is armed only while the body
/// is waited for: a body that arrives with its head (most requests) never
/// touches the runtime's timer wheel — registering a timer wakes the parked
/// I/O driver, a syscall per request.
struct RateCheck {
    min: u64,
    start: tokio::time::Instant,
    received: u64,
    deadline: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl RateCheck {
    fn new(min: u64) -> Self {
        RateCheck {
            min,
            start: tokio::time::Instant::now(),
            received: 0,
            deadline: None,
        }
    }

    fn add(&mut self, bytes: usize) {
        self.received = self.received.saturating_add(bytes as u64);
    }

    /// When the bytes received so far must have arrived by.
    fn due(&self) -> tokio::time::Instant {
        let allowed = Duration::from_secs_f64(self.received as f64 / self.min as f64);
        self.start + BODY_RATE_GRACE + allowed
    }

    /// Whether the body is too slow, waking `cx` when it would become so.
    fn too_slow(&mut self, cx: &mut Context<'_>) -> bool {
        let due = self.due();
        let sleep = match &mut self.deadline {
            Some(sleep) => {
                if sleep.deadline() != due {
                    sleep.as_mut().reset(due);
                }
                sleep
            }
            None => self
                .deadline
                .insert(Box::pin(tokio::time::sleep_until(due))),
        };
        sleep.as_mut().poll(cx).is_ready()
    }
}

impl HttpBody for Reading {
    type Data = Bytes;
    type Error = axum::BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::BoxError>>> {
        let r = Pin::new(&mut self.inner).poll_frame(cx);
        match &r {
            Poll::Ready(None) => self.state.request_complete(),
            Poll::Ready(Some(Ok(frame))) => {
                let len = frame.data_ref().map_or(0, Bytes::len);
                if let Some(rate) = &mut self.rate {
                    rate.add(len);
                }
                if self.inner.is_end_stream() {
                    self.state.request_complete();
                }
            }
            Poll::Pending => {
                if let Some(rate) = &mut self.rate
                    && rate.too_slow(cx)
                {
                    let min = rate.min;
                    self.rate = None;
                    return Poll::Ready(Some(Err(BodyTooSlow(min).into())));
                }
            }
            Poll::Ready(Some(Err(_))) => {}
        }
        r.map(|o| o.map(|r| r.map_err(Into::into)))
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// A response body that holds `G` until it ends: its connection marked busy,
/// or its slot (an SSE stream of progress notifications may outlive the
/// handler's future).
struct Holding<G> {
    inner: Body,
    _guard: G,
}

impl<G: Unpin> HttpBody for Holding<G> {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
