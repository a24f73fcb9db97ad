//! The HTTP accept loop (instead of `axum::serve`, which has none of this):
//! at most `max_connections` connections served at once, a deadline for each
//! request's headers that also bounds how long a kept-alive connection may
//! sit idle, load shedding with an answer, and a close that lets in-flight
//! requests finish.
//!
//! At the cap, a new connection first makes room (see [`conns`]: an idle
//! kept-alive connection, else one stalled before sending its request, is
//! closed; one with a complete request in flight never is), then waits up to
//! [`ACCEPT_WAIT`] for a free slot; if none frees, it is answered `503` with
//! `Retry-After` and closed. Up to [`spare_connections`] connections wait or
//! are being answered so at a time; past that, new ones wait in the kernel's
//! backlog (they hold no file descriptor of ours) — a client never sees a
//! reset without an answer.

mod conns;
mod shed;

use super::super::error::ServeError;
use axum::body::Body;
use conns::{Entry, Phase, State, Table, Watched};
use hyper::body::{Body as HttpBody, Bytes, Frame, Incoming, SizeHint};
use hyper_util::rt::{TokioIo, TokioTimer};
use shed::{ShedCount, busy};
use std::convert::Infallible;
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
/// How long a connection over the cap waits for a slot before it is
/// answered `503`.
const ACCEPT_WAIT: Duration = Duration::from_secs(1);
/// How often a connection waiting for a slot asks for room again (a stalled
/// connection may have passed its grace meanwhile).
const ROOM_TICK: Duration = Duration::from_millis(100);
/// How long a connection closed to make room may still send its request
/// (it is then answered and closed); one that has not by then is dropped.
const EVICT_GRACE: Duration = Duration::from_millis(250);
/// The header deadline of a connection that is only answered `503`.
const SHED_HEADER_TIMEOUT: Duration = Duration::from_secs(2);

/// The connection limits the loop enforces.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ConnLimits {
    /// A request's headers must arrive within this, counted from the end of
    /// the previous response (or the connect): slow headers and idle
    /// kept-alive connections are closed after it.
    pub(crate) header_timeout: Duration,
    /// The most connections served at once.
    pub(crate) max_connections: usize,
}

/// How many connections past `max_connections` may wait for a slot or be
/// answered `503` at once: an eighth of the cap, 4 to 256.
pub(crate) fn spare_connections(max_connections: usize) -> usize {
    (max_connections / 8).clamp(4, 256)
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
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .keep_alive(true);
    let mut shed_http = hyper::server::conn::http1::Builder::new();
    shed_http
        .timer(TokioTimer::new())
        .header_read_timeout(SHED_HEADER_TIMEOUT.min(limits.header_timeout))
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
    let spare_total = spare_connections(max);
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
        shared.table.make_room();
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
        // Half the spare places wait for a slot; past that, the server is
        // overloaded, not in a burst: answer at once.
        let wait = if spare.available_permits() >= spare_total / 2 {
            ACCEPT_WAIT
        } else {
            Duration::ZERO
        };
        tasks.spawn(
            shared
                .clone()
                .wait_then_serve(stream, client, waiting, wait),
        );
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

    /// A connection over the cap: served if a slot frees within `wait`,
    /// else answered `503`.
    async fn wait_then_serve(
        self: Arc<Self>,
        stream: TcpStream,
        client: IpAddr,
        waiting: OwnedSemaphorePermit,
        wait: Duration,
    ) {
        let slot = tokio::select! {
            biased;
            slot = self.slot() => Some(slot),
            () = tokio::time::sleep(wait) => None,
            () = self.stop.cancelled() => return,
        };
        match slot {
            Some(slot) => {
                drop(waiting);
                self.serve(stream, client, slot).await;
            }
            None => self.answer_busy(stream, client).await,
        }
    }

    /// Answers the connection's request `503` with `Retry-After` and closes it.
    async fn answer_busy(&self, stream: TcpStream, client: IpAddr) {
        self.shed.record(self.limits.max_connections);
        tracing::debug!(%client, "at the HTTP connection cap: answering 503");
        let what = format!("{} connections", self.limits.max_connections);
        let service = hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
            let what = what.clone();
            async move {
                super::screen::drain(req.map(Body::new)).await;
                Ok::<_, Infallible>(busy(&what))
            }
        });
        let conn = self
            .shed_http
            .serve_connection(TokioIo::new(stream), service);
        tokio::select! {
            r = conn => {
                if let Err(e) = r {
                    tracing::debug!(error = %e, "a shed HTTP connection ended with an error");
                }
            }
            () = self.stop.cancelled() => {}
        }
    }

    /// Serves one connection holding `slot`.
    async fn serve(self: Arc<Self>, stream: TcpStream, client: IpAddr, slot: OwnedSemaphorePermit) {
        let _slot = slot;
        let entry: Entry = self.table.insert(client, self.stop.child_token());
        let state = entry.state.clone();
        let app = self.app.clone();
        let service = hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
            let state = state.clone();
            if req.body().is_end_stream() {
                state.request_complete();
            }
            let req = req.map(|inner| {
                Body::new(Reading {
                    inner,
                    state: state.clone(),
                })
            });
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
                Ok::<_, Infallible>(response.map(|inner| Tracked {
                    inner,
                    _answering: answering,
                }))
            }
        });
        let io = TokioIo::new(Watched {
            inner: stream,
            state: entry.state.clone(),
        });
        let conn = self.http.serve_connection(io, service);
        let mut conn = std::pin::pin!(conn);
        tokio::select! {
            r = conn.as_mut() => {
                if let Err(e) = r {
                    tracing::debug!(error = %e, "HTTP connection ended with an error");
                }
                return;
            }
            () = entry.evict.cancelled() => {}
        }
        if self.stop.is_cancelled() {
            // Closing: an idle or unfinished connection just goes; one with
            // a request in flight finishes it first.
            if entry.state.phase() == Phase::Busy {
                conn.as_mut().graceful_shutdown();
                let _ = conn.await;
            }
            return;
        }
        // Closed to make room: a request that arrives within the grace is
        // still answered (then the connection closes); else it just goes.
        conn.as_mut().graceful_shutdown();
        tokio::select! {
            _ = conn.as_mut() => return,
            () = tokio::time::sleep(EVICT_GRACE) => {}
        }
        if entry.state.phase() == Phase::Busy {
            let _ = conn.await;
        }
    }
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

/// A request body that marks its request complete when it ends.
struct Reading {
    inner: Incoming,
    state: Arc<State>,
}

impl HttpBody for Reading {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let r = Pin::new(&mut self.inner).poll_frame(cx);
        if matches!(r, Poll::Ready(None)) || self.inner.is_end_stream() {
            self.state.request_complete();
        }
        r
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// A response body that keeps its connection marked busy until it ends (an
/// SSE stream of progress notifications may outlive the handler's future).
struct Tracked {
    inner: Body,
    _answering: Answering,
}

impl HttpBody for Tracked {
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
