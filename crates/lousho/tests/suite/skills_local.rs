//! Skills from a local folder (issue 30 §3): only names and descriptions in
//! the first model request, `SKILL.md` loaded on demand through
//! `load_skill`, a file of the skill read through `read_skill_file` under
//! the file sandbox's rules (no `..`, no symbolic link out, no hidden
//! files, size-bounded).

#![cfg(unix)]

use super::builtins_fs::tree;
use lousho::Agent;
use lousho::model::testing::{ScriptedModel, ScriptedTurn};
use lousho::model::{ModelRequest, ToolDefinition};
use lousho::tool::Content;
use lousho::tool::search::estimate_definition_tokens;
use serde_json::json;

pub(crate) const PDF_SKILL: &str = "---\nname: pdf-forms\ndescription: >\n  Fill in PDF forms from\n  a customer's data.\nlicense: MIT\n---\n# Filling PDF forms\n\nBODY-MARKER: open the form, then follow reference.md step by step.\n";
pub(crate) const REFERENCE: &str = "REFERENCE-MARKER: field names are case-sensitive.\n";
pub(crate) const TONE_SKILL: &str = "---\nname: brand-tone\ndescription: Write in the company's voice.\n---\nTONE-BODY: short sentences.\n";

/// A skills folder with two skills, a hidden file, a symlink out, a big file.
pub(crate) fn skills_tree() -> tempfile::TempDir {
    let big = vec![b'x'; lousho::skills::SKILL_FILE_MAX_BYTES + 1];
    let dir = tree(&[
        ("outside.txt", b"OUTSIDE-SECRET\n"),
        ("skills/pdf-forms/SKILL.md", PDF_SKILL.as_bytes()),
        ("skills/pdf-forms/reference.md", REFERENCE.as_bytes()),
        ("skills/pdf-forms/scripts/fill.py", b"print('fill')\n"),
        ("skills/pdf-forms/.secret", b"hidden\n"),
        ("skills/pdf-forms/big.txt", &big),
        ("skills/brand-tone/SKILL.md", TONE_SKILL.as_bytes()),
    ]);
    std::os::unix::fs::symlink(
        dir.path().join("outside.txt"),
        dir.path().join("skills/pdf-forms/escape.md"),
    )
    .unwrap();
    dir
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

/// The estimated tokens of a request's system prompt and tool definitions
/// (one per 4 bytes, as lousho estimates).
pub(crate) fn first_request_tokens(request: &ModelRequest) -> usize {
    let system = request.system.as_deref().map_or(0, |s| s.len().div_ceil(4));
    let tools: usize = request
        .tools
        .iter()
        .map(|t: &ToolDefinition| {
            estimate_definition_tokens(&t.name, &t.description, &t.input_schema)
        })
        .sum();
    system + tools
}

#[tokio::test]
async fn a_local_skill_is_named_first_then_loaded_and_its_files_read() {
    let dir = skills_tree();
    let model = ScriptedModel::new([
        ScriptedTurn::tool_call("load_skill", json!({"name": "pdf-forms"})),
        ScriptedTurn::tool_call(
            "read_skill_file",
            json!({"skill": "pdf-forms", "path": "reference.md"}),
        )
        .and_tool_call(
            "read_skill_file",
            json!({"skill": "pdf-forms", "path": "../brand-tone/SKILL.md"}),
        )
        .and_tool_call(
            "read_skill_file",
            json!({"skill": "pdf-forms", "path": "escape.md"}),
        )
        .and_tool_call(
            "read_skill_file",
            json!({"skill": "pdf-forms", "path": ".secret"}),
        )
        .and_tool_call(
            "read_skill_file",
            json!({"skill": "pdf-forms", "path": "big.txt"}),
        )
        .and_tool_call("load_skill", json!({"name": "nope"})),
        ScriptedTurn::text("done"),
    ]);
    let agent = Agent::builder()
        .model(model.clone())
        .prompt("You fill in forms.")
        .skills(dir.path().join("skills"))
        .build()
        .unwrap();
    let reply = agent.send("fill in the form").await.unwrap();
    assert_eq!(reply.text, "done");

    // The first request names the skills and describes them, nothing more.
    let first = &model.requests()[0];
    let system = first.system.as_deref().unwrap();
    assert!(
        system.starts_with("You fill in forms.\n\n## Skills"),
        "{system}"
    );
    assert!(
        system.contains("- pdf-forms: Fill in PDF forms from a customer's data.\n"),
        "{system}"
    );
    assert!(
        system.contains("- brand-tone: Write in the company's voice.\n"),
        "{system}"
    );
    for body in ["BODY-MARKER", "TONE-BODY", "REFERENCE-MARKER", "license"] {
        assert!(!system.contains(body), "{body} in {system}");
    }
    let names: Vec<&str> = first.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["load_skill", "read_skill_file"]);
    let tools = agent.tools().unwrap();
    assert!(!tools.get("load_skill").unwrap().spec().needs_approval());

    let out: Vec<_> = reply.tool_calls.iter().map(|c| &c.output).collect();
    let loaded = text(out[0]);
    assert!(!out[0].is_error, "{loaded}");
    assert!(loaded.contains("BODY-MARKER"), "{loaded}");
    assert!(
        loaded
            .contains("(read them with read_skill_file): big.txt, reference.md, scripts/fill.py]"),
        "{loaded}"
    );
    assert_eq!(text(out[1]), REFERENCE);
    let refused = [
        (2, "`..` may not be used"),
        (3, "symbolic link"),
        (4, "hidden files"),
        (5, "larger than the 262144 bytes"),
        (6, "there is no skill named `nope`"),
    ];
    for (i, want) in refused {
        assert!(out[i].is_error, "{i}: {:?}", out[i]);
        assert!(text(out[i]).contains(want), "{i}: {}", text(out[i]));
    }
    assert!(!text(out[3]).contains("OUTSIDE-SECRET"));

    // Token counts of the first request: without skills, with them named.
    let plain = ScriptedModel::new([ScriptedTurn::text("done")]);
    let agent_plain = Agent::builder()
        .model(plain.clone())
        .prompt("You fill in forms.")
        .build()
        .unwrap();
    agent_plain.send("fill in the form").await.unwrap();
    let without = first_request_tokens(&plain.requests()[0]);
    let with = first_request_tokens(first);
    let bodies = (PDF_SKILL.len() + TONE_SKILL.len() + REFERENCE.len()).div_ceil(4);
    println!(
        "first request tokens (est.): without skills {without}, with 2 skills named {with}, their bodies and files alone {bodies}"
    );
    assert!(with > without);
}

