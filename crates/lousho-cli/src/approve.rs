//! Approvals on the terminal: y / n / always for this tool. "Always" is
//! remembered by (server identity, tool, fingerprint): a tool whose
//! definition changes afterwards asks again.

use lousho::AgentBuilder;
use lousho::policy::{ApprovalDecision, ApprovalRequest, RememberedApprovals};
use std::io::{BufRead, IsTerminal, Write};

/// One question on the terminal at a time (approvals of tools running side by
/// side, servers' elicitations).
pub static TERMINAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Asks on the terminal when stdin is one; otherwise denies with a message
/// saying how to allow the tool.
pub fn install(builder: AgentBuilder) -> AgentBuilder {
    if std::io::stdin().is_terminal() {
        let always = RememberedApprovals::new();
        builder.approval_handler(move |request| {
            let always = always.clone();
            async move { ask(request, always).await }
        })
    } else {
        builder.approval_handler(|request: ApprovalRequest| async move { deny_headless(&request) })
    }
}

/// The message for a call that needs approval when nobody can be asked.
pub fn headless_message(tool: &str) -> String {
    format!(
        "`{tool}` needs approval and stdin is not a terminal, so the call was denied; \
         run in a terminal to be asked, or allow it in the spec: \
         permissions: {{rules: [{{tool: \"{tool}\", decision: allow}}]}}"
    )
}

#[allow(clippy::print_stderr)]
fn deny_headless(request: &ApprovalRequest) -> ApprovalDecision {
    let message = headless_message(&request.tool_name);
    eprintln!("approval: {message}");
    ApprovalDecision::deny(message)
}

#[allow(clippy::print_stderr)]
async fn ask(request: ApprovalRequest, always: RememberedApprovals) -> ApprovalDecision {
    let tool = request.tool_name.clone();
    if always.allows(&request) {
        return ApprovalDecision::Approve;
    }
    let origin = request
        .origin
        .as_deref()
        .map(|o| format!(" (MCP server `{o}`)"))
        .unwrap_or_default();
    let input = serde_json::to_string(&request.input).unwrap_or_default();
    let _turn = TERMINAL.lock().await;
    let _hold = crate::progress::hold_for_prompt();
    if always.allows(&request) {
        return ApprovalDecision::Approve;
    }
    let prompt = format!(
        "approve `{tool}`{origin} [{}] with {input}? [y]es / [n]o / [a]lways for this tool: ",
        request.reason
    );
    let answer = tokio::task::spawn_blocking(move || {
        let mut err = std::io::stderr();
        let _ = write!(err, "{prompt}");
        let _ = err.flush();
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line).map(|_| line)
    })
    .await;
    match answer {
        Ok(Ok(line)) => match line.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" => ApprovalDecision::Approve,
            "a" | "always" => {
                always.remember(&request);
                ApprovalDecision::Approve
            }
            _ => ApprovalDecision::Deny { reason: None },
        },
        // A closed stdin or a failed read denies (fail closed).
        _ => {
            eprintln!();
            ApprovalDecision::deny("no answer from the terminal")
        }
    }
}
