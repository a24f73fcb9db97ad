//! What a refused request's body gets: a little reading, so the client
//! hears the answer.

use axum::extract::Request;
use std::time::Duration;

/// How much of a refused request's body is read before answering.
const DRAIN_BYTES: usize = 64 * 1024;
/// How long a refused request's body is read before answering.
const DRAIN_TIME: Duration = Duration::from_secs(1);

/// Reads (and drops) a little of a refused request's body, so that closing
/// the connection with the body unread does not reset it before the client
/// has read the answer.
pub(crate) async fn drain(req: Request) {
    let body = axum::body::to_bytes(req.into_body(), DRAIN_BYTES);
    let _ = tokio::time::timeout(DRAIN_TIME, body).await;
}
