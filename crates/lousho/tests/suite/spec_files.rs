//! Agent spec files: loading, interpolation, `.mcp.json`, and the JSON Schema.

use lousho::McpServer;
use lousho::mcp::McpTransport;
use lousho::spec::{SpecErrorKind, SpecLoader, spec_json_schema};
use serde_json::Value;
use std::path::Path;

fn repo() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

#[test]
fn the_checked_in_schema_is_current() {
    let path = repo().join("schemas/agent-spec.schema.json");
    let generated = serde_json::to_string_pretty(&spec_json_schema()).unwrap() + "\n";
    if std::env::var_os("LOUSHO_UPDATE_SCHEMA").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &generated).unwrap();
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        checked_in == generated,
        "schemas/agent-spec.schema.json is stale; regenerate it with LOUSHO_UPDATE_SCHEMA=1 cargo test -p lousho --test all -- spec_files"
    );
}

#[test]
fn the_example_specs_validate_against_the_schema() {
    let schema = spec_json_schema();
    let validator = jsonschema::validator_for(&schema).unwrap();
    for name in ["quickstart.yaml", "files.yaml"] {
        let text = std::fs::read_to_string(repo().join("examples/agents").join(name)).unwrap();
        let value: Value = yaml_serde::from_str(&text).unwrap();
        assert!(validator.is_valid(&value), "{name}");
    }
    let bad: Value = serde_json::json!({"model": "test", "mcpservers": {}});
    assert!(!validator.is_valid(&bad));
}

#[test]
fn the_mcp_entry_schema_knows_every_key_the_client_reads() {
    let schema = spec_json_schema();
    let props = schema["$defs"]["McpServer"]["properties"]
        .as_object()
        .unwrap();
    let stdio = McpServer::stdio("node")
        .args(["s.js"])
        .env("A", "b")
        .cwd("/tmp")
        .capture_stderr(100)
        .approval(lousho::Approval::Never)
        .allow_tools(["x"])
        .startup_timeout(std::time::Duration::from_secs(1))
        .call_timeout(std::time::Duration::from_secs(2))
        .log_level(lousho::tool::LogLevel::Warning)
        .roots(["data"])
        .sampling(lousho::mcp::SamplingSettings::allowed().max_tokens(100));
    let http = McpServer::http("http://127.0.0.1:1/mcp").header("X", "y");
    for entry in [stdio, http] {
        let json = serde_json::to_value(&entry).unwrap();
        for key in json.as_object().unwrap().keys() {
            assert!(props.contains_key(key), "schema lacks `{key}`");
        }
    }
}

#[test]
fn a_spec_becomes_an_agent_with_its_tools_rules_and_servers() {
    let dir = tempfile::tempdir().unwrap();
    let spec_path = dir.path().join("agent.yaml");
    std::fs::write(
        &spec_path,
        "name: helper\nmodel: test\nprompt: Hi ${WHO:-there}\ntools: [list_dir, day_name]\nmaxTurns: 3\n\
         mcpServers:\n  local:\n    command: ./bin/server\n    args: [\"--port\", \"${PORT}\"]\n    approval: never\n\
         permissions:\n  rules:\n    - { kind: tool, tool: day_name, decision: deny }\n\
         serve:\n  tools: [list_dir]\n  auth: { type: bearer, token: \"${TOKEN}\" }\n",
    )
    .unwrap();
    let spec = SpecLoader::new()
        .without_env()
        .var("TOKEN", "s3cret")
        .var("PORT", "8080")
        .load(&spec_path)
        .unwrap();
    assert_eq!(spec.prompt.as_deref(), Some("Hi there"));
    assert_eq!(spec.workspace, dir.path());
    let McpTransport::Stdio(stdio) = &spec.mcp_servers["local"].transport else {
        panic!("stdio expected")
    };
    assert_eq!(stdio.args, ["--port", "8080"]);
    assert_eq!(
        stdio.command,
        dir.path().join("bin/server").to_string_lossy()
    );
    assert_eq!(stdio.cwd.as_deref(), Some(dir.path()));
    assert_eq!(spec.serve.bearer_token.as_deref(), Some("s3cret"));
    assert!(
        !format!("{spec:?}").contains("s3cret"),
        "the token leaks into Debug"
    );
    let agent = spec.agent_builder_without_mcp().unwrap().build().unwrap();
    assert_eq!(agent.name(), Some("helper"));
    assert!(agent.tool("list_dir").is_some());
    assert_eq!(
        agent.tool_decision("day_name").decision,
        lousho::policy::Decision::Deny
    );
}

