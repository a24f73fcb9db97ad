//! Skills over MCP (issue 30 §3): a skills folder served by `lousho mcp`
//! (`serve.skills`) through the Skills extension (SEP-2640) reaches a lousho
//! agent that mounts the server — only names and descriptions in the first
//! request, `SKILL.md` loaded on demand, a file read — and is listed and
//! read by the official Python SDK's client.

use super::common::{fresh_cache_dir, interop_python, repo};
use lousho::model::testing::{ScriptedModel, ScriptedTurn};
use lousho::tool::Content;
use lousho::{Agent, McpServer};
use serde_json::json;

const PDF_SKILL: &str = "---\nname: pdf-forms\ndescription: Fill in PDF forms from a customer's data.\n---\n# Filling PDF forms\n\nBODY-MARKER: follow reference.md.\n";
const REFERENCE: &str = "REFERENCE-MARKER: field names are case-sensitive.\n";
const TONE_SKILL: &str =
    "---\nname: brand-tone\ndescription: Write in the company's voice.\n---\nTONE-BODY\n";

/// A fresh folder with a skills folder (two skills) and a spec serving it
/// (`serve.skills: ./skills`); the spec's path.
fn served_skills() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in [
        ("skills/pdf-forms/SKILL.md", PDF_SKILL),
        ("skills/pdf-forms/reference.md", REFERENCE),
        ("skills/pdf-forms/.hidden", "HIDDEN"),
        ("skills/brand-tone/SKILL.md", TONE_SKILL),
        (
            "server.yaml",
            "name: docs\nmodel: test\nprompt: You answer.\nserve:\n  skills: ./skills\n",
        ),
    ] {
        let full = dir.path().join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, text).unwrap();
    }
    let spec = dir.path().join("server.yaml").display().to_string();
    (dir, spec)
}

fn text(output: &lousho::ToolOutput) -> String {
    output
        .content
        .iter()
        .filter_map(|c| match c {
            Content::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn an_mcp_servers_skills_are_named_first_then_loaded_and_read() {
    let (_dir, spec) = served_skills();
    let entry = McpServer::stdio(env!("CARGO_BIN_EXE_lousho"))
        .args(["mcp".to_owned(), spec])
        .env("LOUSHO_LOG", "warn")
        .env("LOUSHO_CACHE_DIR", fresh_cache_dir().display().to_string());
    let model = ScriptedModel::new([
        ScriptedTurn::tool_call("load_skill", json!({"name": "docs:pdf-forms"})),
        ScriptedTurn::tool_call(
            "read_skill_file",
            json!({"skill": "docs:pdf-forms", "path": "reference.md"}),
        )
        .and_tool_call(
            "read_skill_file",
            json!({"skill": "docs:pdf-forms", "path": "../brand-tone/SKILL.md"}),
        )
        .and_tool_call(
            "read_skill_file",
            json!({"skill": "docs:pdf-forms", "path": "missing.md"}),
        ),
        ScriptedTurn::text("done"),
    ]);
    let agent = Agent::builder()
        .model(model.clone())
        .prompt("You fill in forms.")
        .mcp_server("docs", entry)
        .build()
        .unwrap();
    let reply = agent.send("fill in the form").await.unwrap();
    assert_eq!(reply.text, "done");

    let first = &model.requests()[0];
    let system = first.system.as_deref().unwrap();
    assert!(
        system.contains("- docs:pdf-forms: Fill in PDF forms from a customer's data.\n"),
        "{system}"
    );
    assert!(
        system.contains("- docs:brand-tone: Write in the company's voice.\n"),
        "{system}"
    );
    for body in ["BODY-MARKER", "TONE-BODY", "REFERENCE-MARKER"] {
        assert!(!system.contains(body), "{body} in {system}");
    }
    assert!(first.tools.iter().any(|t| t.name == "load_skill"));

    let out: Vec<_> = reply.tool_calls.iter().map(|c| &c.output).collect();
    let loaded = text(out[0]);
    assert!(loaded.contains("BODY-MARKER"), "{loaded}");
    assert!(
        loaded.contains("(read them with read_skill_file): reference.md]"),
        "{loaded}"
    );
    assert_eq!(text(out[1]), REFERENCE, "{:?}", out[1]);
    assert!(
        text(out[2]).contains("`..` may not be used"),
        "{:?}",
        out[2]
    );
    assert!(
        text(out[3]).contains("does not list this file"),
        "{:?}",
        out[3]
    );
    agent.close().await;
}

#[test]
fn the_official_python_client_lists_and_reads_a_served_skills_folder() {
    let Some(py) = interop_python() else { return };
    let (_dir, spec) = served_skills();
    let out = std::process::Command::new(py)
        .current_dir(repo().join("interop"))
        .args([
            "clients/skills_client.py",
            "stdio",
            env!("CARGO_BIN_EXE_lousho"),
            "mcp",
        ])
        .arg(&spec)
        .env("LOUSHO_LOG", "warn")
        .env("LOUSHO_CACHE_DIR", fresh_cache_dir())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["extension"], json!({}), "{report}");
    let skills = report["skills"].as_array().unwrap();
    let names: Vec<&str> = skills
        .iter()
        .map(|s| s["frontmatter"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["brand-tone", "pdf-forms"], "{report}");
    let pdf = &skills[1];
    assert_eq!(pdf["uri"], "skill://pdf-forms/SKILL.md");
    let files: Vec<&str> = pdf["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["uri"].as_str().unwrap())
        .collect();
    assert_eq!(
        files,
        [
            "skill://pdf-forms/SKILL.md",
            "skill://pdf-forms/reference.md"
        ],
        "hidden files are not served: {report}"
    );
    assert!(
        pdf["resources"][1]["digest"]
            .as_str()
            .unwrap()
            .starts_with("sha256:")
    );
    let resources = report["resources"].as_array().unwrap();
    assert!(
        resources.contains(&json!("skill://pdf-forms/SKILL.md")),
        "each SKILL.md is a listed resource: {report}"
    );
    assert_eq!(report["reads"]["skill://pdf-forms/reference.md"], REFERENCE);
    assert_eq!(report["reads"]["skill://pdf-forms/SKILL.md"], PDF_SKILL);
}
