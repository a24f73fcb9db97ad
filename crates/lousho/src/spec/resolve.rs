//! The steps from a parsed spec file to an [`AgentSpec`](super::AgentSpec)
//! (`Reader::resolve` runs them in order): the file's directory, its model
//! settings, its tools split into agents and built-ins, its limits, its
//! permission rules and its serving options. Each check fails with the key
//! and line it is about.

use super::file::{self, AuthFile, ModelOptionsFile, PermissionsFile, RuleDecisionFile};
use super::file::{ServeFile, SpecFile};
use super::locate::{At, line_of_key};
use super::{
    Approvals, BUILTIN_NAMES, ServeSpec, SpecError, SpecErrorKind, check_base_url, check_model,
    suggest,
};
use crate::model::{ModelSettings, PromptCache, Thinking};
use crate::policy::{PermissionRule, Permissions};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The spec file's directory, absolute, so what is resolved from it (a
/// stdio server's `cwd`, its command) names the same place whatever folder
/// lousho runs in, and two projects' `cwd: .` are two servers, not one
/// (their identities key the catalog and pins).
pub(super) fn spec_dir(path: &Path) -> PathBuf {
    let dir = path
        .parent()
        .map(Path::to_path_buf)
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or_else(|| PathBuf::from("."));
    std::path::absolute(&dir).unwrap_or(dir)
}

/// `model`: the first model and the fallbacks, each checked to name a known
/// provider (the first by [`model_settings`]).
pub(super) fn model_list(
    model: Option<file::ModelFile>,
    at: &At<'_>,
) -> Result<(Option<String>, Vec<String>), SpecError> {
    let Some(model) = model else {
        return Ok((None, Vec::new()));
    };
    let mut models = model.models();
    if models.is_empty() {
        return Err(at.key(
            SpecErrorKind::Invalid("the model list is empty; name at least one model".into()),
            "model",
        ));
    }
    let fallbacks = models.split_off(1);
    for (i, model) in fallbacks.iter().enumerate() {
        check_model(model).map_err(|kind| at.key(kind, &format!("model[{}]", i + 1)))?;
    }
    Ok((models.pop(), fallbacks))
}

/// `modelOptions.limits`, checked: known providers, limits of at least 1.
pub(super) fn rate_limits(
    options: &ModelOptionsFile,
    at: &At<'_>,
) -> Result<std::collections::BTreeMap<String, crate::model::RateLimits>, SpecError> {
    const PROVIDERS: [&str; 4] = ["openai", "anthropic", "openrouter", "ollama"];
    let mut out = std::collections::BTreeMap::new();
    for (provider, file) in &options.limits {
        let key = format!("modelOptions.limits.{provider}");
        if !PROVIDERS.contains(&provider.as_str()) {
            let hint = suggest::did_you_mean(provider, PROVIDERS)
                .map(|s| format!("; did you mean `{s}`?"))
                .unwrap_or_default();
            return Err(at.key(
                SpecErrorKind::Invalid(format!(
                    "`{provider}` is not a provider: use openai, anthropic, openrouter or ollama{hint}"
                )),
                &key,
            ));
        }
        let mut limits = crate::model::RateLimits::new();
        for (name, value) in [("rpm", file.rpm), ("tpm", file.tpm)] {
            match value {
                Some(0) => {
                    return Err(at.key(
                        SpecErrorKind::Invalid("must be at least 1".into()),
                        &format!("{key}.{name}"),
                    ));
                }
                Some(n) if name == "rpm" => limits = limits.requests_per_minute(n),
                Some(n) => limits = limits.tokens_per_minute(n),
                None => {}
            }
        }
        out.insert(provider.clone(), limits);
    }
    Ok(out)
}