#[test]
fn serve_auth_oauth_names_the_issuer_audience_and_scopes() {
    let dir = tempfile::tempdir().unwrap();
    let spec_path = dir.path().join("agent.yaml");
    std::fs::write(
        &spec_path,
        "model: test\nserve:\n  auth:\n    type: oauth\n    issuer: https://idp.example.com\n    audience: https://agents.example.com/mcp\n    scopes: [agent:use]\n    toolScopes: { \"research*\": agent:research }\n    clockSkewMs: 5000\n",
    )
    .unwrap();
    let spec = SpecLoader::new().without_env().load(&spec_path).unwrap();
    let oauth = spec.serve.oauth.as_ref().unwrap();
    assert_eq!(oauth.issuer, "https://idp.example.com");
    assert_eq!(oauth.audience, "https://agents.example.com/mcp");
    assert_eq!(oauth.scopes, ["agent:use"]);
    assert_eq!(
        oauth.tool_scopes,
        [("research*".to_owned(), "agent:research".to_owned())]
    );
    assert_eq!(oauth.clock_skew, Some(std::time::Duration::from_secs(5)));
    assert!(spec.serve.bearer_token.is_none());

    std::fs::write(
        &spec_path,
        "model: test\nserve:\n  auth: { type: oauth, issuer: https://i.example, audience: https://a.example, scope: x }\n",
    )
    .unwrap();
    let err = SpecLoader::new()
        .without_env()
        .load(&spec_path)
        .unwrap_err();
    assert!(err.to_string().contains("scope"), "{err}");
}

#[test]
fn serve_auth_oauth_introspection_takes_its_secret_from_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let spec_path = dir.path().join("agent.yaml");
    std::fs::write(
        &spec_path,
        "model: test\nserve:\n  auth:\n    type: oauth\n    issuer: https://idp.example.com\n    audience: https://agents.example.com/mcp\n    introspection:\n      clientId: agents-api\n      clientSecret: ${INTROSPECTION_SECRET}\n    introspectionEndpoint: https://idp.example.com/oauth2/introspect\n",
    )
    .unwrap();
    let spec = SpecLoader::new()
        .without_env()
        .var("INTROSPECTION_SECRET", "in7r0-s3cret")
        .load(&spec_path)
        .unwrap();
    let oauth = spec.serve.oauth.as_ref().unwrap();
    let client = oauth.introspection.as_ref().unwrap();
    assert_eq!(client.client_id, "agents-api");
    assert_eq!(client.client_secret, "in7r0-s3cret");
    assert_eq!(
        oauth.introspection_endpoint.as_deref(),
        Some("https://idp.example.com/oauth2/introspect")
    );
    assert!(
        !format!("{spec:?}").contains("in7r0-s3cret"),
        "the introspection secret leaks into Debug"
    );

    // An unset variable is an error naming it; so is a misspelt key.
    let err = SpecLoader::new()
        .without_env()
        .load(&spec_path)
        .unwrap_err();
    assert!(err.to_string().contains("INTROSPECTION_SECRET"), "{err}");
    std::fs::write(
        &spec_path,
        "model: test\nserve:\n  auth: { type: oauth, issuer: https://i.example, audience: https://a.example, introspection: { clientId: x, secret: y } }\n",
    )
    .unwrap();
    let err = SpecLoader::new()
        .without_env()
        .load(&spec_path)
        .unwrap_err();
    assert!(err.to_string().contains("secret"), "{err}");
}

#[test]
fn mcp_servers_can_come_from_a_claude_style_mcp_json() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("conf")).unwrap();
    std::fs::write(
        dir.path().join("conf/.mcp.json"),
        r#"{"mcpServers": {"docs": {"type": "http", "url": "${DOCS_URL:-http://127.0.0.1:9/mcp}"},
            "fs": {"command": "npx", "args": ["-y", "server-filesystem", "."]}}}"#,
    )
    .unwrap();
    let spec = SpecLoader::new()
        .without_env()
        .parse(
            "model: test\nmcpServers: conf/.mcp.json\n",
            dir.path().join("a.yaml"),
        )
        .unwrap();
    assert_eq!(spec.mcp_servers.len(), 2);
    let McpTransport::Http(http) = &spec.mcp_servers["docs"].transport else {
        panic!()
    };
    assert_eq!(http.url, "http://127.0.0.1:9/mcp");
    let McpTransport::Stdio(fs) = &spec.mcp_servers["fs"].transport else {
        panic!()
    };
    assert_eq!(fs.cwd.as_deref(), Some(dir.path().join("conf").as_path()));
}

