//! Walking a folder the way ripgrep does: ignore files respected, hidden
//! entries skipped, symbolic links not followed, in parallel.

use super::Workspace;
use crate::sync::MutexExt;
use ignore::{WalkBuilder, WalkState};
use std::path::Path;
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

/// A walker over `dir` with the tools' filters.
pub(crate) fn walker(ws: &Workspace, dir: &Path) -> WalkBuilder {
    let mut builder = WalkBuilder::new(dir);
    builder
        .standard_filters(true)
        // A workspace's .gitignore counts even when it is not a git checkout.
        .require_git(false)
        .follow_links(false)
        .threads(ws.limits().thread_count());
    builder
}

/// Walks `builder` in parallel. Every thread gets its own state from
/// `make_state` and hands each entry to `visit`; the states are returned
/// when the walk is done. The walk stops early when `cancel` fires or
/// `visit` returns [`WalkState::Quit`].
pub(crate) fn walk_parallel<S, M, V>(
    builder: &WalkBuilder,
    cancel: &CancellationToken,
    make_state: M,
    visit: V,
) -> Vec<S>
where
    S: Send + 'static,
    M: Fn() -> S + Sync,
    V: Fn(&mut S, ignore::DirEntry) -> WalkState + Sync,
{
    let done: Arc<Mutex<Vec<S>>> = Arc::default();
    builder.build_parallel().run(|| {
        let mut local = Flush {
            state: Some(make_state()),
            done: done.clone(),
        };
        let visit = &visit;
        Box::new(move |entry| {
            if cancel.is_cancelled() {
                return WalkState::Quit;
            }
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            match local.state.as_mut() {
                Some(state) => visit(state, entry),
                None => WalkState::Quit,
            }
        })
    });
    let mut done = done.lock_unpoisoned();
    std::mem::take(&mut *done)
}

/// Hands a thread's state over when the walker drops the thread's visitor.
struct Flush<S> {
    state: Option<S>,
    done: Arc<Mutex<Vec<S>>>,
}

impl<S> Drop for Flush<S> {
    fn drop(&mut self) {
        if let Some(state) = self.state.take() {
            self.done.lock_unpoisoned().push(state);
        }
    }
}
