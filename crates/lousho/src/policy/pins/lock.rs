//! The lock file: [`Pins`] as sorted, pretty JSON that diffs well and is
//! byte-for-byte the same when nothing changed.

use super::Pins;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// The lock file format's version.
pub const LOCK_FILE_VERSION: u32 = 1;

/// The lock file of the spec at `spec`: next to it, named after it
/// (`agents/support.yaml` → `agents/support.lock.json`).
pub fn lock_path(spec: &Path) -> PathBuf {
    let stem = spec
        .file_stem()
        .map_or_else(|| "lousho".into(), |s| s.to_string_lossy().into_owned());
    spec.with_file_name(format!("{stem}.lock.json"))
}

/// A lock file that could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PinsError {
    /// The file could not be read.
    #[error("cannot read the lock file {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The text is not a lock file (bad JSON, an unknown key, a wrong type).
    #[error(
        "the lock file {}is broken at line {line}, column {column}: {message}; fix it, or delete it and run `lousho pin` to write it again",
        shown(path)
    )]
    Parse {
        /// The file (empty when parsed from text).
        path: PathBuf,
        /// The line (from 1).
        line: usize,
        /// The column (from 1).
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// The file was written in another format version.
    #[error(
        "the lock file {}has format version {found}; this lousho reads version {LOCK_FILE_VERSION}; run `lousho pin` to write it again",
        shown(path)
    )]
    Version {
        /// The file (empty when parsed from text).
        path: PathBuf,
        /// The version in the file.
        found: u64,
    },
    /// The file could not be written.
    #[error("cannot write the lock file {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

fn shown(path: &Path) -> String {
    if path.as_os_str().is_empty() {
        String::new()
    } else {
        format!("{} ", path.display())
    }
}

impl PinsError {
    fn at_path(self, file: &Path) -> Self {
        match self {
            PinsError::Parse {
                line,
                column,
                message,
                ..
            } => PinsError::Parse {
                path: file.to_path_buf(),
                line,
                column,
                message,
            },
            PinsError::Version { found, .. } => PinsError::Version {
                path: file.to_path_buf(),
                found,
            },
            other => other,
        }
    }
}

impl Pins {
    /// Reads pins from a lock file's text. Errors say where (line and
    /// column) and what is wrong.
    pub fn from_json_str(text: &str) -> Result<Self, PinsError> {
        match serde_json::from_str::<Pins>(text) {
            Ok(pins) if pins.version == LOCK_FILE_VERSION => Ok(pins),
            Ok(pins) => Err(PinsError::Version {
                path: PathBuf::new(),
                found: u64::from(pins.version),
            }),
            Err(e) => {
                // Another version may have another shape: say so first.
                let version = serde_json::from_str::<Value>(text)
                    .ok()
                    .and_then(|v| v.get("version").and_then(Value::as_u64));
                if let Some(found) = version
                    && found != u64::from(LOCK_FILE_VERSION)
                {
                    return Err(PinsError::Version {
                        path: PathBuf::new(),
                        found,
                    });
                }
                Err(PinsError::Parse {
                    path: PathBuf::new(),
                    line: e.line(),
                    column: e.column(),
                    message: strip_position(&e.to_string()),
                })
            }
        }
    }

    /// The lock file's text: pretty JSON, keys sorted at every depth, a
    /// final newline. The same pins always give the same bytes.
    pub fn to_json_string(&self) -> String {
        let value = serde_json::to_value(self).unwrap_or(Value::Null);
        let mut text = serde_json::to_string_pretty(&sorted(value)).unwrap_or_default();
        text.push('\n');
        text
    }

    /// Reads the lock file at `path`.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, PinsError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| PinsError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Self::from_json_str(&text).map_err(|e| e.at_path(path))
    }

    /// Writes the lock file at `path` (through a temporary file and a
    /// rename, so a reader never sees half a file). Leaves the file alone
    /// when it already holds these pins; returns whether it wrote.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<bool, PinsError> {
        let path = path.as_ref();
        let text = self.to_json_string();
        if std::fs::read_to_string(path).is_ok_and(|old| old == text) {
            return Ok(false);
        }
        let write = |source| PinsError::Write {
            path: path.to_path_buf(),
            source,
        };
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        std::fs::write(&tmp, &text).map_err(write)?;
        std::fs::rename(&tmp, path).map_err(write)?;
        Ok(true)
    }
}

/// `value` with object keys sorted at every depth (whatever map serde_json
/// was built with).
fn sorted(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k, sorted(v)))
                    .collect::<Map<_, _>>(),
            )
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sorted).collect()),
        other => other,
    }
}

/// serde_json's message without its ` at line L column C` tail (the error
/// carries them as fields).
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_owned(),
        None => message.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{PinnedTool, ServerPins};
    use serde_json::json;

    fn sample() -> Pins {
        let mut read = PinnedTool::new(
            "ab".repeat(32),
            json!({"type": "object", "properties": {"z": {}, "a": {}}}),
        );
        read.description = Some("Reads".into());
        read.annotations = Some(json!({"readOnlyHint": true}));
        Pins::new()
            .server("zeta", ServerPins::new().tool("read", read.clone()))
            .server(
                "alpha",
                ServerPins::new().tool("b", read.clone()).tool("a", read),
            )
    }

    #[test]
    fn round_trips_sorted_and_byte_stable() {
        let pins = sample();
        let text = pins.to_json_string();
        assert!(text.ends_with("}\n"));
        assert!(text.find("\"alpha\"").unwrap() < text.find("\"zeta\"").unwrap());
        assert!(text.find("\"a\": {}").unwrap() < text.find("\"z\": {}").unwrap());
        let back = Pins::from_json_str(&text).unwrap();
        assert_eq!(back, pins);
        assert_eq!(back.to_json_string(), text, "byte-stable");

        let dir = std::env::temp_dir().join(format!("lousho-pins-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = lock_path(&dir.join("agent.yaml"));
        assert_eq!(path, dir.join("agent.lock.json"));
        assert!(pins.save(&path).unwrap(), "first write");
        assert!(!pins.save(&path).unwrap(), "nothing changed: not written");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
        assert_eq!(Pins::load(&path).unwrap(), pins);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_broken_file_says_where_and_what() {
        let text = sample()
            .to_json_string()
            .replacen("\"Reads\"", "\"Reads\",,", 1);
        let e = Pins::from_json_str(&text).unwrap_err();
        let PinsError::Parse { line, column, .. } = &e else {
            panic!("{e:?}")
        };
        assert!(*line > 1 && *column > 1);
        let shown = e.to_string();
        assert!(
            shown.contains(&format!("line {line}, column {column}"))
                && shown.contains("lousho pin"),
            "{shown}"
        );
        let e = Pins::from_json_str(r#"{"version": 1, "servers": {"s": {"tools": {}, "x": 1}}}"#)
            .unwrap_err();
        assert!(e.to_string().contains("unknown field `x`"), "{e}");
        let e = Pins::from_json_str(r#"{"version": 7, "servers": {"s": []}}"#).unwrap_err();
        assert!(matches!(e, PinsError::Version { found: 7, .. }), "{e}");
        let e = Pins::load("/nonexistent/agent.lock.json").unwrap_err();
        assert!(
            e.to_string().contains("/nonexistent/agent.lock.json"),
            "{e}"
        );
    }
}
