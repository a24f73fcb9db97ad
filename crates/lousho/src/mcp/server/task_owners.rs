//! Who started each task: with OAuth, a task belongs to the caller whose
//! `tools/call` started it, and `tasks/get`, `tasks/update` and
//! `tasks/cancel` from anybody else get the same error as an unknown task
//! (so they learn nothing of it). Without a caller, tasks are anybody's who
//! knows the id, as before.

use super::caller::Caller;
use crate::sync::MutexExt;
use rmcp::model::ErrorData;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// How many owned tasks are remembered before the ones rmcp no longer
/// knows are forgotten.
const PRUNE_AT: usize = 4096;

/// Task id → the caller key that started it.
#[derive(Debug, Default)]
pub(crate) struct TaskOwners(Mutex<HashMap<String, Arc<str>>>);

impl TaskOwners {
    /// Notes that `caller` started `task_id`; past [`PRUNE_AT`] entries,
    /// forgets those `alive` says are gone.
    pub(crate) fn record(
        &self,
        task_id: &str,
        caller: Option<&Caller>,
        alive: impl Fn(&str) -> bool,
    ) {
        let Some(caller) = caller else {
            return;
        };
        let mut owners = self.0.lock_unpoisoned();
        if owners.len() >= PRUNE_AT {
            owners.retain(|id, _| alive(id));
        }
        owners.insert(task_id.to_owned(), caller.key());
    }

    /// `Ok` when `caller` may see `task_id`: the task has no owner, or it is
    /// the caller; else rmcp's error for an unknown task.
    pub(crate) fn check(&self, task_id: &str, caller: Option<&Caller>) -> Result<(), ErrorData> {
        let owners = self.0.lock_unpoisoned();
        if may_see(owners.get(task_id).map(|o| &**o), caller) {
            return Ok(());
        }
        Err(ErrorData::invalid_params(
            format!("unknown task: {task_id}"),
            None,
        ))
    }
}

/// Whether `caller` may see a task started by `owner` (a caller's key;
/// `None`: a task of no caller, anybody's who knows its id).
pub(crate) fn may_see(owner: Option<&str>, caller: Option<&Caller>) -> bool {
    match owner {
        None => true,
        Some(owner) => caller.is_some_and(|c| *c.key() == *owner),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::server::caller::ScopePolicy;
    use crate::mcp::server::resource_server::OAuthResource;

    fn caller(sub: &str) -> Caller {
        let r = OAuthResource::new("https://i.example", "https://a.example/mcp");
        Caller {
            issuer: "https://i.example".into(),
            subject: sub.into(),
            scopes: Arc::default(),
            policy: Arc::new(ScopePolicy::of(&r).unwrap()),
        }
    }

    #[test]
    fn only_the_caller_that_started_a_task_sees_it() {
        let owners = TaskOwners::default();
        let (alice, bob) = (caller("alice"), caller("bob"));
        owners.record("t1", Some(&alice), |_| true);
        owners.record("t2", None, |_| true);
        assert!(owners.check("t1", Some(&alice)).is_ok());
        let err = owners.check("t1", Some(&bob)).unwrap_err();
        assert_eq!(err.message, "unknown task: t1");
        assert!(owners.check("t1", None).is_err());
        assert!(owners.check("t2", Some(&bob)).is_ok());
    }
}
