//! Exit codes and how errors are printed (with their cause chain, in the
//! command line's words: spec keys, flags and environment variables rather
//! than the library's Rust names).

use lousho::AgentError;
use lousho::cassette::CassetteError;
use lousho::mcp::McpError;
use lousho::model::ModelError;
use lousho::spec::SpecError;
use std::fmt;
use std::process::ExitCode;

/// Success.
pub const OK: u8 = 0;
/// The run, the model or the tool failed.
pub const FAILED: u8 = 1;
/// A bad command line, spec file or setup (clap uses 2 for usage errors too).
pub const BAD_SPEC: u8 = 2;
/// An MCP server could not connect.
pub const MCP_CONNECT: u8 = 3;
/// The run paused for approval with nobody to ask (stdin not a terminal);
/// it was saved for `lousho resume`.
pub const PAUSED: u8 = 4;
/// The run stopped at a limit of its `budget:` (the partial answer was
/// printed).
pub const BUDGET: u8 = 5;

/// `run --replay`: the run differed from its recording (a request, or the
/// reply; the difference was printed).
pub const REPLAY_DIFFERS: u8 = 6;

/// A bad command line that clap cannot see (a malformed JSON argument):
/// exit code 2.
#[derive(Debug)]
pub struct Usage(pub String);

impl fmt::Display for Usage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}

/// Prints `error: …` and each cause on its own line; picks the exit code.
/// An MCP server's error already says its cause in lousho's words (a status,
/// "connection refused", a timeout): what it wraps (the protocol library's
/// chain) is shown only with `-v` (`verbose` ≥ 1).
/// Stdout closed under us (`lousho tools x | head`) ends quietly with 0.
#[allow(clippy::print_stderr)]
pub fn report(error: &anyhow::Error, verbose: u8) -> ExitCode {
    if is_broken_pipe(error) {
        return ExitCode::from(OK);
    }
    for (i, line) in lines(error, verbose).iter().enumerate() {
        if i == 0 {
            eprintln!("error: {line}");
        } else {
            eprintln!("  caused by: {line}");
        }
    }
    ExitCode::from(code_for(error))
}

/// The lines [`report`] prints: the error, then its causes down to the first
/// MCP server error (all of them with `verbose` ≥ 1).
fn lines(error: &anyhow::Error, verbose: u8) -> Vec<String> {
    let mut out = Vec::new();
    for cause in error.chain() {
        out.push(cli_text(cause).unwrap_or_else(|| cause.to_string()));
        if verbose == 0 && cause.is::<McpError>() {
            break;
        }
    }
    out
}

/// Whether the error is a write to a closed stdout.
pub fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

fn code_for(error: &anyhow::Error) -> u8 {
    // A context (`.context(Usage(..))`) is found by downcasting, not in the chain.
    if error.downcast_ref::<Usage>().is_some() {
        return BAD_SPEC;
    }
    for cause in error.chain() {
        if let Some(e) = cause.downcast_ref::<CassetteError>() {
            return cassette_code(e);
        }
        let bad_setup = cause.is::<SpecError>()
            || cause.is::<Usage>()
            || cause.is::<lousho::agent::BuildError>()
            || missing_key(cause).is_some();
        if bad_setup {
            return BAD_SPEC;
        }
        if cause.is::<McpError>() || cause.is::<crate::servers::ServerDown>() {
            return MCP_CONNECT;
        }
    }
    FAILED
}

/// A cassette's failure: the run differed from the recording, the file was
/// unusable (a setup error), or the recording was not written (the run failed).
fn cassette_code(error: &CassetteError) -> u8 {
    match error {
        CassetteError::Mismatch { .. }
        | CassetteError::Exhausted { .. }
        | CassetteError::Unused { .. }
        | CassetteError::Outcome { .. } => REPLAY_DIFFERS,
        CassetteError::NotClean { .. } => FAILED,
        _ => BAD_SPEC,
    }
}

/// The provider and variable of a missing API key, wherever it sits.
fn missing_key<'a>(cause: &'a (dyn std::error::Error + 'static)) -> Option<(&'a str, &'a str)> {
    let model = match (
        cause.downcast_ref::<ModelError>(),
        cause.downcast_ref::<AgentError>(),
        cause.downcast_ref::<lousho::agent::BuildError>(),
    ) {
        (Some(m), _, _)
        | (_, Some(AgentError::Model(m)), _)
        | (_, _, Some(lousho::agent::BuildError::Model(m))) => m,
        _ => return None,
    };
    match model {
        ModelError::MissingApiKey { provider, env_var } => Some((provider, env_var)),
        _ => None,
    }
}

/// The message of errors whose library text names Rust items, reworded for
/// the command line.
fn cli_text(cause: &(dyn std::error::Error + 'static)) -> Option<String> {
    if let Some((provider, env_var)) = missing_key(cause) {
        return Some(format!(
            "{provider}: no API key: set the {env_var} environment variable (or pass --model test to run offline)"
        ));
    }
    if let Some(AgentError::MaxTurnsExceeded { max_turns }) = cause.downcast_ref::<AgentError>() {
        return Some(format!(
            "the run took more than {max_turns} model turns; raise `maxTurns` in the spec or check the tools' results"
        ));
    }
    match cause.downcast_ref::<McpError>()? {
        McpError::NeedsAuth { server } => Some(format!(
            "MCP server `{server}` needs an OAuth sign-in: run `lousho login <spec> {server}` and start again"
        )),
        _ => None,
    }
}
