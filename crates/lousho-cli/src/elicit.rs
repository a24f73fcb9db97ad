//! Servers asking the user (`elicitation/create`), answered on the terminal:
//! the server's message, then one line per field in the server's order
//! (Enter keeps the default; an answer is checked against the field's
//! schema — type, enum, `format` such as date / email / uri, `minimum` /
//! `maximum`, `pattern`, lengths — and asked
//! again when it does not fit), then send / decline / cancel; a page to
//! open (URL mode) is shown and opened on a yes (see [`crate::elicit_url`]). Without a terminal on stdin no handler is
//! set, so servers are told this client cannot answer.

use lousho::mcp::ConnectOptions;
use lousho::mcp::{ElicitationHandler, ElicitationKind, ElicitationRequest, ElicitationResponse};
use serde_json::{Map, Value};
use std::io::{BufRead, IsTerminal, Write};

/// How often a field is asked again after an answer that does not fit.
const TRIES: usize = 3;

/// Adds the terminal handler when stdin is a terminal.
pub fn install(options: ConnectOptions) -> ConnectOptions {
    if !std::io::stdin().is_terminal() {
        return options;
    }
    options.elicitation(Terminal)
}

/// The terminal's answers: forms field by field, URLs after a yes.
struct Terminal;

#[async_trait::async_trait]
impl ElicitationHandler for Terminal {
    async fn elicit(&self, request: ElicitationRequest) -> ElicitationResponse {
        let _turn = crate::approve::TERMINAL.lock().await;
        let _hold = crate::progress::hold_for_prompt();
        let answer = tokio::task::spawn_blocking(move || {
            let (input, out) = (&mut std::io::stdin().lock(), &mut std::io::stderr());
            match &request.kind {
                ElicitationKind::Url { url, .. } => {
                    crate::elicit_url::ask(&request.server, &request.message, url, input, out)
                }
                _ => ask(&request, input, out),
            }
        })
        .await;
        // A failed prompt task cancels (the server sees no decision).
        answer.unwrap_or(ElicitationResponse::Cancel)
    }

    fn handles_urls(&self) -> bool {
        true
    }
}

/// One field of the form.
struct Field<'a> {
    name: &'a str,
    schema: &'a Value,
    required: bool,
}

/// The keywords a field's answer is checked against, as the hint shows
/// them (`format: date`, `at least 1`, `matching ^[A-Z]+$`).
fn constraints(schema: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(format) = schema.get("format").and_then(Value::as_str) {
        out.push(match format {
            "date" => "a date, YYYY-MM-DD".to_owned(),
            "date-time" => "a date and time, e.g. 2026-12-01T18:00:00Z".to_owned(),
            "email" => "an email address".to_owned(),
            "uri" => "a URI, e.g. https://example.com".to_owned(),
            other => format!("format {other}"),
        });
    }
    let num = |k: &str| schema.get(k).filter(|v| v.is_number()).map(plain);
    if let Some(min) = num("minimum") {
        out.push(format!("at least {min}"));
    }
    if let Some(min) = num("exclusiveMinimum") {
        out.push(format!("more than {min}"));
    }
    if let Some(max) = num("maximum") {
        out.push(format!("at most {max}"));
    }
    if let Some(max) = num("exclusiveMaximum") {
        out.push(format!("less than {max}"));
    }
    if let Some(n) = num("minLength") {
        out.push(format!("at least {n} characters"));
    }
    if let Some(n) = num("maxLength") {
        out.push(format!("at most {n} characters"));
    }
    if let Some(pattern) = schema.get("pattern").and_then(Value::as_str) {
        out.push(format!("matching {pattern}"));
    }
    out
}