/// `model` and `modelOptions`, checked, as the agent's model settings.
pub(super) fn model_settings(
    model: Option<&str>,
    options: &ModelOptionsFile,
    at: &At<'_>,
) -> Result<ModelSettings, SpecError> {
    if let Some(model) = model {
        check_model(model).map_err(|kind| at.key(kind, "model"))?;
    }
    if let Some(url) = &options.base_url {
        let model = model.unwrap_or("openai/x");
        check_base_url(model, url).map_err(|kind| at.key(kind, "modelOptions.baseUrl"))?;
    }
    if let Some(t) = options.temperature
        && !(0.0..=2.0).contains(&t)
    {
        return Err(at.key(
            SpecErrorKind::Invalid(format!("{t} is out of range; use 0 to 2")),
            "modelOptions.temperature",
        ));
    }
    if options.max_output_tokens == Some(0) {
        return Err(at.key(
            SpecErrorKind::Invalid("must be at least 1".into()),
            "modelOptions.maxOutputTokens",
        ));
    }
    let thinking = match (options.thinking_budget, options.reasoning_effort) {
        (Some(_), Some(_)) => {
            return Err(at.key(
                SpecErrorKind::Invalid(
                    "set a thinking budget or a reasoning effort, not both".into(),
                ),
                "modelOptions.reasoningEffort",
            ));
        }
        (Some(n), None) if n < 1024 => {
            return Err(at.key(
                SpecErrorKind::Invalid("must be at least 1024".into()),
                "modelOptions.thinkingBudget",
            ));
        }
        (Some(n), None) => Thinking::Budget(n),
        (None, Some(effort)) => Thinking::Effort(effort),
        (None, None) => Thinking::Default,
    };
    let mut settings = ModelSettings::default().thinking(thinking);
    if let Some(t) = options.temperature {
        settings = settings.temperature(t);
    }
    if let Some(n) = options.max_output_tokens {
        settings = settings.max_tokens(n);
    }
    if options.prompt_cache == Some(false) {
        settings = settings.prompt_cache(PromptCache::Off);
    }
    Ok(settings)
}

/// `tools` split into the file's agents (by name) and built-in tools, each
/// built-in checked: it exists, and this build has the `builtin` feature.
pub(super) fn split_tools(
    tools: &[String],
    agent_names: &BTreeSet<String>,
    at: &At<'_>,
) -> Result<(Vec<String>, Vec<String>), SpecError> {
    let (agent_tools, builtin): (Vec<String>, Vec<String>) =
        tools.iter().cloned().partition(|t| agent_names.contains(t));
    for (i, name) in tools.iter().enumerate() {
        if agent_names.contains(name) {
            continue;
        }
        let tools_line = line_of_key(at.text, "tools");
        if cfg!(not(feature = "builtin")) {
            return Err(at
                .key(
                    SpecErrorKind::MissingFeature {
                        feature: "builtin",
                        needed_for: "built-in tools",
                    },
                    &format!("tools[{i}]"),
                )
                .at(tools_line, None));
        }
        if !BUILTIN_NAMES.contains(&name.as_str()) {
            let suggestion = suggest::did_you_mean(name, BUILTIN_NAMES).map(str::to_owned);
            return Err(at
                .key(
                    SpecErrorKind::UnknownTool {
                        name: name.clone(),
                        suggestion,
                    },
                    &format!("tools[{i}]"),
                )
                .at(tools_line, None));
        }
    }
    Ok((agent_tools, builtin))
}

