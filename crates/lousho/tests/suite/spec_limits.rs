//! Spec files a hostile or careless author can write: oversized files,
//! devices, nesting that would stall the YAML parser, nested defaults.

use lousho::spec::{DEFAULT_MAX_SPEC_BYTES, SpecErrorKind, SpecLoader};
use std::time::{Duration, Instant};

/// Far above what the checks take, far below what the parser took (30 s).
const GENEROUS: Duration = Duration::from_secs(10);

fn loader() -> SpecLoader {
    SpecLoader::new().without_env()
}

#[test]
fn a_file_over_the_size_limit_is_refused_unparsed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.yaml");
    let prompt = "x".repeat(DEFAULT_MAX_SPEC_BYTES as usize);
    std::fs::write(&path, format!("model: test\nprompt: {prompt}\n")).unwrap();
    let e = loader().load(&path).unwrap_err();
    assert_eq!(
        *e.kind,
        SpecErrorKind::TooLarge {
            limit: DEFAULT_MAX_SPEC_BYTES
        }
    );
    assert!(e.to_string().contains("larger than 1048576 bytes"), "{e}");
    assert!(e.to_string().contains("LOUSHO_SPEC_MAX_BYTES"), "{e}");

    // The limit is the loader's to set, both ways.
    let small = dir.path().join("small.yaml");
    std::fs::write(&small, "model: test\nprompt: hello there\n").unwrap();
    let e = loader().max_file_bytes(10).load(&small).unwrap_err();
    assert_eq!(*e.kind, SpecErrorKind::TooLarge { limit: 10 });
    let e = loader()
        .max_file_bytes(10)
        .parse("model: test\nprompt: hello there\n", &small);
    assert!(matches!(
        *e.unwrap_err().kind,
        SpecErrorKind::TooLarge { .. }
    ));
    let spec = loader()
        .max_file_bytes(2 * DEFAULT_MAX_SPEC_BYTES)
        .load(&path)
        .unwrap();
    assert_eq!(spec.prompt.map(|p| p.len()), Some(prompt.len()));
}

#[cfg(unix)]
#[test]
fn devices_and_directories_are_refused_unread() {
    let started = Instant::now();
    let e = loader().load("/dev/zero").unwrap_err();
    assert_eq!(*e.kind, SpecErrorKind::NotAFile("a device".into()));
    assert!(e.to_string().contains("it is a device"), "{e}");
    let dir = tempfile::tempdir().unwrap();
    let e = loader().load(dir.path()).unwrap_err();
    assert_eq!(*e.kind, SpecErrorKind::NotAFile("a directory".into()));
    assert!(started.elapsed() < GENEROUS);

    // A `.mcp.json` is held to the same rules.
    let spec = dir.path().join("agent.yaml");
    std::fs::write(&spec, "model: test\nmcpServers: /dev/zero\n").unwrap();
    let e = loader().load(&spec).unwrap_err();
    assert!(e.to_string().contains("it is a device"), "{e}");
}

#[test]
fn deeply_nested_flow_collections_are_refused_before_parsing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("deep.yaml");
    // 200 KB of nesting: 30 s in the YAML parser before the check.
    let deep = format!(
        "model: test\ntools:\n  - {}{}\n",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    std::fs::write(&path, &deep).unwrap();
    let started = Instant::now();
    let e = loader().load(&path).unwrap_err();
    assert!(started.elapsed() < GENEROUS, "{:?}", started.elapsed());
    assert_eq!(*e.kind, SpecErrorKind::TooDeep { limit: 64 });
    assert_eq!(e.line, Some(3));
    assert!(e.to_string().contains("nest more than 64 levels"), "{e}");

    for hostile in [
        format!("a: {}\n", "{a: ".repeat(60_000)),
        format!("a: {}\n", "&x [ ".repeat(60_000)),
        format!("a: {}\n", "[ \"]\" ".repeat(30_000)),
    ] {
        let started = Instant::now();
        let e = loader().parse(&hostile, &path).unwrap_err();
        assert!(started.elapsed() < GENEROUS, "{:?}", started.elapsed());
        assert!(matches!(*e.kind, SpecErrorKind::TooDeep { .. }), "{e}");
    }
}

#[test]
fn brackets_in_prompts_and_strings_do_not_count_as_nesting() {
    let code = "fn f() { let a = [[[[[[[[[[0]]]]]]]]]]; }\n".repeat(20);
    let text = format!(
        "model: test\nprompt: |\n{}\ndescription: \"{}\"\ntools: [read_file, glob]\n",
        code.lines().map(|l| format!("  {l}\n")).collect::<String>(),
        "[".repeat(200),
    );
    let spec = loader().parse(&text, "agent.yaml").unwrap();
    assert!(spec.prompt.unwrap().contains("[[[[[[[[[[0]]]]]]]]]]"));
    assert_eq!(spec.tools, ["read_file", "glob"]);
}

#[test]
fn nested_defaults_expand_in_spec_files() {
    let text = "model: test\nprompt: \"${A:-${B:-hello}} ${C:-${D}}\"\n";
    let spec = loader()
        .var("D", "world")
        .parse(text, "agent.yaml")
        .unwrap();
    assert_eq!(spec.prompt.as_deref(), Some("hello world"));

    let e = loader().parse(text, "agent.yaml").unwrap_err();
    assert!(matches!(*e.kind, SpecErrorKind::UnsetVariable(_)), "{e}");
    assert!(e.to_string().contains("`D`"), "{e}");

    let deep = format!(
        "model: test\nprompt: \"{}x{}\"\n",
        "${A:-".repeat(9),
        "}".repeat(9)
    );
    let e = loader().parse(&deep, "agent.yaml").unwrap_err();
    assert!(e.to_string().contains("more than 8 levels deep"), "{e}");
    assert_eq!(e.line, Some(2));
}

/// Loads `path` on another thread; `None` when it has not returned within
/// [`GENEROUS`] (it blocks).
#[cfg(unix)]
fn load_or_block(
    path: std::path::PathBuf,
) -> Option<Result<lousho::spec::AgentSpec, lousho::spec::SpecError>> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(loader().load(&path));
    });
    rx.recv_timeout(GENEROUS).ok()
}

#[cfg(unix)]
#[test]
fn a_named_pipe_is_refused_without_waiting_for_a_writer() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("agent.yaml");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let e = load_or_block(fifo.clone())
        .expect("loading a named pipe nobody writes returned")
        .unwrap_err();
    assert_eq!(
        *e.kind,
        SpecErrorKind::NotAFile("a named pipe (FIFO)".into())
    );
    let message = e.to_string();
    assert!(message.contains(&fifo.display().to_string()), "{message}");
    assert!(message.contains("it is a named pipe"), "{message}");
}

#[cfg(target_os = "linux")]
#[test]
fn a_pipe_being_written_is_read_as_a_shell_substitution_is() {
    use std::io::Write;
    use std::os::fd::AsRawFd;
    let (reader, mut writer) = std::io::pipe().unwrap();
    writer
        .write_all(b"model: test\nprompt: from a pipe\n")
        .unwrap();
    drop(writer);
    // What `lousho run <(cat agent.yaml)` hands over.
    let path = std::path::PathBuf::from(format!("/proc/self/fd/{}", reader.as_raw_fd()));
    let spec = load_or_block(path)
        .expect("reading a written pipe returned")
        .unwrap();
    assert_eq!(spec.prompt.as_deref(), Some("from a pipe"));
    drop(reader);
}