impl Field<'_> {
    fn kind(&self) -> &str {
        self.schema
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("string")
    }

    /// The allowed values of an enum (`enum`, or titled `oneOf` consts).
    fn choices(&self) -> Vec<Value> {
        if let Some(values) = self.schema.get("enum").and_then(Value::as_array) {
            return values.clone();
        }
        self.schema
            .get("oneOf")
            .or_else(|| self.schema.get("anyOf"))
            .and_then(Value::as_array)
            .map(|options| {
                options
                    .iter()
                    .filter_map(|o| o.get("const").cloned())
                    .collect()
            })
            .unwrap_or_default()
    }

    fn prompt(&self, choices: &[Value]) -> String {
        let mut prompt = format!("  {}", self.name);
        let about = self
            .schema
            .get("description")
            .or_else(|| self.schema.get("title"))
            .and_then(Value::as_str);
        if let Some(about) = about {
            prompt.push_str(&format!(" — {about}"));
        }
        let mut hints = vec![self.kind().to_owned()];
        if !choices.is_empty() {
            let list: Vec<String> = choices.iter().map(plain).collect();
            hints.push(format!("one of {}", list.join(" | ")));
        }
        hints.extend(constraints(self.schema));
        if let Some(default) = self.schema.get("default") {
            hints.push(format!("Enter for {}", plain(default)));
        } else if !self.required {
            hints.push("Enter to skip".into());
        }
        prompt.push_str(&format!(" ({}): ", hints.join(", ")));
        prompt
    }

    /// The typed value of an answer, or why it does not fit.
    fn parse(&self, text: &str, choices: &[Value]) -> Result<Value, String> {
        let value = match self.kind() {
            "integer" => text
                .parse::<i64>()
                .map(Value::from)
                .map_err(|_| "a whole number, please".to_owned())?,
            "number" => text
                .parse::<f64>()
                .ok()
                .and_then(|n| serde_json::Number::from_f64(n).map(Value::Number))
                .ok_or_else(|| "a number, please".to_owned())?,
            "boolean" => match text.to_ascii_lowercase().as_str() {
                "y" | "yes" | "true" => Value::Bool(true),
                "n" | "no" | "false" => Value::Bool(false),
                _ => return Err("yes or no, please".into()),
            },
            _ => Value::String(text.to_owned()),
        };
        if !choices.is_empty() && !choices.contains(&value) {
            let list: Vec<String> = choices.iter().map(plain).collect();
            return Err(format!("one of {}, please", list.join(" | ")));
        }
        self.check(&value)?;
        Ok(value)
    }

    /// The answer against the field's constraints (the keywords
    /// [`constraints`] lists); when it breaks one, all of them as the hint.
    fn check(&self, value: &Value) -> Result<(), String> {
        if fits(self.schema, value) {
            return Ok(());
        }
        let wanted = constraints(self.schema);
        Err(if wanted.is_empty() {
            "that does not fit; try again".to_owned()
        } else {
            format!("{}, please", wanted.join(", "))
        })
    }
}

/// Whether `value` keeps `schema`'s constraints. MCP elicitation schemas
/// are flat primitives, so these are all there is: a number's `minimum`,
/// `maximum` and their exclusive forms; a string's `minLength`, `maxLength`
/// (in characters), `pattern` and `format` (`date`, `date-time`, `email`,
/// `uri`; other formats are annotations, as JSON Schema has it). A
/// `pattern` that does not compile checks nothing.
fn fits(schema: &Value, value: &Value) -> bool {
    let bound = |k: &str| schema.get(k).and_then(Value::as_f64);
    if let Some(n) = value.as_f64() {
        let below = bound("minimum").is_some_and(|m| n < m)
            || bound("exclusiveMinimum").is_some_and(|m| n <= m);
        let above = bound("maximum").is_some_and(|m| n > m)
            || bound("exclusiveMaximum").is_some_and(|m| n >= m);
        if below || above {
            return false;
        }
    }
    if let Some(text) = value.as_str() {
        #[allow(clippy::cast_precision_loss, reason = "lengths of typed answers")]
        let len = text.chars().count() as f64;
        if bound("minLength").is_some_and(|m| len < m)
            || bound("maxLength").is_some_and(|m| len > m)
        {
            return false;
        }
        if let Some(pattern) = schema.get("pattern").and_then(Value::as_str)
            && regex::Regex::new(pattern).is_ok_and(|re| !re.is_match(text))
        {
            return false;
        }
        if let Some(format) = schema.get("format").and_then(Value::as_str) {
            return format_fits(format, text);
        }
    }
    true
}

