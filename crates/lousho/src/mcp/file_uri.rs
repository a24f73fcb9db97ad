//! `file://` URIs of local paths, one encoding for the client (roots) and
//! the server (workspace files as resources).

use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};
use std::path::Path;

/// What a URI path keeps encoded (RFC 3986: not a path character).
pub(crate) const PATH: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'`')
    .add(b'{')
    .add(b'}')
    .add(b'[')
    .add(b']')
    .add(b'\\')
    .add(b'^')
    .add(b'|');

/// The `file://` URI of the absolute `path` (`file:///srv/my%20docs`),
/// without a trailing `/`.
// Serving asks only `PATH`.
#[cfg_attr(not(feature = "mcp-client"), allow(dead_code))]
pub(crate) fn file_uri(path: &Path) -> String {
    let text = path.to_string_lossy();
    let text = text.trim_end_matches('/');
    let text = if text.starts_with('/') {
        text.to_owned()
    } else {
        // A Windows path (`C:\x`) becomes `/C:/x`.
        format!("/{}", text.replace('\\', "/"))
    };
    format!("file://{}", utf8_percent_encode(&text, PATH))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_become_encoded_file_uris() {
        assert_eq!(
            file_uri(Path::new("/srv/my docs/")),
            "file:///srv/my%20docs"
        );
        assert_eq!(file_uri(Path::new("/a#b")), "file:///a%23b");
        assert_eq!(file_uri(Path::new("/")), "file:///");
    }
}
