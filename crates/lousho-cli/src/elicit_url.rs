//! URL-mode elicitation on the terminal: a server asks the user to open a
//! web page (to sign in, to pay). The page, the server and its reason are
//! shown; the browser opens only when the user says yes (`$BROWSER` names
//! the program, see [`crate::browser::open`]), and nothing is accepted
//! without that answer.

use lousho::mcp::ElicitationResponse;
use std::io::{BufRead, Write};

/// Text from a server, without control characters (a server must not
/// drive the terminal).
fn shown(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// Shows `server`'s request to open `url` and asks; opens it on yes.
pub fn ask(
    server: &str,
    message: &str,
    url: &str,
    input: &mut impl BufRead,
    out: &mut impl Write,
) -> ElicitationResponse {
    let _ = writeln!(
        out,
        "\nMCP server `{}` asks you to open a web page: {}\n  {}",
        shown(server),
        shown(message),
        shown(url)
    );
    let _ = write!(out, "Open it in your browser? [y/N] ");
    let _ = out.flush();
    let mut line = String::new();
    match input.read_line(&mut line) {
        Ok(0) | Err(_) => ElicitationResponse::Cancel,
        Ok(_) => match line.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" => {
                if crate::browser::open(url) {
                    let _ = writeln!(out, "opened in your browser");
                } else {
                    let _ = writeln!(out, "no browser to open; open it yourself: {}", shown(url));
                }
                ElicitationResponse::Accept(serde_json::Map::new())
            }
            _ => ElicitationResponse::Decline,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_is_the_default_and_control_characters_are_not_shown() {
        let mut out = Vec::new();
        let answer = ask(
            "s",
            "Sign in\u{1b}[2J",
            "https://x.test/",
            &mut &b"\n"[..],
            &mut out,
        );
        assert_eq!(answer, ElicitationResponse::Decline);
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains("https://x.test/") && !text.contains('\u{1b}'),
            "{text}"
        );
        let answer = ask("s", "m", "u", &mut &b""[..], &mut Vec::new());
        assert_eq!(answer, ElicitationResponse::Cancel);
    }
}
