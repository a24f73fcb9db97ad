//! What `lousho tools` shows of each server besides its tools: its prompts
//! (run them with `--prompt server:name` or `/server:name`) and its
//! resources and templates (attach them with `@server:uri`). A cataloged
//! server's come from its manifest; a server that failed has none.

use crate::servers::Servers;
use lousho::mcp::ServerStatus;
use serde_json::{Value, json};
use std::io::Write;

/// The prompts, resources and resource templates of the usable servers, as
/// JSON rows each naming its server.
pub struct OfferRows {
    /// `{server, name, title, description, arguments}`.
    pub prompts: Vec<Value>,
    /// `{server, uri, name, title, description, mimeType, size}`.
    pub resources: Vec<Value>,
    /// `{server, uriTemplate, name, title, description, mimeType}`.
    pub templates: Vec<Value>,
}

/// Lists what each connected or cataloged server offers.
pub async fn rows(mcp: &Servers) -> OfferRows {
    let mut out = OfferRows {
        prompts: Vec::new(),
        resources: Vec::new(),
        templates: Vec::new(),
    };
    let client = mcp.client();
    for (server, status) in mcp.status() {
        if !matches!(status, ServerStatus::Connected | ServerStatus::Cataloged) {
            continue;
        }
        let tag = |mut v: Value| {
            v["server"] = json!(server);
            v
        };
        if let Ok(prompts) = client.list_prompts(&server).await {
            out.prompts.extend(
                prompts
                    .iter()
                    .filter_map(|p| serde_json::to_value(p).ok())
                    .map(tag),
            );
        }
        if let Ok(resources) = client.list_resources(&server).await {
            out.resources.extend(
                resources
                    .iter()
                    .filter_map(|r| serde_json::to_value(r).ok())
                    .map(tag),
            );
        }
        if let Ok(templates) = client.list_resource_templates(&server).await {
            out.templates.extend(
                templates
                    .iter()
                    .filter_map(|t| serde_json::to_value(t).ok())
                    .map(tag),
            );
        }
    }
    out
}

/// The prompts table and the resources table (each after a blank line;
/// nothing for an empty list).
pub fn print(out: &mut impl Write, rows: &OfferRows) -> anyhow::Result<()> {
    let text = |v: &Value, k: &str| v[k].as_str().unwrap_or_default().to_owned();
    if !rows.prompts.is_empty() {
        writeln!(out)?;
        let mut table = crate::table::new(&["PROMPT", "ARGUMENTS", "DESCRIPTION"]);
        for p in &rows.prompts {
            let args: Vec<String> = p["arguments"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|arg| {
                            let name = text(arg, "name");
                            if arg["required"].as_bool() == Some(true) {
                                name
                            } else {
                                format!("[{name}]")
                            }
                        })
                        .collect()
                })
                .unwrap_or_default();
            table.add_row(vec![
                format!("/{}:{}", text(p, "server"), text(p, "name")),
                args.join(" "),
                first_line(&text(p, "description")),
            ]);
        }
        writeln!(out, "{}", crate::table::render(&mut table))?;
    }
    if !rows.resources.is_empty() || !rows.templates.is_empty() {
        writeln!(out)?;
        let mut table = crate::table::new(&["RESOURCE", "NAME", "MIME TYPE"]);
        for r in &rows.resources {
            table.add_row(vec![
                format!("@{}:{}", text(r, "server"), text(r, "uri")),
                text(r, "name"),
                text(r, "mimeType"),
            ]);
        }
        for t in &rows.templates {
            table.add_row(vec![
                format!("@{}:{}", text(t, "server"), text(t, "uriTemplate")),
                format!("{} (template)", text(t, "name")),
                text(t, "mimeType"),
            ]);
        }
        writeln!(out, "{}", crate::table::render(&mut table))?;
    }
    Ok(())
}

/// The first line of `s`, at most 80 characters.
fn first_line(s: &str) -> String {
    let line = s.lines().next().unwrap_or_default();
    if line.chars().count() > 80 {
        format!("{}…", line.chars().take(79).collect::<String>())
    } else {
        line.to_owned()
    }
}