#[test]
fn a_broken_skill_folder_fails_the_build_saying_what_to_fix() {
    let dir = tree(&[
        (
            "wrong-name/SKILL.md",
            b"---\nname: other\ndescription: x\n---\n",
        ),
        ("empty/readme.txt", b"no skill here\n"),
        ("bad/SKILL.md", b"no front matter\n"),
    ]);
    let build = |p: std::path::PathBuf| Agent::builder().model("test").skills(p).build();
    let e = build(dir.path().join("wrong-name"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("its folder `wrong-name`"), "{e}");
    let e = build(dir.path().join("empty")).unwrap_err().to_string();
    assert!(e.contains("holds no skill"), "{e}");
    let e = build(dir.path().join("bad")).unwrap_err().to_string();
    assert!(e.contains("YAML front matter"), "{e}");
}

#[tokio::test]
async fn a_spec_file_names_its_skills_folder() {
    let dir = skills_tree();
    std::fs::write(
        dir.path().join("agent.yaml"),
        "model: test\nprompt: hi\nskills: ./skills\n",
    )
    .unwrap();
    let spec = lousho::spec::load_spec(dir.path().join("agent.yaml")).unwrap();
    assert_eq!(spec.skills, [dir.path().join("skills")]);
    let model = ScriptedModel::new([ScriptedTurn::text("ok")]);
    let agent = spec
        .agent_builder()
        .unwrap()
        .model(model.clone())
        .build()
        .unwrap();
    agent.send("x").await.unwrap();
    let system = model.requests()[0].system.clone().unwrap();
    assert!(system.contains("- brand-tone: "), "{system}");
}
