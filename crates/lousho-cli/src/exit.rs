//! Exit codes and how errors are printed (with their cause chain).

use lousho::mcp::McpError;
use lousho::spec::SpecError;
use std::process::ExitCode;

/// Success.
pub const OK: u8 = 0;
/// The run, the model or the tool failed.
pub const FAILED: u8 = 1;
/// A bad command line or spec file (clap uses 2 for usage errors too).
pub const BAD_SPEC: u8 = 2;
/// An MCP server could not connect.
pub const MCP_CONNECT: u8 = 3;

/// Prints `error: …` and each cause on its own line; picks the exit code.
#[allow(clippy::print_stderr)]
pub fn report(error: &anyhow::Error) -> ExitCode {
    eprintln!("error: {error}");
    for cause in error.chain().skip(1) {
        eprintln!("  caused by: {cause}");
    }
    ExitCode::from(code_for(error))
}

fn code_for(error: &anyhow::Error) -> u8 {
    for cause in error.chain() {
        if cause.is::<SpecError>() {
            return BAD_SPEC;
        }
        if cause.is::<McpError>() {
            return MCP_CONNECT;
        }
        if cause.is::<lousho::BuildError>() {
            return BAD_SPEC;
        }
    }
    FAILED
}
