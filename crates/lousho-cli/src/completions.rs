//! `lousho completions bash|zsh|fish`: the shell completion script, from
//! the command line's own definition (clap_complete).

use crate::cli::{Cli, CompletionsArgs};
use clap::CommandFactory;
use std::io::Write;
use std::process::ExitCode;

/// Writes the script to stdout.
pub fn run(args: CompletionsArgs) -> anyhow::Result<ExitCode> {
    let mut command = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "lousho", &mut script);
    let mut out = std::io::stdout().lock();
    out.write_all(&script)?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