/// `maxTurns` and `contextBudget`, when set, are at least 1.
pub(super) fn check_limits(file: &SpecFile, at: &At<'_>) -> Result<(), SpecError> {
    if file.max_turns == Some(0) {
        return Err(at.key(
            SpecErrorKind::Invalid("must be at least 1".into()),
            "maxTurns",
        ));
    }
    let costs = [&file.budget, &file.session_budget].map(|b| b.as_ref().and_then(|b| b.cost_usd));
    if let Some(cost) = costs.into_iter().flatten().next()
        && !(cost.is_finite() && cost >= 0.0)
    {
        return Err(at.key(
            SpecErrorKind::Invalid("must be a number of US dollars, at least 0".into()),
            "costUsd",
        ));
    }
    if let Some(output) = &file.output {
        if !output.schema.is_object() {
            return Err(at.key(
                SpecErrorKind::Invalid("must be a JSON Schema (a map)".into()),
                "schema",
            ));
        }
        if let Some(name) = &output.name
            && (name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        {
            return Err(at.key(
                SpecErrorKind::Invalid("use a-z, A-Z, 0-9, `_` and `-`".into()),
                "name",
            ));
        }
    }
    if file.context_budget == Some(0) {
        return Err(at.key(
            SpecErrorKind::Invalid("must be at least 1 (tokens); leave it out for no limit".into()),
            "contextBudget",
        ));
    }
    if let Some(compaction) = &file.compaction {
        check_compaction(compaction, file.context_budget.is_some(), at)?;
    }
    Ok(())
}

/// `compaction`: needs `contextBudget`; its model names a known provider,
/// its limits are at least 1.
fn check_compaction(
    c: &file::CompactionFile,
    has_budget: bool,
    at: &At<'_>,
) -> Result<(), SpecError> {
    if !has_budget {
        return Err(at.key(
            SpecErrorKind::Invalid(
                "needs contextBudget: compaction summarises what passes it".into(),
            ),
            "compaction",
        ));
    }
    if let Some(model) = &c.model {
        check_model(model).map_err(|kind| at.key(kind, "compaction.model"))?;
    }
    let zero = [
        ("compaction.keepTokens", c.keep_tokens == Some(0)),
        (
            "compaction.toolResultTokens",
            c.tool_result_tokens == Some(0),
        ),
        ("compaction.summaryTokens", c.summary_tokens == Some(0)),
    ];
    if let Some((key, _)) = zero.iter().find(|(_, zero)| *zero) {
        return Err(at.key(
            SpecErrorKind::Invalid("must be at least 1 (tokens)".into()),
            key,
        ));
    }
    Ok(())
}

/// The `permissions` rules, checked (their globs compile).
pub(super) fn permissions(
    file: Option<PermissionsFile>,
    at: &At<'_>,
) -> Result<Permissions, SpecError> {
    let mut permissions = Permissions::new();
    for rule in file.map(|p| p.rules).unwrap_or_default() {
        permissions = permissions.rule(match rule.decision {
            RuleDecisionFile::Allow => PermissionRule::allow(rule.tool),
            RuleDecisionFile::Ask => PermissionRule::ask(rule.tool),
            RuleDecisionFile::Deny => PermissionRule::deny(rule.tool),
        });
    }
    match permissions.compile() {
        Ok(_) => Ok(permissions),
        Err(e) => Err(at.key(SpecErrorKind::Invalid(e.to_string()), "permissions")),
    }
}

/// The `serve` section as serving options.
pub(super) fn serve_spec(
    s: ServeFile,
    agent_prompt: Option<&str>,
    at: &At<'_>,
) -> Result<ServeSpec, SpecError> {
    Ok(ServeSpec {
        tools: s.tools,
        bearer_token: match &s.auth {
            Some(AuthFile::Bearer { token }) => Some(token.clone()),
            _ => None,
        },
        oauth: match s.auth {
            Some(AuthFile::OAuth {
                issuer,
                audience,
                scopes,
                tool_scopes,
                jwks_uri,
                clock_skew_ms,
                introspection,
                introspection_endpoint,
            }) => Some(super::ServeOAuth {
                issuer,
                audience,
                scopes,
                tool_scopes: tool_scopes.into_iter().collect(),
                jwks_uri,
                clock_skew: clock_skew_ms.map(std::time::Duration::from_millis),
                introspection: introspection.map(|i| super::ServeIntrospection {
                    client_id: i.client_id,
                    client_secret: i.client_secret,
                }),
                introspection_endpoint,
            }),
            _ => None,
        },
        approvals: match (s.approvals, s.allow_approval_tools) {
            (Some(file::ApprovalsFile::Deny), _) => Approvals::Deny,
            (Some(file::ApprovalsFile::Elicit), _) => Approvals::Elicit,
            (Some(file::ApprovalsFile::Allow), _) | (None, Some(true)) => Approvals::Allow,
            (None, _) => Approvals::Deny,
        },
        approval_timeout: s.approval_timeout_ms.map(std::time::Duration::from_millis),
        allowed_hosts: s.allowed_hosts,
        max_connections: s.max_connections,
        header_timeout: s.header_timeout_ms.map(std::time::Duration::from_millis),
        body_timeout: s.body_timeout_ms.map(std::time::Duration::from_millis),
        min_body_rate: s.min_body_rate,
        max_calls: s.max_calls,
        max_agent_runs: s.max_agent_runs,
        client_share_percent: s.client_share_percent,
        max_body_bytes: s.max_body_bytes,
        stateful: s.stateful,
        max_line_bytes: s.max_line_bytes,
        sessions: s.sessions,
        skills: s.skills.map(std::path::PathBuf::from),
        resources: super::serve_offers::resources(s.resources, at)?,
        prompts: super::serve_offers::prompts(s.prompts, agent_prompt, at)?,
        title: s.title,
        icons: s.icons,
        caller_limits: caller_limits(s.limits, at)?,
    })
}

/// `serve.limits.perCaller`; a limit of 0 is an error (no run could start).
fn caller_limits(
    limits: Option<file::LimitsFile>,
    at: &At<'_>,
) -> Result<Option<super::ServeCallerLimits>, SpecError> {
    let Some(p) = limits.and_then(|l| l.per_caller) else {
        return Ok(None);
    };
    let zero = [
        ("concurrentRuns", p.concurrent_runs.map(u64::from)),
        ("runsPerMinute", p.runs_per_minute.map(u64::from)),
        ("tokensPerDay", p.tokens_per_day),
    ]
    .into_iter()
    .find(|(_, v)| *v == Some(0));
    if let Some((key, _)) = zero {
        return Err(at.key(
            SpecErrorKind::Invalid("must be at least 1 (leave the key out for no limit)".into()),
            &format!("serve.limits.perCaller.{key}"),
        ));
    }
    Ok(Some(super::ServeCallerLimits {
        concurrent_runs: p.concurrent_runs,
        runs_per_minute: p.runs_per_minute,
        tokens_per_day: p.tokens_per_day,
    }))
}
