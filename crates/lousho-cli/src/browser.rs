//! Opening the sign-in URL in the operator's browser, when there is one.

use std::process::{Command, Stdio};

/// Starts `$BROWSER`, else the desktop's opener (`open` on macOS; `xdg-open`
/// on Linux when a display is set). True when a program was started; the URL
/// is always printed as well, so failing here is harmless.
pub fn open(url: &str) -> bool {
    let program = match std::env::var("BROWSER") {
        Ok(b) if !b.trim().is_empty() => b,
        _ if cfg!(target_os = "macos") => "open".to_owned(),
        _ if cfg!(target_os = "linux")
            && (std::env::var_os("DISPLAY").is_some()
                || std::env::var_os("WAYLAND_DISPLAY").is_some()) =>
        {
            "xdg-open".to_owned()
        }
        _ => return false,
    };
    let child = Command::new(program)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    match child {
        Ok(mut child) => {
            // Reap it when it exits, without waiting here.
            std::thread::spawn(move || child.wait());
            true
        }
        Err(_) => false,
    }
}