#[test]
fn errors_name_the_file_line_and_key() {
    let parse = |text: &str| {
        SpecLoader::new()
            .without_env()
            .parse(text, "agent.yaml")
            .unwrap_err()
    };
    let e = parse("model: test\nmaxturns: 3\n");
    assert_eq!(e.line, Some(2));
    assert_eq!(e.key.as_deref(), Some("maxturns"));
    assert_eq!(
        *e.kind,
        SpecErrorKind::UnknownKey {
            suggestion: Some("maxTurns".into())
        }
    );
    assert!(e.to_string().starts_with("agent.yaml:2"), "{e}");

    let e = parse("model: test\ntools: [read_flie]\n");
    assert!(e.to_string().contains("did you mean `read_file`?"), "{e}");

    let e = parse("model: test\nprompt: \"${NOPE}\"\n");
    assert_eq!(e.line, Some(2));
    assert!(matches!(*e.kind, SpecErrorKind::UnsetVariable(_)));
    assert!(e.to_string().contains("NOPE"), "{e}");

    let e = parse("model: test\nmcpServers:\n  a:\n    command: x\n    approval: sometimes\n");
    assert!(e.to_string().contains("sometimes"), "{e}");
    assert!(e.to_string().contains("mcpServers.a"), "{e}");
}

#[test]
fn oauth_keys_are_in_the_schema_and_a_key_file_resolves_from_the_spec() {
    let dir = tempfile::tempdir().unwrap();
    let spec = SpecLoader::new()
        .without_env()
        .var("BOT_ID", "report-bot")
        .parse(
            "model: test\nmcpServers:\n  reports:\n    url: https://mcp.example.com/mcp\n    oauth:\n      grant: client_credentials\n      clientId: ${BOT_ID}\n      privateKeyFile: keys/bot.pem\n      signingAlgorithm: ES256\n      scopes: [reports.read]\n",
            dir.path().join("agent.yaml"),
        )
        .unwrap();
    let oauth = spec.mcp_servers["reports"].oauth.clone().unwrap();
    assert_eq!(oauth.client_id.as_deref(), Some("report-bot"));
    assert_eq!(
        oauth.private_key_file.as_deref(),
        Some(dir.path().join("keys/bot.pem").as_path())
    );
    // Every key the client reads (both grants) is in the schema.
    let schema = spec_json_schema();
    let props = schema["$defs"]["OAuthEntry"]["properties"]
        .as_object()
        .unwrap();
    let code = lousho::mcp::OAuthSettings::new("http://127.0.0.1:8765/cb")
        .client_id("c")
        .client_secret("s")
        .scopes(["a"])
        .client_metadata_url("https://example.com/c.json");
    for settings in [code, oauth.private_key_pem("pem")] {
        let json = serde_json::to_value(&settings).unwrap();
        for key in json.as_object().unwrap().keys() {
            assert!(props.contains_key(key), "schema lacks `oauth.{key}`");
        }
    }
    let idp = lousho::mcp::IdpSettings::new("https://idp.example.com", "app")
        .token_endpoint("https://idp.example.com/token")
        .client_secret("s")
        .id_token_file("id.jwt");
    let json = serde_json::to_value(&idp).unwrap();
    let idp_props = schema["$defs"]["IdpEntry"]["properties"]
        .as_object()
        .unwrap();
    for key in json.as_object().unwrap().keys() {
        assert!(
            idp_props.contains_key(key),
            "schema lacks `oauth.idp.{key}`"
        );
    }
    let spec = SpecLoader::new()
        .without_env()
        .parse(
            "model: test\nmcpServers:\n  corp:\n    url: https://mcp.example.com/mcp\n    oauth:\n      grant: enterprise_managed\n      clientId: app\n      clientSecret: s\n      idp: { issuer: https://idp.example.com, clientId: idp-app, idTokenFile: sso/id-token }\n",
            dir.path().join("agent.yaml"),
        )
        .unwrap();
    let idp = spec.mcp_servers["corp"].oauth.clone().unwrap().idp.unwrap();
    assert_eq!(
        idp.id_token_file.as_deref(),
        Some(dir.path().join("sso/id-token").as_path())
    );
    let bad = SpecLoader::new().without_env().parse(
        "model: test\nmcpServers:\n  r:\n    url: https://mcp.example.com/mcp\n    oauth: { grant: client_credentials, clientId: b }\n",
        dir.path().join("agent.yaml"),
    );
    let err = bad.unwrap_err().to_string();
    assert!(err.contains("needs `clientSecret`"), "{err}");
}

#[test]
fn the_mcp_section_sets_naming_lazy_and_on_error() {
    use lousho::mcp::{OnError, ToolNaming};
    let parse = |text: &str| SpecLoader::new().without_env().parse(text, "agent.yaml");
    let spec = parse("model: test\nmcp:\n  naming: mcp\n  lazy: false\n  onError: skip\n").unwrap();
    assert_eq!(spec.mcp_options.naming, ToolNaming::McpPrefixed);
    assert!(!spec.mcp_options.lazy);
    assert_eq!(spec.mcp_options.on_error, OnError::Skip);
    // Unset keys keep connect_mcp's defaults.
    let spec = parse("model: test\nmcp:\n  naming: prefixed\n").unwrap();
    assert_eq!(spec.mcp_options.naming, ToolNaming::Prefixed);
    assert!(spec.mcp_options.lazy);
    assert_eq!(spec.mcp_options.on_error, OnError::Throw);
    let spec = parse("model: test\n").unwrap();
    assert_eq!(spec.mcp_options.naming, ToolNaming::Prefixed);
    // A wrong value or key names the key and its line.
    let err = parse("model: test\nmcp:\n  onError: ignore\n").unwrap_err();
    assert_eq!(err.line, Some(3), "{err}");
    assert!(err.to_string().contains("skip"), "{err}");
    let err = parse("model: test\nmcp:\n  onerror: skip\n").unwrap_err();
    assert_eq!(err.line, Some(3), "{err}");
    assert!(err.to_string().contains("onError"), "{err}");
}

