//! `model: sampling` outside MCP: the run fails with a typed error saying
//! what to do; a spec file accepts the model string.

use lousho::model::ModelError;
use lousho::{Agent, AgentError};

#[tokio::test]
async fn a_sampling_agent_without_an_mcp_client_fails_saying_so() {
    let agent = Agent::builder().model("sampling").build().unwrap();
    assert_eq!(agent.model_name(), "sampling");
    let err = agent.send("hi").await.unwrap_err();
    assert!(
        matches!(err, AgentError::Model(ModelError::NoSamplingClient)),
        "{err:?}"
    );
    assert!(
        err.to_string().contains("serve the agent over MCP"),
        "{err}"
    );
}

#[cfg(feature = "spec")]
#[test]
fn a_spec_can_name_the_sampling_model() {
    let spec = lousho::spec::SpecLoader::new()
        .parse("model: sampling\n", "agent.yaml")
        .unwrap();
    assert_eq!(spec.model.as_deref(), Some("sampling"));
}
