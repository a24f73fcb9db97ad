//! Requests that do not arrive in time. A connection waits at most the
//! header timeout for the head (request line and headers) of its next
//! request, counted from the connect or the end of the previous answer.
//! A client that owes bytes when its connection is closed — a late head, or
//! a request not complete when the connection is closed to make room — is
//! answered `408 Request Timeout` first, then the connection closes: it can
//! tell a slow request from a server that went away, and retry. A kept-alive
//! connection that stays idle past the timeout just closes (no request was
//! begun), as HTTP servers do.

use super::conns::State;
use std::future::Future;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_util::sync::CancellationToken;

/// How long the `408` may take to write, and then how long what the client
/// still sends is read and dropped (so that closing with unread bytes does
/// not reset the connection before the client has read the answer).
const LINGER: Duration = Duration::from_millis(500);
/// The most bytes read and dropped while lingering.
const LINGER_BYTES: usize = 64 * 1024;

/// How a connection's run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum End {
    /// The connection finished: the client closed it, or it failed.
    Finished,
    /// Its evict token fired: room is needed, or the server closes.
    Evicted,
    /// The head of its next request did not arrive within the header
    /// timeout.
    HeadLate,
}

/// Polls `conn` until it finishes, `evict` fires, or the head of a request
/// is late (by `state`).
pub(super) async fn run<C>(
    conn: &mut C,
    state: &State,
    header_timeout: Duration,
    evict: &CancellationToken,
) -> End
where
    C: Future<Output = hyper::Result<()>> + Unpin,
{
    // While a request is past its head, look again a timeout later (the
    // head of the next one is due a timeout after its answer).
    let due = |s: &State| {
        s.head_due(header_timeout)
            .unwrap_or_else(|| Instant::now() + header_timeout)
    };
    let timer = tokio::time::sleep_until(due(state).into());
    let mut timer = std::pin::pin!(timer);
    loop {
        tokio::select! {
            r = &mut *conn => {
                if let Err(e) = r {
                    tracing::debug!(error = %e, "HTTP connection ended with an error");
                }
                return End::Finished;
            }
            () = evict.cancelled() => return End::Evicted,
            () = timer.as_mut() => match state.head_due(header_timeout) {
                Some(at) if at <= Instant::now() => return End::HeadLate,
                _ => timer.as_mut().reset(due(state).into()),
            },
        }
    }
}

/// Answers `408 Request Timeout` (`why` in the body) and closes `stream`
/// without resetting it; all within about twice [`LINGER`]. What the client
/// still sends is read and dropped until it closes, or for [`LINGER`]:
/// closing with unread bytes would turn the close into a reset, which can
/// make the client's system drop the answer unread — even for a client that
/// seemed silent, whose request may be arriving just now.
pub(super) async fn request_timeout(mut stream: TcpStream, why: &str) {
    let response = format!(
        "HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{why}",
        why.len()
    );
    let answer = async {
        stream.write_all(response.as_bytes()).await?;
        stream.shutdown().await
    };
    match tokio::time::timeout(LINGER, answer).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            tracing::debug!(error = %e, "could not answer 408 to a late request");
            return;
        }
        Err(_) => {
            tracing::debug!("the client did not take the 408 answer in time");
            return;
        }
    }
    let drain = async {
        let mut buf = [0u8; 4096];
        let mut read = 0;
        while read < LINGER_BYTES {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => read += n,
            }
        }
    };
    let _ = tokio::time::timeout(LINGER, drain).await;
}
