//! The id of a JSON-RPC message that cannot be read whole (cut off at a size
//! limit, invalid UTF-8, a lone surrogate, nesting too deep), so the error
//! answer can carry it and the client stops waiting.

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;
use std::fmt;

/// The id of a JSON-RPC object that may be cut off or hold invalid UTF-8
/// elsewhere: the top-level `"id"` when it comes before the damage and is a
/// string or an integer.
pub(crate) fn recover_id(bytes: &[u8]) -> Option<Value> {
    let mut found = None;
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let _ = FindId(&mut found).deserialize(&mut de);
    found.filter(|id| id.is_string() || id.is_i64() || id.is_u64())
}

/// Walks a top-level object's keys, skipping values unread (so invalid UTF-8
/// in them does not matter), until `"id"`.
struct FindId<'a>(&'a mut Option<Value>);

impl<'de> DeserializeSeed<'de> for FindId<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for FindId<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-RPC object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if key == "id" {
                *self.0 = Some(map.next_value::<Value>()?);
                return Ok(());
            }
            map.next_value::<IgnoredAny>()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ids_are_recovered_from_damaged_lines() {
        assert_eq!(
            recover_id(br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"x":"#),
            Some(json!(7))
        );
        assert_eq!(
            recover_id(b"{\"jsonrpc\":\"2.0\",\"params\":{\"x\":\"\xff\"},\"id\":\"a\"}"),
            Some(json!("a"))
        );
        assert_eq!(recover_id(b"{\"id\":\"\xff\"}"), None);
        assert_eq!(recover_id(br#"{"id":{"x":1}}"#), None);
        assert_eq!(recover_id(br#"{"method":"x","params":{"#), None);
        assert_eq!(recover_id(b"not json"), None);
    }
}
