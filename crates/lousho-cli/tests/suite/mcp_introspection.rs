//! `lousho mcp --http` with `serve.auth: { type: oauth, introspection }`
//! from a spec file, its client secret from the environment
//! (`${INTROSPECTION_SECRET}`), against the real `oidc-provider`: an opaque
//! token the provider issued calls, an unknown one is `401`, and a wrong
//! secret is `503` (a configuration error, never an accept). Under `CI=true`
//! a missing `oidc-provider` fails.

use super::common::{lousho, spec_file};
use lousho_testkit::oidc_provider::{INTROSPECTION_CLIENT, Idp};
use lousho_testkit::replicas::{Replica, post};
use serde_json::json;

/// The spec: tokens from `${ISSUER}` for [`AUDIENCE`], opaque ones
/// introspected as `mcp-server` with the secret from the environment.
const SPEC: &str = "name: helper
model: test
serve:
  auth:
    type: oauth
    issuer: ${ISSUER}
    audience: http://127.0.0.1/mcp
    scopes: [\"mcp:use\"]
    introspection:
      clientId: mcp-server
      clientSecret: ${INTROSPECTION_SECRET}
";

const AUDIENCE: &str = "http://127.0.0.1/mcp";

#[tokio::test(flavor = "multi_thread")]
async fn a_served_spec_introspects_opaque_tokens_with_the_secret_from_the_environment() {
    let Some(idp) = Idp::start().await else {
        return;
    };
    let (_dir, spec) = spec_file("served.yaml", SPEC);
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let opaque = idp.token("carol", AUDIENCE, "mcp:use").await;
    // (case, secret, token, status)
    let cases = [
        (
            "the right secret",
            INTROSPECTION_CLIENT.1,
            opaque.as_str(),
            200,
        ),
        (
            "the right secret, an unknown token",
            INTROSPECTION_CLIENT.1,
            "bm90LWEtdG9rZW4",
            401,
        ),
        ("a wrong secret", "not-the-secret", opaque.as_str(), 503),
    ];
    for (case, secret, token, want) in cases {
        let mut cmd = lousho();
        cmd.env("ISSUER", &idp.issuer)
            .env("INTROSPECTION_SECRET", secret);
        let server = Replica::serve(cmd, &spec);
        let answer = post(server.url(), Some(token), &list).await;
        assert_eq!(answer.status, want, "{case}: {:?}", answer.body);
        if want == 200 {
            assert!(answer.body["result"]["tools"].is_array(), "{case}");
        }
    }
}