/// Whether `text` is of the JSON Schema `format`: `date` (RFC 3339
/// full-date, `2026-12-01`), `date-time` (RFC 3339 with an offset), `email`
/// (`local@domain.tld`, no spaces), `uri` (absolute, with a scheme).
fn format_fits(format: &str, text: &str) -> bool {
    match format {
        "date" => {
            let b = text.as_bytes();
            b.len() == 10
                && b[4] == b'-'
                && b[7] == b'-'
                && text.parse::<jiff::civil::Date>().is_ok()
        }
        "date-time" => text.parse::<jiff::Timestamp>().is_ok(),
        "email" => text.split_once('@').is_some_and(|(local, domain)| {
            !local.is_empty()
                && !domain.contains('@')
                && domain.split('.').count() >= 2
                && domain.split('.').all(|label| !label.is_empty())
                && !text.chars().any(char::is_whitespace)
        }),
        "uri" => url::Url::parse(text).is_ok(),
        _ => true,
    }
}

/// A value as the user would type it (strings without quotes).
fn plain(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Asks for one request on `out`, reading answers from `input`. End of input
/// cancels.
pub fn ask(
    request: &ElicitationRequest,
    input: &mut impl BufRead,
    out: &mut impl Write,
) -> ElicitationResponse {
    let schema = &request.requested_schema;
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    // The server's order (rmcp sends the form's schema sorted and its order apart): the request's
    // property order first, then any property it does not list.
    let properties = schema.get("properties").and_then(Value::as_object);
    let mut names: Vec<&str> = request
        .property_order
        .iter()
        .map(String::as_str)
        .filter(|n| properties.is_some_and(|p| p.contains_key(*n)))
        .collect();
    for name in properties.into_iter().flat_map(|p| p.keys()) {
        if !names.contains(&name.as_str()) {
            names.push(name);
        }
    }
    let fields: Vec<Field<'_>> = names
        .into_iter()
        .filter_map(|name| {
            let schema = properties?.get(name)?;
            Some(Field {
                name,
                schema,
                required: required.contains(&name),
            })
        })
        .collect();
    let _ = writeln!(
        out,
        "MCP server `{}` asks: {}",
        request.server, request.message
    );
    let mut content = Map::new();
    for field in &fields {
        match ask_field(field, input, out) {
            Asked::Value(Some(value)) => {
                content.insert(field.name.to_owned(), value);
            }
            Asked::Value(None) => {}
            Asked::Gave => return ElicitationResponse::Decline,
            Asked::Closed => return ElicitationResponse::Cancel,
        }
    }
    let _ = write!(
        out,
        "send to `{}`? [y]es / [n]o (decline) / [c]ancel: ",
        request.server
    );
    let _ = out.flush();
    match read_line(input)
        .as_deref()
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("y" | "yes" | "") => ElicitationResponse::Accept(content),
        Some("n" | "no") => ElicitationResponse::Decline,
        _ => ElicitationResponse::Cancel,
    }
}

enum Asked {
    /// The value (or nothing, for an optional field left empty).
    Value(Option<Value>),
    /// A required field got no usable answer: decline.
    Gave,
    /// Input closed: cancel.
    Closed,
}

fn ask_field(field: &Field<'_>, input: &mut impl BufRead, out: &mut impl Write) -> Asked {
    let choices = field.choices();
    for _ in 0..TRIES {
        let _ = write!(out, "{}", field.prompt(&choices));
        let _ = out.flush();
        let Some(line) = read_line(input) else {
            let _ = writeln!(out);
            return Asked::Closed;
        };
        if line.is_empty() {
            match field.schema.get("default") {
                Some(default) => return Asked::Value(Some(default.clone())),
                None if !field.required => return Asked::Value(None),
                None => {
                    let _ = writeln!(out, "    `{}` is required", field.name);
                    continue;
                }
            }
        }
        match field.parse(&line, &choices) {
            Ok(value) => return Asked::Value(Some(value)),
            Err(hint) => {
                let _ = writeln!(out, "    {hint}");
            }
        }
    }
    let _ = writeln!(out, "    no usable answer for `{}`: declining", field.name);
    Asked::Gave
}

