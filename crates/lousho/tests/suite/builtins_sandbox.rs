//! The file tools' sandbox: nothing outside the workspace can be read,
//! listed or searched.

use super::builtins_fs::{err, ok, tree};
use lousho::builtin::{SandboxError, Workspace, fs_tools};
use serde_json::json;
use std::os::unix::fs::symlink;

#[tokio::test]
async fn a_symlink_to_etc_inside_the_workspace_is_refused_by_every_tool() {
    let dir = tree(&[("ok.txt", b"root:inside\n")]);
    symlink("/etc", dir.path().join("etc")).unwrap();
    symlink("/etc/passwd", dir.path().join("passwd")).unwrap();
    let tools = fs_tools(dir.path()).unwrap();

    for (tool, args) in [
        ("read_file", json!({"path": "etc/passwd"})),
        ("read_file", json!({"path": "passwd"})),
        ("list_dir", json!({"path": "etc"})),
        ("glob", json!({"pattern": "*", "path": "etc"})),
        ("grep", json!({"pattern": "root", "path": "etc"})),
        ("grep", json!({"pattern": "root", "path": "passwd"})),
    ] {
        let msg = err(&tools, tool, args.clone()).await;
        assert!(
            msg.contains("symbolic link that points outside the workspace"),
            "{tool} {args}: {msg}"
        );
    }

    // Walking the workspace does not follow the links either.
    let text = ok(&tools, "grep", json!({"pattern": "root"})).await;
    assert_eq!(text, "ok.txt:1:root:inside\n[1 matching line in 1 file]\n");
    let text = ok(&tools, "glob", json!({"pattern": "**/passwd"})).await;
    assert!(text.starts_with("no files match"), "{text}");
    // list_dir shows the links but says they cannot be read.
    let text = ok(&tools, "list_dir", json!({})).await;
    assert!(
        text.contains("link  etc -> (outside the workspace or missing; not readable)"),
        "{text}"
    );
}

#[tokio::test]
async fn parent_escapes_are_refused() {
    let outer = tree(&[
        ("secret.txt", b"top secret\n"),
        ("ws/inside.txt", b"fine\n"),
    ]);
    let tools = fs_tools(outer.path().join("ws")).unwrap();
    for path in [
        "../secret.txt",
        "a/../../secret.txt",
        "..",
        "./../ws/../secret.txt",
    ] {
        let msg = err(&tools, "read_file", json!({"path": path})).await;
        assert!(msg.contains("outside the workspace"), "{path}: {msg}");
        assert!(
            msg.contains("`..` may not climb above the workspace root"),
            "{path}: {msg}"
        );
    }
    let msg = err(&tools, "grep", json!({"pattern": "secret", "path": ".."})).await;
    assert!(msg.contains("outside the workspace"), "{msg}");
    let msg = err(&tools, "glob", json!({"pattern": "*.txt", "path": "../"})).await;
    assert!(msg.contains("outside the workspace"), "{msg}");
    // `..` that stays inside is fine.
    let text = ok(&tools, "read_file", json!({"path": "sub/../inside.txt"})).await;
    assert!(text.contains("fine"));
}

#[tokio::test]
async fn absolute_paths_outside_the_workspace_are_refused_and_inside_accepted() {
    let outer = tree(&[
        ("secret.txt", b"top secret\n"),
        ("ws/inside.txt", b"fine\n"),
    ]);
    let ws = outer.path().join("ws");
    let tools = fs_tools(&ws).unwrap();
    for path in [
        "/etc/passwd",
        outer.path().join("secret.txt").to_str().unwrap(),
        "/",
    ] {
        let msg = err(&tools, "read_file", json!({"path": path})).await;
        assert!(
            msg.contains("is outside the workspace; only paths inside"),
            "{path}: {msg}"
        );
    }
    let msg = err(&tools, "list_dir", json!({"path": "/etc"})).await;
    assert!(msg.contains("outside the workspace"), "{msg}");

    let inside = ws.canonicalize().unwrap().join("inside.txt");
    let text = ok(
        &tools,
        "read_file",
        json!({"path": inside.to_str().unwrap()}),
    )
    .await;
    assert!(text.contains("fine"));
}

#[tokio::test]
async fn symlinks_that_stay_inside_are_followed_when_named() {
    let dir = tree(&[("real/data.txt", b"payload\n")]);
    symlink("real", dir.path().join("alias")).unwrap();
    symlink("real/data.txt", dir.path().join("data-link.txt")).unwrap();
    let tools = fs_tools(dir.path()).unwrap();
    assert!(
        ok(&tools, "read_file", json!({"path": "alias/data.txt"}))
            .await
            .contains("payload")
    );
    assert!(
        ok(&tools, "read_file", json!({"path": "data-link.txt"}))
            .await
            .contains("payload")
    );
    let text = ok(&tools, "list_dir", json!({})).await;
    assert!(text.contains("link  alias -> real/"), "{text}");
    assert!(
        text.contains("link  data-link.txt -> real/data.txt"),
        "{text}"
    );
}

#[tokio::test]
async fn a_symlinked_workspace_root_still_confines_paths() {
    let outer = tree(&[("ws/inside.txt", b"fine\n"), ("secret.txt", b"no\n")]);
    let link = outer.path().join("ws-link");
    symlink(outer.path().join("ws"), &link).unwrap();
    let tools = fs_tools(&link).unwrap();
    assert!(
        ok(&tools, "read_file", json!({"path": "inside.txt"}))
            .await
            .contains("fine")
    );
    // The root given through the link works as an absolute path too.
    let via_link = link.join("inside.txt");
    assert!(
        ok(
            &tools,
            "read_file",
            json!({"path": via_link.to_str().unwrap()})
        )
        .await
        .contains("fine")
    );
    let msg = err(&tools, "read_file", json!({"path": "../secret.txt"})).await;
    assert!(msg.contains("outside the workspace"), "{msg}");
}

#[test]
fn resolve_returns_typed_errors() {
    let dir = tree(&[("a.txt", b"")]);
    symlink("/etc", dir.path().join("etc")).unwrap();
    let ws = Workspace::new(dir.path()).unwrap();
    assert!(matches!(
        ws.resolve("../x"),
        Err(SandboxError::ParentEscape { .. })
    ));
    assert!(matches!(
        ws.resolve("/etc"),
        Err(SandboxError::OutsideAbsolute { .. })
    ));
    assert!(matches!(
        ws.resolve("etc/hosts"),
        Err(SandboxError::SymlinkOutside { .. })
    ));
    assert!(matches!(
        ws.resolve("missing"),
        Err(SandboxError::NotFound { .. })
    ));
    assert!(matches!(
        ws.resolve("a\0b"),
        Err(SandboxError::Invalid { .. })
    ));
    assert_eq!(ws.resolve("a.txt").unwrap(), ws.root().join("a.txt"));
    assert_eq!(ws.resolve("").unwrap(), ws.root());
}
