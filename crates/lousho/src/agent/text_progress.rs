//! A run's partial text as progress messages, throttled: the text since the
//! last message, at most one message per [`TEXT_PROGRESS_INTERVAL`], the
//! rest when the turn ends.

use std::time::Duration;
use tokio::time::Instant;

/// The least time between two text progress messages.
pub const TEXT_PROGRESS_INTERVAL: Duration = Duration::from_millis(250);

/// Collects text deltas and says when to send them.
#[derive(Debug)]
pub(crate) struct TextProgress {
    pending: String,
    last: Option<Instant>,
}

impl TextProgress {
    pub(crate) fn new() -> Self {
        Self {
            pending: String::new(),
            last: None,
        }
    }

    /// Adds a delta; the text to send now, when one is due.
    pub(crate) fn push(&mut self, delta: &str) -> Option<String> {
        self.pending.push_str(delta);
        match self.due_at() {
            Some(at) if at <= Instant::now() => self.flush(),
            _ => None,
        }
    }

    /// When the pending text is due (`None`: nothing pending).
    pub(crate) fn due_at(&self) -> Option<Instant> {
        if self.pending.is_empty() {
            return None;
        }
        Some(match self.last {
            None => Instant::now(),
            Some(t) => t + TEXT_PROGRESS_INTERVAL,
        })
    }

    /// The text not sent yet (a turn ended, or it is due).
    pub(crate) fn flush(&mut self) -> Option<String> {
        if self.pending.is_empty() {
            return None;
        }
        self.last = Some(Instant::now());
        Some(std::mem::take(&mut self.pending))
    }
}

/// Sleeps until `at`: when pending text is due (never when `None`).
pub(crate) async fn sleep_until_due(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => futures::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn the_first_delta_goes_at_once_then_at_most_one_message_per_interval() {
        let mut p = TextProgress::new();
        assert_eq!(p.push("Hel").as_deref(), Some("Hel"));
        assert_eq!(p.push("lo"), None);
        assert_eq!(p.push(", "), None);
        tokio::time::advance(TEXT_PROGRESS_INTERVAL).await;
        assert_eq!(p.push("world").as_deref(), Some("lo, world"));
        assert_eq!(p.push("!"), None);
        assert_eq!(p.flush().as_deref(), Some("!"));
        assert_eq!(p.flush(), None);
        assert_eq!(p.due_at(), None);
    }
}