/// One trimmed line; `None` at end of input or on a read error.
fn read_line(input: &mut impl BufRead) -> Option<String> {
    let mut line = String::new();
    match input.read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line.trim().to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn form() -> ElicitationRequest {
        ElicitationRequest::new(
            "crm",
            "Who are you?",
            json!({"type": "object", "required": ["name"], "properties": {
                "age": {"type": "integer", "default": 30},
                "name": {"type": "string", "description": "Your name"},
                "score": {"type": "number"},
                "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
                "verified": {"type": "boolean"}
            }}),
        )
    }

    fn answer(request: &ElicitationRequest, typed: &str) -> (ElicitationResponse, String) {
        let mut out = Vec::new();
        let response = ask(request, &mut typed.as_bytes(), &mut out);
        (response, String::from_utf8(out).unwrap())
    }

    #[test]
    fn typed_answers_defaults_and_skips_make_the_content() {
        // `form()` lists no order of its own: the schema's, as written:
        // age (default), name, score (skipped), status, verified, then send.
        let (response, shown) = answer(&form(), "\nAda\n\ninactive\ny\n\n");
        let ElicitationResponse::Accept(content) = response else {
            panic!("{response:?}")
        };
        assert_eq!(
            Value::Object(content),
            json!({"name": "Ada", "age": 30, "status": "inactive", "verified": true})
        );
        assert!(
            shown.starts_with("MCP server `crm` asks: Who are you?"),
            "{shown}"
        );
        assert!(shown.contains("name — Your name (string): "), "{shown}");
        assert!(shown.contains("age (integer, Enter for 30)"), "{shown}");
        assert!(shown.contains("one of active | inactive"), "{shown}");
    }

    #[test]
    fn answers_that_do_not_fit_are_asked_again() {
        // age "old" → again → 41; score "x" → again → 2.5; status "gone" → again → Enter
        let (response, shown) = answer(&form(), "old\n41\nAda\nx\n2.5\ngone\n\nno\nyes\n");
        let ElicitationResponse::Accept(content) = response else {
            panic!("{response:?}")
        };
        assert_eq!(
            Value::Object(content),
            json!({"name": "Ada", "age": 41, "score": 2.5, "status": "active", "verified": false})
        );
        assert!(shown.contains("a whole number, please"), "{shown}");
        assert!(shown.contains("a number, please"), "{shown}");
        assert!(
            shown.contains("one of active | inactive, please"),
            "{shown}"
        );
    }

    #[test]
    fn a_required_field_left_empty_declines_after_three_tries() {
        let (response, shown) = answer(&form(), "\n\n\n\n");
        assert_eq!(response, ElicitationResponse::Decline);
        assert_eq!(shown.matches("`name` is required").count(), 3, "{shown}");
    }

    #[test]
    fn no_declines_and_closed_input_cancels() {
        let (response, _) = answer(&form(), "\nAda\n\n\n\nn\n");
        assert_eq!(response, ElicitationResponse::Decline);
        let (response, _) = answer(&form(), "\nAda\n");
        assert_eq!(response, ElicitationResponse::Cancel);
        let (response, _) = answer(&form(), "\nAda\n\n\n\nc\n");
        assert_eq!(response, ElicitationResponse::Cancel);
    }

    #[test]
    fn fields_are_asked_in_the_servers_order() {
        let request = form().with_property_order(["verified", "name", "status", "age", "score"]);
        let (response, shown) = answer(&request, "y\nAda\n\n\n\n\n");
        let ElicitationResponse::Accept(content) = response else {
            panic!("{response:?}")
        };
        assert_eq!(
            Value::Object(content),
            json!({"verified": true, "name": "Ada", "status": "active", "age": 30})
        );
        let at = |field: &str| shown.find(&format!("  {field} ")).unwrap();
        assert!(at("verified") < at("name"), "{shown}");
        assert!(at("name") < at("status"), "{shown}");
        assert!(at("status") < at("age"), "{shown}");
        assert!(at("age") < at("score"), "{shown}");
    }

    #[test]
    fn formats_ranges_and_patterns_are_checked_and_asked_again() {
        let request = ElicitationRequest::new(
            "crm",
            "Details",
            json!({"type": "object", "properties": {
                "email": {"type": "string", "format": "email"},
                "born": {"type": "string", "format": "date"},
                "site": {"type": "string", "format": "uri"},
                "seats": {"type": "integer", "minimum": 1, "maximum": 10},
                "code": {"type": "string", "pattern": "^[A-Z]{3}$"}
            }}),
        )
        .with_property_order(["email", "born", "site", "seats", "code"]);
        let typed = "not-an-email\nada@example.com\n2026-13-45\n2026-12-01\nnot a uri\nhttps://example.com\n0\n11\n4\nab\nABC\ny\n";
        let (response, shown) = answer(&request, typed);
        let ElicitationResponse::Accept(content) = response else {
            panic!("{response:?}: {shown}")
        };
        assert_eq!(
            Value::Object(content),
            json!({"email": "ada@example.com", "born": "2026-12-01", "site": "https://example.com",
                   "seats": 4, "code": "ABC"})
        );
        assert!(shown.contains("an email address, please"), "{shown}");
        assert!(shown.contains("a date, YYYY-MM-DD, please"), "{shown}");
        assert!(
            shown.contains("a URI, e.g. https://example.com, please"),
            "{shown}"
        );
        assert_eq!(
            shown.matches("at least 1, at most 10, please").count(),
            2,
            "{shown}"
        );
        assert!(shown.contains("matching ^[A-Z]{3}$, please"), "{shown}");
        // The prompt says what fits before the first try.
        assert!(
            shown.contains("seats (integer, at least 1, at most 10, Enter to skip)"),
            "{shown}"
        );
    }

    #[test]
    fn constraints_of_the_elicitation_subset_are_kept() {
        let fit = |schema: Value, value: Value| fits(&schema, &value);
        assert!(fit(
            json!({"format": "date-time"}),
            json!("2026-12-01T18:00:00Z")
        ));
        assert!(fit(
            json!({"format": "date-time"}),
            json!("2026-12-01T18:00:00+01:00")
        ));
        assert!(!fit(
            json!({"format": "date-time"}),
            json!("2026-12-01T18:00:00")
        ));
        assert!(!fit(json!({"format": "date"}), json!("20261201")));
        assert!(!fit(json!({"format": "email"}), json!("ada@localhost")));
        assert!(!fit(
            json!({"format": "email"}),
            json!("ada lovelace@example.com")
        ));
        assert!(!fit(json!({"format": "uri"}), json!("example.com/path")));
        assert!(
            fit(json!({"format": "color"}), json!("anything")),
            "unknown formats annotate"
        );
        assert!(!fit(json!({"exclusiveMinimum": 0}), json!(0)));
        assert!(fit(json!({"exclusiveMaximum": 1.5}), json!(1.25)));
        assert!(
            !fit(json!({"minLength": 2}), json!("é")),
            "lengths count characters"
        );
        assert!(fit(json!({"maxLength": 2}), json!("éé")));
        assert!(
            fit(json!({"pattern": "("}), json!("x")),
            "a broken pattern checks nothing"
        );
    }

    #[test]
    fn titled_enums_take_their_consts() {
        let request = ElicitationRequest::new(
            "s",
            "Pick",
            json!({"type": "object", "properties": {"size": {"type": "string",
                "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}]}}}),
        );
        let (response, _) = answer(&request, "m\nl\n\n");
        assert_eq!(
            response,
            ElicitationResponse::Accept(json!({"size": "l"}).as_object().unwrap().clone())
        );
    }
}