#[test]
fn model_options_turn_prompt_caching_off() {
    let dir = tempfile::tempdir().unwrap();
    let load = |yaml: &str| {
        let path = dir.path().join("agent.yaml");
        std::fs::write(&path, yaml).unwrap();
        SpecLoader::new().without_env().load(&path).unwrap()
    };
    use lousho::model::PromptCache;
    let on = load("model: test\n");
    assert_eq!(on.model_settings.prompt_cache, PromptCache::Auto);
    let off = load("model: test\nmodelOptions: { promptCache: false }\n");
    assert_eq!(off.model_settings.prompt_cache, PromptCache::Off);
}

#[test]
fn the_serve_section_sets_the_http_load_limits() {
    let dir = tempfile::tempdir().unwrap();
    let spec_path = dir.path().join("agent.yaml");
    std::fs::write(
        &spec_path,
        "model: test\nserve:\n  maxConnections: 900\n  minBodyRate: 0\n  maxCalls: 64\n  maxAgentRuns: 8\n  clientSharePercent: 100\n",
    )
    .unwrap();
    let spec = SpecLoader::new().without_env().load(&spec_path).unwrap();
    let s = &spec.serve;
    assert_eq!(s.max_connections, Some(900));
    assert_eq!(s.min_body_rate, Some(0));
    assert_eq!(s.max_calls, Some(64));
    assert_eq!(s.max_agent_runs, Some(8));
    assert_eq!(s.client_share_percent, Some(100));
}

#[test]
fn the_serve_section_sets_per_caller_limits_and_refuses_a_zero() {
    let dir = tempfile::tempdir().unwrap();
    let load = |yaml: &str| {
        let path = dir.path().join("agent.yaml");
        std::fs::write(&path, yaml).unwrap();
        SpecLoader::new().without_env().load(&path)
    };
    let spec = load(
        "model: test\nserve:\n  limits:\n    perCaller:\n      concurrentRuns: 2\n      runsPerMinute: 10\n      tokensPerDay: 5000\n",
    )
    .unwrap();
    let limits = spec.serve.caller_limits.unwrap();
    assert_eq!(limits.concurrent_runs, Some(2));
    assert_eq!(limits.runs_per_minute, Some(10));
    assert_eq!(limits.tokens_per_day, Some(5000));
    assert!(load("model: test\n").unwrap().serve.caller_limits.is_none());
    let zero = load("model: test\nserve:\n  limits:\n    perCaller:\n      runsPerMinute: 0\n")
        .unwrap_err()
        .to_string();
    assert!(
        zero.contains("serve.limits.perCaller.runsPerMinute"),
        "{zero}"
    );
}

#[test]
fn model_options_ask_for_thinking_by_budget_or_effort_not_both() {
    use lousho::model::{ReasoningEffort, Thinking};
    let dir = tempfile::tempdir().unwrap();
    let load = |yaml: &str| {
        let path = dir.path().join("agent.yaml");
        std::fs::write(&path, yaml).unwrap();
        SpecLoader::new().without_env().load(&path)
    };
    let budget = load("model: test\nmodelOptions: { thinkingBudget: 4000 }\n").unwrap();
    assert_eq!(budget.model_settings.thinking, Thinking::Budget(4000));
    let effort = load("model: test\nmodelOptions: { reasoningEffort: high }\n").unwrap();
    assert_eq!(
        effort.model_settings.thinking,
        Thinking::Effort(ReasoningEffort::High)
    );
    assert_eq!(
        load("model: test\n").unwrap().model_settings.thinking,
        Thinking::Default
    );
    let both = load("model: test\nmodelOptions: { thinkingBudget: 4000, reasoningEffort: low }\n")
        .unwrap_err()
        .to_string();
    assert!(both.contains("modelOptions.reasoningEffort"), "{both}");
    let small = load("model: test\nmodelOptions: { thinkingBudget: 100 }\n")
        .unwrap_err()
        .to_string();
    assert!(
        small.contains("modelOptions.thinkingBudget") && small.contains("1024"),
        "{small}"
    );
}
