//! Calls as tasks (the `io.modelcontextprotocol/tasks` extension,
//! SEP-2663): when the calling client declares the extension, a call of an
//! agent tool (or of a direct tool that opted in with
//! [`serve_as_task`](crate::tool::DefinedTool::serve_as_task)) answers at
//! once with a task (`resultType: "task"`) and the run
//! goes on in the server; the client polls `tasks/get` for its status (the
//! run's steps as status messages) and, at the end, its result;
//! `tasks/cancel` cancels the run. The tasks live in rmcp's `TaskManager`,
//! in memory: a task may run [`TASK_TTL`], and its result is kept for as
//! long again after it ends.
//!
//! A run in a task asks its client (approvals, `ToolContext` elicit and
//! sample, `model: sampling` turns) through the task: the question shows as
//! `input_required` with `inputRequests` in `tasks/get`, and the answer
//! comes with `tasks/update`.

use super::peer_channel::{Asking, PeerChannel, ProgressTo};
use super::task_link::TaskLink;
use rmcp::model::{CallToolResult, CreateTaskResult};
use rmcp::task_manager::{TaskExit, TaskManager, TaskOptions};
use std::future::Future;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

/// How long a task may run; its result is kept for as long again after it
/// ends (rmcp's retention), then `tasks/get` no longer knows it.
pub(crate) const TASK_TTL: Duration = Duration::from_secs(3600);

/// How often clients are asked to poll.
const POLL_INTERVAL_MS: u64 = 500;

/// Whether the call's client takes a task for an answer (it declared the
/// extension).
pub(crate) fn client_takes_tasks(caps: Option<&rmcp::model::ClientCapabilities>) -> bool {
    caps.is_some_and(rmcp::model::ClientCapabilities::supports_tasks)
}

/// Starts a call as a task of `tasks` and returns the task for the call's
/// answer. `call` gets the call's channel (reporting to and asking through
/// the task) and the run's cancellation token, which `tasks/cancel` or the
/// server closing (`shutdown`) fires; it returns `None` when it stopped for
/// that, and the task then ends `cancelled`.
pub(crate) fn spawn_call<F, Fut>(
    tasks: &TaskManager,
    mut channel: PeerChannel,
    shutdown: &CancellationToken,
    status: &str,
    call: F,
) -> CreateTaskResult
where
    F: FnOnce(PeerChannel, CancellationToken) -> Fut + Send + 'static,
    Fut: Future<Output = Option<CallToolResult>> + Send + 'static,
{
    let options = TaskOptions::new()
        .with_ttl_ms(u64::try_from(TASK_TTL.as_millis()).unwrap_or(u64::MAX))
        .with_poll_interval_ms(POLL_INTERVAL_MS)
        .with_status_message(status);
    // The call's spans stay children of its server span.
    let span = tracing::Span::current();
    let run_cancel = shutdown.child_token();
    let task = tasks.spawn(options, move |cx| {
        let link = TaskLink::new(cx.clone());
        channel.progress = ProgressTo::Task(link.clone());
        if matches!(channel.asking, Asking::Modern) && (channel.elicitation || channel.sampling) {
            channel.asking = Asking::Task(link);
        }
        Box::pin(
            async move {
                let running = call(channel, run_cancel.clone());
                tokio::pin!(running);
                let end = tokio::select! {
                    end = &mut running => end,
                    () = cx.cancelled() => {
                        run_cancel.cancel();
                        running.await
                    }
                };
                end.ok_or(TaskExit::Cancelled)
            }
            .instrument(span),
        )
    });
    CreateTaskResult::new(task)
}
