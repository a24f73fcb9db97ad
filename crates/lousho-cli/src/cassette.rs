//! `lousho run --record FILE` / `--replay FILE`: the run goes through a
//! [cassette](lousho::cassette) — the library's, built from the flags and
//! given to the agent and its MCP servers like any option. After the run a
//! recording is saved (only when it finished cleanly) and a replay is
//! checked against the recording; either way a summary goes to stderr.

use crate::cli::RunArgs;
use crate::exit::Usage;
use lousho::Reply;
use lousho::agent::RunStatus;
use lousho::cassette::{Cassette, CassetteError, CassetteOptions, Matching, Outcome, Redaction};
use lousho::model::Message;

/// The cassette of a `lousho run`, when `--record` or `--replay` asks for one.
pub struct RunCassette {
    cassette: Cassette,
}

impl RunCassette {
    /// The cassette the flags ask for: `None` without `--record` and
    /// `--replay`. A cassette that cannot be read, or a bad `--redact`
    /// pattern, is a usage error (exit code 2).
    pub fn from_args(args: &RunArgs) -> anyhow::Result<Option<Self>> {
        let (path, replaying) = match (&args.record, &args.replay) {
            (Some(path), _) => (path, false),
            (None, Some(path)) => (path, true),
            (None, None) => return Ok(None),
        };
        // Secret-looking variables (`*_KEY`, `*_TOKEN`, …) on both sides, so
        // a replay compares its requests redacted as the recording was.
        let mut redaction = Redaction::new().secret_env_vars();
        for pattern in &args.redact {
            redaction = redaction
                .pattern(pattern)
                .map_err(|e| Usage(format!("--redact {pattern}: {e}")))?;
        }
        let matching = if args.replay_order {
            Matching::InOrder
        } else {
            Matching::Exact
        };
        let options = CassetteOptions::new()
            .redaction(redaction)
            .matching(matching);
        let cassette = if replaying {
            Cassette::replay_with(path, options)?
        } else {
            Cassette::record_with(path, options)
        };
        Ok(Some(Self { cassette }))
    }

    /// The cassette, for the agent and its servers.
    pub fn cassette(&self) -> &Cassette {
        &self.cassette
    }

    /// Whether the run replays (rather than records).
    pub fn is_replaying(&self) -> bool {
        self.cassette.is_replaying()
    }

    /// Replaying: the messages the recorded run was sent.
    pub fn recorded_input(&self) -> Result<Vec<Message>, CassetteError> {
        self.cassette.input()
    }

    /// Recording: keeps the messages the run is sent.
    pub fn set_input(&self, messages: &[Message]) {
        self.cassette.set_input(messages);
    }

    /// After the run, with its reply or its error. Recording: a reply is
    /// saved (a run that saw a failure is not: the file stays as it was),
    /// except a run that paused for approval, which is left to `finish`.
    /// Replaying: the first request that differed from the recording
    /// explains a failed run best, so it comes first; then the reply is
    /// compared with the recorded one. Prints the summary on stderr.
    #[allow(clippy::print_stderr)]
    pub fn finish(&self, reply: anyhow::Result<Reply>) -> anyhow::Result<Reply> {
        let path = self.cassette.path().display();
        if self.is_replaying() {
            self.cassette.check()?;
            let reply = reply?;
            self.cassette.check_outcome(&Outcome::of(&reply))?;
            eprintln!("replayed {path}: {}", self.cassette.summary());
            return Ok(reply);
        }
        let reply = match reply {
            Ok(reply) => reply,
            Err(e) => {
                eprintln!("the run failed: the cassette {path} was not written");
                return Err(e);
            }
        };
        if reply.status == RunStatus::Interrupted {
            eprintln!("the run paused for approval: the cassette {path} was not written");
            return Ok(reply);
        }
        self.cassette.save(&Outcome::of(&reply))?;
        eprintln!("recorded {path}: {}", self.cassette.summary());
        Ok(reply)
    }
}
