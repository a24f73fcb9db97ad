//! A server's process group: the one way lousho signals it, and waiting
//! until its members have ended (the leader is waited for by its own handle).

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

/// Sends `signal` to the process group `pgid` (a group already gone is not
/// an error; no group: nothing to do).
pub(super) fn signal(pgid: Option<i32>, signal: Signal) {
    if let Some(pgid) = pgid
        && let Err(e) = killpg(Pid::from_raw(pgid), signal)
        && e != nix::errno::Errno::ESRCH
    {
        tracing::debug!(pgid, %signal, error = %e, "could not signal the server's process group");
    }
}

/// Returns once no process of group `pgid` is running. The members are found
/// in `/proc` and each is waited for through a pidfd (readable when it
/// exits), so nothing polls while they run; the group is looked at again
/// only after every member found has ended (one may have started another).
/// Zombies do not count: they are orphans (the `node` under a killed `npx`)
/// waiting for the init process to reap them, which an init that reaps
/// lazily (a container's) may take seconds to do.
#[cfg(target_os = "linux")]
pub(super) async fn members_ended(pgid: Option<i32>) {
    let Some(pgid) = pgid else {
        return;
    };
    loop {
        let Some(members) = running_members(pgid) else {
            // No `/proc` to look in: only the emptiness of the group is known.
            return empty_group(pgid).await;
        };
        if members.is_empty() {
            return;
        }
        let mut waited = false;
        for pid in members {
            if let Some(exit) = super::pidfd::ExitSignal::open(pid) {
                waited |= exit.exited().await.is_ok();
            }
        }
        if !waited {
            // No pidfds (a kernel before 5.3), or every member ended between
            // the look and the open: look again shortly.
            tokio::time::sleep(POLL).await;
        }
    }
}

/// Without pidfds: probes the group (signal 0) until it is empty.
#[cfg(not(target_os = "linux"))]
pub(super) async fn members_ended(pgid: Option<i32>) {
    if let Some(pgid) = pgid {
        empty_group(pgid).await;
    }
}

/// How often a group is probed where its members cannot be waited for.
const POLL: std::time::Duration = std::time::Duration::from_millis(10);

/// Probes group `pgid` with signal 0 until no process is left in it.
async fn empty_group(pgid: i32) {
    while killpg(Pid::from_raw(pgid), None).is_ok() {
        tokio::time::sleep(POLL).await;
    }
}

/// The pids of group `pgid`'s members that are not zombies, from one look at
/// `/proc` (`None` without a readable `/proc`).
#[cfg(target_os = "linux")]
fn running_members(pgid: i32) -> Option<Vec<i32>> {
    let procs = std::fs::read_dir("/proc").ok()?;
    let members = procs
        .flatten()
        .filter_map(|entry| {
            let pid: i32 = entry.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            // `pid (comm) state ppid pgrp …`: the name may hold anything but
            // ends at the last `)`.
            let mut fields = stat.rsplit_once(')')?.1.split_ascii_whitespace();
            let state = fields.next()?;
            let group: i32 = fields.nth(1)?.parse().ok()?;
            (group == pgid && !matches!(state, "Z" | "X")).then_some(pid)
        })
        .collect();
    Some(members)
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    #[tokio::test]
    async fn a_groups_members_are_found_and_waited_for() {
        // A leader of its own group with a child: both members.
        let mut leader = std::process::Command::new("sh")
            .args(["-c", "sleep 30 & wait"])
            .process_group(0)
            .spawn()
            .unwrap();
        let pgid = i32::try_from(leader.id()).unwrap();
        let mut found = Vec::new();
        for _ in 0..1000 {
            found = running_members(pgid).unwrap();
            if found.len() == 2 {
                break;
            }
            tokio::time::sleep(POLL).await;
        }
        assert_eq!(found.len(), 2, "the shell and its sleep: {found:?}");
        assert!(found.contains(&pgid));
        signal(Some(pgid), Signal::SIGKILL);
        leader.wait().unwrap();
        // The leader is reaped, the sleep is gone (or a zombie for init).
        members_ended(Some(pgid)).await;
        assert_eq!(running_members(pgid), Some(Vec::new()));
    }
}
