//! An agent's answer to its MCP servers' sampling requests (for the servers
//! whose entry allows them): its own model, once a permission rule or its
//! approval handler says yes — each request is approved like a tool call
//! named [`sampling_name`] (`sampling:<server>`), so a rule
//! `{tool: "sampling:docs", decision: allow}` lets `docs` ask without a
//! question, and without an approval handler (nor an allowing rule) every
//! request is denied.

use crate::mcp::{SamplingError, SamplingHandler, SamplingRequest, SamplingResponse, SamplingStop};
use crate::model::{FinishReason, Model, ModelEvent, ModelRequest};
use crate::policy::{
    ApprovalDecision, ApprovalHandler, ApprovalRequest, CompiledPermissions, DecisionReason,
    RuleDecision, rule_denial,
};
use async_trait::async_trait;
use futures::StreamExt;
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The name a server's sampling requests have for permission rules and
/// approval requests: `sampling:<server>`.
pub(crate) fn sampling_name(server: &str) -> String {
    format!("sampling:{server}")
}

/// The agent's model behind its permission rules and approval handler.
pub(crate) struct AgentSampling {
    model: Arc<dyn Model>,
    permissions: CompiledPermissions,
    approval: Option<ApprovalHandler>,
    /// Numbers the approval requests (`sampling-1`, …).
    asked: AtomicU64,
}

impl AgentSampling {
    pub(crate) fn new(
        model: Arc<dyn Model>,
        permissions: CompiledPermissions,
        approval: Option<ApprovalHandler>,
    ) -> Self {
        Self {
            model,
            permissions,
            approval,
            asked: AtomicU64::new(0),
        }
    }

    /// Whether the request may go to the model: a rule, else the handler.
    async fn decide(&self, request: &SamplingRequest) -> Result<(), SamplingError> {
        let name = sampling_name(&request.server);
        let reason = match self.permissions.matching_rule(&name) {
            Some(rule) if rule.decision == RuleDecision::Deny => {
                return Err(SamplingError::Denied {
                    reason: Some(rule_denial(&name, &rule.tool)),
                });
            }
            Some(rule) if rule.decision == RuleDecision::Allow => return Ok(()),
            Some(rule) => DecisionReason::Rule {
                pattern: rule.tool.clone(),
            },
            None => DecisionReason::Always,
        };
        let Some(approval) = &self.approval else {
            return Err(SamplingError::Denied {
                reason: Some(format!(
                    "nobody can approve it; allow it with a permission rule for `{name}`"
                )),
            });
        };
        let n = self.asked.fetch_add(1, Ordering::Relaxed) + 1;
        let messages: Vec<_> = request
            .messages
            .iter()
            .map(|m| json!({"role": m.role, "text": m.text()}))
            .collect();
        let ask = ApprovalRequest {
            call_id: format!("sampling-{n}"),
            tool_name: name,
            display_name: Some(format!("sampling request of `{}`", request.server)),
            input: json!({
                "systemPrompt": request.system_prompt,
                "messages": messages,
                "maxTokens": request.max_tokens,
            }),
            annotations: Default::default(),
            origin: Some(request.server.clone()),
            reason,
            fingerprint: None,
            server_identity: None,
        };
        match approval(ask).await {
            ApprovalDecision::Approve => Ok(()),
            ApprovalDecision::Deny { reason } => Err(SamplingError::Denied { reason }),
        }
    }
}

#[async_trait]
impl SamplingHandler for AgentSampling {
    async fn sample(&self, request: SamplingRequest) -> Result<SamplingResponse, SamplingError> {
        self.decide(&request).await?;
        let mut model_request = ModelRequest::new(request.messages);
        if let Some(system) = request.system_prompt {
            model_request = model_request.system(system);
        }
        model_request.settings.max_tokens = Some(request.max_tokens);
        model_request.settings.temperature = request.temperature;
        let mut stream = self.model.stream(&model_request);
        let mut text = String::new();
        let mut stop = SamplingStop::EndTurn;
        while let Some(event) = stream.next().await {
            match event.map_err(|e| SamplingError::Model(e.to_string()))? {
                ModelEvent::TextDelta(piece) => text.push_str(&piece),
                ModelEvent::Finished(FinishReason::Length) => stop = SamplingStop::MaxTokens,
                _ => {}
            }
        }
        // Stop sequences are the server's wish; the answer is cut at the first.
        if let Some(at) = request
            .stop_sequences
            .iter()
            .filter(|s| !s.is_empty())
            .filter_map(|s| text.find(s.as_str()))
            .min()
        {
            text.truncate(at);
            stop = SamplingStop::StopSequence;
        }
        Ok(SamplingResponse::new(text, self.model.name(), stop))
    }
}
