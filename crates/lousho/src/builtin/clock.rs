//! `current_date {timezone?}` and `day_name {date?}`: what models cannot
//! know on their own.
//!
//! Time zones are IANA names (`Europe/Paris`, `America/New_York`, `UTC`)
//! resolved by `jiff`: the system's time zone database first (kept up to
//! date by the OS), a copy bundled in the binary when the system has none.

use crate::tool::{DefinedTool, ToolError, ToolOrigin, ToolOutput, ToolSet, define_tool};
use jiff::Zoned;
use jiff::civil::Date;
use jiff::tz::TimeZone;
use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::Arc;

const CURRENT_DATE_DESCRIPTION: &str = "Get the current date and time as ISO 8601 \
(`2026-03-14T09:26:53+01:00`), with the day of the week and the time zone. `timezone` is an \
IANA name such as `Europe/Paris`, `America/New_York` or `UTC`; by default the machine's local \
time zone is used.";

const DAY_NAME_DESCRIPTION: &str = "Get the day of the week (e.g. `Thursday`) of a date given as \
`YYYY-MM-DD` (an ISO 8601 date-time works too); without `date`, of today in the machine's local \
time zone.";

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CurrentDateInput {
    /// An IANA time zone name, e.g. `Europe/Paris` or `UTC` (default: the machine's local zone).
    #[schemars(example = &"UTC")]
    timezone: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct DayNameInput {
    /// The date, `YYYY-MM-DD` (default: today).
    #[schemars(example = "2026-03-14")]
    date: Option<String>,
}

/// The `current_date` tool (read-only).
pub fn current_date_tool() -> DefinedTool {
    define_tool(
        "current_date",
        CURRENT_DATE_DESCRIPTION,
        |input: CurrentDateInput| async move { current_date(input.timezone.as_deref()) },
    )
    .read_only()
    .origin(ToolOrigin::Builtin)
}

/// The `day_name` tool (read-only).
pub fn day_name_tool() -> DefinedTool {
    define_tool(
        "day_name",
        DAY_NAME_DESCRIPTION,
        |input: DayNameInput| async move { day_name(input.date.as_deref()) },
    )
    .read_only()
    .origin(ToolOrigin::Builtin)
}

/// `current_date` and `day_name`.
pub fn clock_tools() -> ToolSet {
    let mut set = ToolSet::new();
    for tool in [current_date_tool(), day_name_tool()] {
        // Two distinct names: inserting cannot clash.
        let _ = set.insert(Arc::new(tool));
    }
    set
}

fn time_zone(name: Option<&str>) -> Result<TimeZone, ToolError> {
    match name.map(str::trim) {
        None | Some("") => Ok(TimeZone::system()),
        Some(name) => TimeZone::get(name).map_err(|_| {
            ToolError::failed(format!(
                "unknown time zone `{name}`; use an IANA name such as `Europe/Paris`, \
                 `America/New_York` or `UTC`"
            ))
        }),
    }
}

fn zone_name(now: &Zoned) -> String {
    now.time_zone()
        .iana_name()
        .map_or_else(|| now.strftime("%:z").to_string(), str::to_owned)
}

fn current_date(timezone: Option<&str>) -> Result<ToolOutput, ToolError> {
    let tz = time_zone(timezone)?;
    let now = Zoned::now().with_time_zone(tz);
    let datetime = now.strftime("%Y-%m-%dT%H:%M:%S%:z").to_string();
    let day = now.strftime("%A").to_string();
    let zone = zone_name(&now);
    Ok(
        ToolOutput::text(format!("{datetime} ({day}, {zone})")).with_structured(
            serde_json::json!({
                "datetime": datetime,
                "date": now.date().to_string(),
                "time": now.strftime("%H:%M:%S").to_string(),
                "day_name": day,
                "timezone": zone,
                "utc_offset": now.strftime("%:z").to_string(),
            }),
        ),
    )
}

fn parse_date(text: &str) -> Result<Date, ToolError> {
    let text = text.trim();
    if let Ok(date) = text.parse::<Date>() {
        return Ok(date);
    }
    if let Ok(zoned) = text.parse::<Zoned>() {
        return Ok(zoned.date());
    }
    if let Ok(ts) = text.parse::<jiff::Timestamp>() {
        return Ok(ts.to_zoned(TimeZone::UTC).date());
    }
    match text.parse::<jiff::civil::DateTime>() {
        Ok(dt) => Ok(dt.date()),
        Err(e) => Err(ToolError::failed(format!(
            "`{text}` is not a valid date ({e}); use YYYY-MM-DD, e.g. 2026-03-14"
        ))),
    }
}

fn day_name(date: Option<&str>) -> Result<ToolOutput, ToolError> {
    let date = match date {
        Some(text) if !text.trim().is_empty() => parse_date(text)?,
        _ => Zoned::now().date(),
    };
    let day = date.strftime("%A").to_string();
    Ok(
        ToolOutput::text(format!("{date} is a {day}")).with_structured(serde_json::json!({
            "date": date.to_string(),
            "day_name": day,
            "iso_weekday": date.weekday().to_monday_one_offset(),
        })),
    )
}
