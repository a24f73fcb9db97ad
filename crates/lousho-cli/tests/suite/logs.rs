//! Logs on stderr: filters from -v, LOUSHO_LOG and RUST_LOG; colours only on
//! a terminal; rmcp's own lines below lousho's default level; LOUSHO_LOG kept
//! from child servers unless their entry asks for it.

use super::common::{example, lousho, spec_file, stderr};

fn tools_with_env(spec: &str, extra: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut cmd = lousho();
    cmd.env_remove("LOUSHO_LOG")
        .env_remove("RUST_LOG")
        .env_remove("NO_COLOR");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.args(extra).args(["tools", spec]).output().unwrap()
}

const DEBUG_LINE: &str = " DEBUG ";

/// A spec without servers whose permission rule logs at DEBUG (globset).
const QUIET_SPEC: &str = "model: test\ntools: [read_file]\npermissions: {rules: [{tool: \"read_*\", decision: allow}]}\n";

/// Whether `text` holds an ANSI colour (SGR) sequence such as `ESC[2m`.
fn has_colour(text: &str) -> bool {
    text.split('\u{1b}').skip(1).any(|rest| {
        let Some(params) = rest.strip_prefix('[') else {
            return false;
        };
        let end = params.find(|c: char| !(c.is_ascii_digit() || c == ';'));
        end.is_some_and(|i| i > 0 && params[i..].starts_with('m'))
    })
}

#[test]
fn rust_log_is_honoured_and_lousho_log_wins_over_it() {
    let (_dir, spec) = spec_file("l.yaml", QUIET_SPEC);
    let out = tools_with_env(&spec, &[], &[("RUST_LOG", "debug")]);
    assert!(stderr(&out).contains(DEBUG_LINE), "{}", stderr(&out));
    let out = tools_with_env(
        &spec,
        &[],
        &[("RUST_LOG", "debug"), ("LOUSHO_LOG", "error")],
    );
    assert!(!stderr(&out).contains(DEBUG_LINE), "{}", stderr(&out));
    // -v on the command line wins over the environment.
    let out = tools_with_env(&spec, &["-vv"], &[("LOUSHO_LOG", "error")]);
    assert!(stderr(&out).contains(DEBUG_LINE), "{}", stderr(&out));
}

#[test]
fn a_bad_filter_is_reported_and_the_default_used() {
    let (_dir, spec) = spec_file("l.yaml", "model: test\n");
    let out = tools_with_env(&spec, &[], &[("LOUSHO_LOG", "lousho=loud")]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("LOUSHO_LOG"), "{}", stderr(&out));
}

/// A spec whose only server refuses connections (port 1 on loopback).
const DEAD_HTTP: &str =
    "model: test\ntools: [day_name]\nmcpServers:\n  web: {url: \"http://127.0.0.1:1/mcp\"}\n";

#[test]
fn rmcp_lines_sit_below_the_default_level_and_crates_are_named_at_vv() {
    let (_dir, spec) = spec_file("dead.yaml", DEAD_HTTP);
    // Default: lousho's own status line with the cause; no raw rmcp dump.
    let out = tools_with_env(&spec, &[], &[]);
    let se = stderr(&out);
    assert!(se.contains("mcp: web failed"), "{se}");
    assert!(se.to_lowercase().contains("connection refused"), "{se}");
    assert!(!se.contains("worker quit"), "{se}");
    assert!(!se.contains("reqwest::Error"), "{se}");
    assert!(!se.contains("ERROR"), "{se}");
    // -v: rmcp's own lines appear, without crate names.
    let se = stderr(&tools_with_env(&spec, &["-v"], &[]));
    assert!(se.contains("worker quit"), "{se}");
    assert!(!se.contains("rmcp::"), "{se}");
    // -vv: every line names its crate.
    let se = stderr(&tools_with_env(&spec, &["-vv"], &[]));
    assert!(se.contains("rmcp::"), "{se}");
    assert!(
        se.contains("lousho::") || se.contains("process_wrap::") || se.contains("reqwest::"),
        "{se}"
    );
}

#[test]
fn no_colours_when_stderr_is_not_a_terminal() {
    let out = tools_with_env(&example("quickstart.yaml"), &["-vv"], &[]);
    assert!(stderr(&out).contains(DEBUG_LINE), "{}", stderr(&out));
    assert!(!has_colour(&stderr(&out)), "{}", stderr(&out));
}

/// Runs `lousho -v tools SPEC` on a pseudo-terminal (through `script`), and
/// returns what the terminal showed.
fn on_a_terminal(spec: &str, no_color: Option<&str>) -> Option<String> {
    let script = ["/usr/bin/script", "/bin/script"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())?;
    let command = format!(
        "'{}' -vv tools '{}'",
        env!("CARGO_BIN_EXE_lousho"),
        spec.replace('\'', "")
    );
    let mut cmd = std::process::Command::new(script);
    cmd.args(["-qec", &command, "/dev/null"])
        .env_remove("LOUSHO_LOG")
        .env_remove("NO_COLOR")
        .stdin(std::process::Stdio::null());
    if let Some(v) = no_color {
        cmd.env("NO_COLOR", v);
    }
    let out = cmd.output().unwrap();
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn colours_on_a_terminal_unless_no_color_is_set() {
    let spec = example("quickstart.yaml");
    let Some(plain) = on_a_terminal(&spec, None) else {
        assert!(
            std::env::var_os("CI").is_none(),
            "`script` is needed under CI"
        );
        return;
    };
    assert!(plain.contains("DEBUG"), "{plain}");
    assert!(has_colour(&plain), "colours on a terminal: {plain:?}");
    let no_color = on_a_terminal(&spec, Some("1")).unwrap();
    assert!(no_color.contains("DEBUG"), "{no_color}");
    assert!(!has_colour(&no_color), "NO_COLOR: {no_color:?}");
}

/// A stdio server (a shell that records its LOUSHO_LOG, then becomes
/// `lousho mcp files.yaml`).
fn recording_server(record: &std::path::Path, entry_env: &str) -> String {
    format!(
        "model: test\nmcpServers:\n  files:\n    command: /bin/sh\n    args: [-c, 'env | grep ^LOUSHO_LOG= > {}; exec \"${{LOUSHO_BIN}}\" mcp {}']\n{entry_env}",
        record.display(),
        example("files.yaml"),
    )
}

#[test]
fn lousho_log_reaches_a_child_server_only_when_its_entry_asks() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("seen");
    let spec = dir.path().join("s.yaml");
    std::fs::write(&spec, recording_server(&record, "")).unwrap();
    let spec = spec.to_string_lossy().into_owned();
    let out = tools_with_env(&spec, &[], &[("LOUSHO_LOG", "warn,lousho=info")]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(&record).unwrap().trim(),
        "LOUSHO_LOG="
    );

    let asks = "    env: { LOUSHO_LOG: debug }\n";
    let spec2 = dir.path().join("s2.yaml");
    std::fs::write(&spec2, recording_server(&record, asks)).unwrap();
    let out = tools_with_env(&spec2.to_string_lossy(), &[], &[("LOUSHO_LOG", "warn")]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(&record).unwrap().trim(),
        "LOUSHO_LOG=debug"
    );
}
