//! Specs that mount specs (`lousho mcp other.yaml` as a stdio server): the
//! chain of spec files from the outermost `lousho` down to this one travels
//! to every stdio server in `LOUSHO_SPEC_CHAIN` (a JSON list of absolute
//! paths). A spec already on the chain — one that mounts itself, directly or
//! through others — and a chain deeper than `LOUSHO_MAX_SPEC_DEPTH` (default
//! 8) are refused with a message naming the chain, instead of spawning
//! `lousho` after `lousho` until the machine runs out of processes.

use lousho::mcp::McpTransport;
use lousho::spec::{AgentSpec, SpecError, SpecErrorKind};
use std::path::Path;

/// The variable that carries the chain to child processes (the library's
/// name for it: it leaves the variable out of a server's identity).
pub const CHAIN_VAR: &str = lousho::mcp::SPEC_CHAIN_VAR;
/// The variable that sets how many specs may mount one another in a row.
pub const DEPTH_VAR: &str = "LOUSHO_MAX_SPEC_DEPTH";
/// How many specs may mount one another in a row by default.
pub const DEFAULT_MAX_DEPTH: usize = 8;

/// Checks `spec` against the chain it was started from and hands the chain,
/// with `spec` added, to each of its stdio servers.
pub fn enter(spec: &mut AgentSpec) -> anyhow::Result<()> {
    let chain = inherited()?;
    let me = std::fs::canonicalize(&spec.path)
        .unwrap_or_else(|_| spec.path.clone())
        .to_string_lossy()
        .into_owned();
    let refuse = |message: String| {
        anyhow::Error::new(SpecError::from_parts(
            &spec.path,
            SpecErrorKind::Invalid(message),
        ))
    };
    if let Some(at) = chain.iter().position(|p| *p == me) {
        let cycle = shown(chain[at..].iter().chain(std::iter::once(&me)));
        return Err(refuse(format!(
            "this spec mounts itself through its MCP servers ({cycle}); remove the server that \
             runs `lousho mcp` on it"
        )));
    }
    let max = max_depth()?;
    if chain.len() >= max {
        let all = shown(chain.iter().chain(std::iter::once(&me)));
        return Err(refuse(format!(
            "specs mounting specs nest {} levels deep ({all}), more than {DEPTH_VAR}={max} \
             allows; raise it if this is meant",
            chain.len() + 1
        )));
    }
    let mut next = chain;
    next.push(me);
    let value = serde_json::to_string(&next)?;
    for server in spec.mcp_servers.values_mut() {
        if let McpTransport::Stdio(stdio) = &mut server.transport {
            stdio.env.insert(CHAIN_VAR.to_owned(), value.clone());
        }
    }
    Ok(())
}

/// The chain this process was started from (empty at the top).
fn inherited() -> anyhow::Result<Vec<String>> {
    let Some(raw) = std::env::var_os(CHAIN_VAR) else {
        return Ok(Vec::new());
    };
    raw.to_str()
        .and_then(|text| serde_json::from_str(text).ok())
        .ok_or_else(|| {
            anyhow::anyhow!(
                "{CHAIN_VAR} is set but is not the JSON list of spec paths lousho passes to its \
                 servers; unset it"
            )
        })
}

fn max_depth() -> anyhow::Result<usize> {
    let Some(raw) = std::env::var_os(DEPTH_VAR) else {
        return Ok(DEFAULT_MAX_DEPTH);
    };
    raw.to_str()
        .and_then(|text| text.trim().parse::<usize>().ok())
        .filter(|&n| n >= 1)
        .ok_or_else(|| {
            anyhow::anyhow!(
                "{DEPTH_VAR}={}: not a number of levels (at least 1); set it to e.g. 8 or unset it",
                raw.to_string_lossy()
            )
        })
}

/// `a.yaml → b.yaml → a.yaml`: file names, or whole paths when two
/// different files share a name.
fn shown<'a>(paths: impl Iterator<Item = &'a String>) -> String {
    let paths: Vec<&String> = paths.collect();
    let name = |p: &String| {
        Path::new(p)
            .file_name()
            .map_or_else(|| p.clone(), |n| n.to_string_lossy().into_owned())
    };
    let clash = paths
        .iter()
        .any(|a| paths.iter().any(|b| a != b && name(a) == name(b)));
    paths
        .iter()
        .map(|p| if clash { (*p).clone() } else { name(p) })
        .collect::<Vec<_>>()
        .join(" → ")
}
