//! Reading an introspection answer (RFC 7662 §2.2): what it must say for
//! the token to pass here, and what it grants.

use serde_json::Value;
use std::collections::BTreeSet;

/// What an active introspection answer grants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Granted {
    pub(super) subject: String,
    pub(super) scopes: BTreeSet<String>,
    pub(super) exp: Option<u64>,
    nbf: Option<u64>,
}

impl Granted {
    /// Refused if, `now`, the token has expired or is not valid yet, give
    /// or take `skew` seconds.
    pub(super) fn live(&self, now: u64, skew: u64) -> Result<(), &'static str> {
        if self.exp.is_some_and(|exp| exp.saturating_add(skew) < now) {
            return Err("the token has expired");
        }
        if self.nbf.is_some_and(|nbf| nbf > now.saturating_add(skew)) {
            return Err("the token is not valid yet (nbf)");
        }
        Ok(())
    }
}

/// An introspection `answer` read against this issuer and audience (the
/// time is checked apart, by [`Granted::live`], on every use).
pub(super) fn read_answer(
    answer: &Value,
    issuer: &str,
    audience: &str,
) -> Result<Granted, &'static str> {
    const MALFORMED: &str = "the introspection answer is malformed";
    if answer.get("active") != Some(&Value::Bool(true)) {
        return Err("the token is not active (introspection)");
    }
    match answer.get("iss") {
        None | Some(Value::Null) => {}
        Some(Value::String(iss)) if iss == issuer => {}
        Some(Value::String(_)) => return Err("the token is from another issuer (iss)"),
        Some(_) => return Err(MALFORMED),
    }
    let for_us = match answer.get("aud") {
        Some(Value::String(aud)) => aud == audience,
        Some(Value::Array(auds)) => auds.iter().any(|a| a.as_str() == Some(audience)),
        None | Some(Value::Null) => return Err("the introspection answer names no audience (aud)"),
        Some(_) => return Err(MALFORMED),
    };
    if !for_us {
        return Err("the token was not issued for this server (aud)");
    }
    if let Some(kind) = answer.get("token_type").and_then(Value::as_str)
        && !kind.eq_ignore_ascii_case("bearer")
        && kind != "access_token"
    {
        return Err("the token is not a bearer access token (token_type)");
    }
    if answer.get("cnf").is_some_and(|c| !c.is_null()) {
        return Err("the token is bound to a key (cnf); this server accepts bearer tokens only");
    }
    let named = |key: &str| {
        answer
            .get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    let subject = named("sub")
        .or_else(|| named("client_id"))
        .ok_or("the introspection answer names no subject (sub or client_id)")?;
    let scopes = match answer.get("scope") {
        None | Some(Value::Null) => BTreeSet::new(),
        Some(Value::String(s)) => s.split_ascii_whitespace().map(str::to_owned).collect(),
        Some(_) => return Err(MALFORMED),
    };
    let time = |key: &str| match answer.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .or_else(|| v.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64))
            .map(Some)
            .ok_or(MALFORMED),
    };
    Ok(Granted {
        subject: subject.to_owned(),
        scopes,
        exp: time("exp")?,
        nbf: time("nbf")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const ISS: &str = "https://idp.example";
    const AUD: &str = "https://agents.example/mcp";
    const NOW: u64 = 1_800_000_000;
    const SKEW: u64 = 30;

    /// An answer the issuer gives for a good token, with `change` applied.
    fn answer(change: impl FnOnce(&mut serde_json::Map<String, Value>)) -> Value {
        let mut a = json!({
            "active": true, "iss": ISS, "aud": AUD, "sub": "alice", "client_id": "app",
            "scope": "mcp:use mcp:research", "exp": NOW + 300, "iat": NOW, "token_type": "Bearer",
        });
        change(a.as_object_mut().unwrap());
        a
    }

    fn verdict(answer: &Value) -> Result<Granted, &'static str> {
        let granted = read_answer(answer, ISS, AUD)?;
        granted.live(NOW, SKEW)?;
        Ok(granted)
    }

    #[test]
    fn an_active_answer_for_this_audience_names_the_caller_and_scopes() {
        let g = verdict(&answer(|_| {})).unwrap();
        assert_eq!(g.subject, "alice");
        assert_eq!(
            g.scopes.into_iter().collect::<Vec<_>>(),
            ["mcp:research", "mcp:use"]
        );
    }

    #[test]
    fn the_claim_checks_refuse_what_they_should() {
        // (case, change, the refusal's words)
        type Change = fn(&mut serde_json::Map<String, Value>);
        let cases: Vec<(&str, Change, &str)> = vec![
            (
                "inactive",
                |a| {
                    a.insert("active".into(), json!(false));
                },
                "not active",
            ),
            (
                "active as a string",
                |a| {
                    a.insert("active".into(), json!("true"));
                },
                "not active",
            ),
            (
                "only active: false",
                |a| {
                    a.clear();
                    a.insert("active".into(), json!(false));
                },
                "not active",
            ),
            (
                "exp past",
                |a| {
                    a.insert("exp".into(), json!(NOW - SKEW - 1));
                },
                "expired",
            ),
            (
                "nbf future",
                |a| {
                    a.insert("nbf".into(), json!(NOW + SKEW + 1));
                },
                "not valid yet",
            ),
            (
                "another issuer",
                |a| {
                    a.insert("iss".into(), json!("https://evil.example"));
                },
                "another issuer",
            ),
            (
                "another audience",
                |a| {
                    a.insert("aud".into(), json!("https://other.example/mcp"));
                },
                "not issued for this server",
            ),
            (
                "audiences without ours",
                |a| {
                    a.insert(
                        "aud".into(),
                        json!(["https://x.example", "https://y.example"]),
                    );
                },
                "not issued for this server",
            ),
            (
                "no audience",
                |a| {
                    a.remove("aud");
                },
                "no audience",
            ),
            (
                "no sub, no client_id",
                |a| {
                    a.remove("sub");
                    a.remove("client_id");
                },
                "no subject",
            ),
            (
                "empty sub, no client_id",
                |a| {
                    a.insert("sub".into(), json!(""));
                    a.remove("client_id");
                },
                "no subject",
            ),
            (
                "a refresh token",
                |a| {
                    a.insert("token_type".into(), json!("refresh_token"));
                },
                "not a bearer",
            ),
            (
                "DPoP-bound",
                |a| {
                    a.insert("cnf".into(), json!({"jkt": "x"}));
                },
                "bound to a key",
            ),
            (
                "scope not a string",
                |a| {
                    a.insert("scope".into(), json!(["a"]));
                },
                "malformed",
            ),
            (
                "exp not a number",
                |a| {
                    a.insert("exp".into(), json!("soon"));
                },
                "malformed",
            ),
        ];
        for (case, change, words) in cases {
            let refused = verdict(&answer(change)).expect_err(case);
            assert!(refused.contains(words), "{case}: {refused}");
        }
    }

    #[test]
    fn lenient_where_rfc_7662_is() {
        // (case, change, the subject named)
        type Change = fn(&mut serde_json::Map<String, Value>);
        let cases: Vec<(&str, Change, &str)> = vec![
            (
                "aud array with ours",
                |a| {
                    a.insert("aud".into(), json!(["https://x.example", AUD]));
                },
                "alice",
            ),
            (
                "no sub: client_id names it",
                |a| {
                    a.remove("sub");
                },
                "app",
            ),
            (
                "no iss",
                |a| {
                    a.remove("iss");
                },
                "alice",
            ),
            (
                "no exp",
                |a| {
                    a.remove("exp");
                },
                "alice",
            ),
            (
                "exp within the skew",
                |a| {
                    a.insert("exp".into(), json!(NOW - SKEW));
                },
                "alice",
            ),
            (
                "nbf within the skew",
                |a| {
                    a.insert("nbf".into(), json!(NOW + SKEW));
                },
                "alice",
            ),
            (
                "no token_type",
                |a| {
                    a.remove("token_type");
                },
                "alice",
            ),
            (
                "no scope",
                |a| {
                    a.remove("scope");
                },
                "alice",
            ),
            (
                "cnf null",
                |a| {
                    a.insert("cnf".into(), Value::Null);
                },
                "alice",
            ),
        ];
        for (case, change, subject) in cases {
            let g = verdict(&answer(change)).unwrap_or_else(|e| panic!("{case}: {e}"));
            assert_eq!(g.subject, subject, "{case}");
        }
    }
}
