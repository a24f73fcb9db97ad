//! The HTTP accept loop (instead of `axum::serve`, which has neither): at most
//! `max_connections` open connections, a deadline for each request's headers
//! that also bounds how long a kept-alive connection may sit idle, and a close
//! that lets in-flight requests finish.
//!
//! When every slot is taken and another client connects, the connection that
//! has been idle longest (no request in flight: a slow or silent client, or a
//! kept-alive one) is closed to make room, so idle sockets cannot lock out a
//! real call. When every connection has a request in flight, new ones wait in
//! the kernel's backlog (they hold no file descriptor of ours).

use super::super::error::ServeError;
use axum::body::Body;
use hyper::body::{Body as HttpBody, Bytes, Frame, Incoming, SizeHint};
use hyper_util::rt::{TokioIo, TokioTimer};
use std::collections::HashMap;
use std::convert::Infallible;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

/// How long `close()` waits for open HTTP connections before dropping them.
const CLOSE_GRACE: Duration = Duration::from_secs(5);
/// How long to pause accepting after the process ran out of file descriptors.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// The connection limits the loop enforces.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ConnLimits {
    /// A request's headers must arrive within this, counted from the end of
    /// the previous response (or the connect): slow headers and idle
    /// kept-alive connections are closed after it.
    pub(crate) header_timeout: Duration,
    /// The most connections open at once.
    pub(crate) max_connections: usize,
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
    let permits = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let table = Arc::new(Table::default());
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .keep_alive(true);
    let mut tasks = JoinSet::new();
    loop {
        while tasks.try_join_next().is_some() {}
        let stream = tokio::select! {
            r = listener.accept() => match r {
                Ok((stream, _)) => stream,
                Err(e) => {
                    accept_failed(&e).await;
                    continue;
                }
            },
            () = stop.cancelled() => break,
        };
        let permit = match permits.clone().try_acquire_owned() {
            Ok(p) => p,
            Err(_) => {
                if !table.evict_oldest_idle() {
                    tracing::debug!(
                        max = limits.max_connections,
                        "every HTTP connection has a request in flight; the new one waits"
                    );
                }
                tokio::select! {
                    p = permits.clone().acquire_owned() => match p {
                        Ok(p) => p,
                        Err(_) => break,
                    },
                    () = stop.cancelled() => break,
                }
            }
        };
        let _ = stream.set_nodelay(true);
        let entry = table.insert(stop.child_token());
        let activity = entry.activity();
        let app = app.clone();
        let service = hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
            let busy = activity.begin();
            let mut app = app.clone();
            let response = tower_service::Service::call(&mut app, req.map(Body::new));
            async move {
                let response = match response.await {
                    Ok(r) => r,
                    Err(never) => match never {},
                };
                Ok::<_, Infallible>(response.map(|inner| Tracked { inner, _busy: busy }))
            }
        });
        let conn = http.serve_connection(TokioIo::new(stream), service);
        let stop = stop.clone();
        tasks.spawn(async move {
            let _permit = permit;
            let mut conn = std::pin::pin!(conn);
            tokio::select! {
                r = conn.as_mut() => {
                    if let Err(e) = r {
                        tracing::debug!(error = %e, "HTTP connection ended with an error");
                    }
                }
                () = entry.evict.cancelled() => {
                    // Evicted (idle, to make room), or the server is closing:
                    // an idle connection just goes; a busy one finishes its
                    // request first.
                    if stop.is_cancelled() && !entry.is_idle() {
                        conn.as_mut().graceful_shutdown();
                        let _ = conn.await;
                    }
                }
            }
        });
    }
    drop(listener);
    let drain = async { while tasks.join_next().await.is_some() {} };
    if tokio::time::timeout(CLOSE_GRACE, drain).await.is_err() {
        tracing::warn!("HTTP connections did not close in time; dropping them");
        tasks.abort_all();
    }
    Ok(())
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

/// The open connections: how many requests each has in flight, since when it
/// is idle, and how to close it.
#[derive(Default)]
struct Table {
    next: AtomicU64,
    conns: Mutex<HashMap<u64, Conn>>,
}

struct Conn {
    in_flight: usize,
    idle_since: Instant,
    evict: CancellationToken,
}

impl Table {
    fn lock(&self) -> MutexGuard<'_, HashMap<u64, Conn>> {
        self.conns.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn insert(self: &Arc<Self>, evict: CancellationToken) -> Entry {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.lock().insert(
            id,
            Conn {
                in_flight: 0,
                idle_since: Instant::now(),
                evict: evict.clone(),
            },
        );
        Entry {
            id,
            table: self.clone(),
            evict,
        }
    }

    /// Closes the connection idle longest; false when none is idle.
    fn evict_oldest_idle(&self) -> bool {
        let conns = self.lock();
        let oldest = conns
            .values()
            .filter(|c| c.in_flight == 0 && !c.evict.is_cancelled())
            .min_by_key(|c| c.idle_since);
        match oldest {
            Some(c) => {
                tracing::debug!(
                    idle_ms = c.idle_since.elapsed().as_millis(),
                    "closing the longest-idle HTTP connection to make room"
                );
                c.evict.cancel();
                true
            }
            None => false,
        }
    }
}

/// A connection's row in the table; removed when the connection ends.
struct Entry {
    id: u64,
    table: Arc<Table>,
    evict: CancellationToken,
}

impl Entry {
    fn activity(&self) -> Activity {
        Activity {
            id: self.id,
            table: self.table.clone(),
        }
    }

    fn is_idle(&self) -> bool {
        self.table
            .lock()
            .get(&self.id)
            .is_none_or(|c| c.in_flight == 0)
    }
}

impl Drop for Entry {
    fn drop(&mut self) {
        self.table.lock().remove(&self.id);
    }
}

/// Marks a connection busy while a request is in flight.
#[derive(Clone)]
struct Activity {
    id: u64,
    table: Arc<Table>,
}

impl Activity {
    fn begin(&self) -> Busy {
        if let Some(c) = self.table.lock().get_mut(&self.id) {
            c.in_flight += 1;
        }
        Busy(self.clone())
    }
}

/// A request in flight, until its response body is dropped (sent or abandoned).
struct Busy(Activity);

impl Drop for Busy {
    fn drop(&mut self) {
        if let Some(c) = self.0.table.lock().get_mut(&self.0.id) {
            c.in_flight = c.in_flight.saturating_sub(1);
            c.idle_since = Instant::now();
        }
    }
}

/// A response body that keeps its connection marked busy until it ends (an
/// SSE stream of progress notifications may outlive the handler's future).
struct Tracked {
    inner: Body,
    _busy: Busy,
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
