//! current_date and day_name.

use super::builtins_fs::{call, err, ok};
use super::builtins_todo::specs;
use lousho::ToolContext;
use lousho::builtin::clock_tools;
use serde_json::json;

#[tokio::test]
async fn current_date_is_iso_8601_in_the_requested_time_zone() {
    let tools = clock_tools();
    let before = jiff::Timestamp::now();
    let out = tools
        .get("current_date")
        .unwrap()
        .call(json!({"timezone": "Asia/Kolkata"}), ToolContext::new("t"))
        .await
        .unwrap();
    let after = jiff::Timestamp::now();
    let s = out.structured.clone().unwrap();
    let datetime = s["datetime"].as_str().unwrap();
    // India has no daylight saving time: the offset is always +05:30.
    assert!(datetime.ends_with("+05:30"), "{datetime}");
    assert_eq!(s["utc_offset"], "+05:30");
    assert_eq!(s["timezone"], "Asia/Kolkata");
    let parsed: jiff::Timestamp = datetime.parse().unwrap();
    assert!(
        parsed >= before.round(jiff::Unit::Second).unwrap() - jiff::SignedDuration::from_secs(1)
    );
    assert!(parsed <= after);
    let zoned = parsed.to_zoned(jiff::tz::TimeZone::get("Asia/Kolkata").unwrap());
    assert_eq!(s["date"], zoned.date().to_string());
    assert_eq!(s["day_name"], zoned.strftime("%A").to_string());
    assert_eq!(out.content.len(), 1);
    assert!(out.to_model_text().starts_with(datetime));

    let utc = ok(&tools, "current_date", json!({"timezone": "UTC"})).await;
    assert!(utc.contains("+00:00 (") && utc.ends_with(", UTC)"), "{utc}");
    // No time zone: the machine's, still ISO 8601.
    let local = ok(&tools, "current_date", json!({})).await;
    let stamp = local.split(' ').next().unwrap();
    assert!(stamp.parse::<jiff::Timestamp>().is_ok(), "{local}");
}

#[tokio::test]
async fn current_date_refuses_unknown_time_zones_clearly() {
    let msg = err(
        &clock_tools(),
        "current_date",
        json!({"timezone": "Mars/Olympus_Mons"}),
    )
    .await;
    assert_eq!(
        msg,
        "unknown time zone `Mars/Olympus_Mons`; use an IANA name such as `Europe/Paris`, `America/New_York` or `UTC`"
    );
}

#[tokio::test]
async fn day_name_names_the_weekday_of_a_date() {
    let tools = clock_tools();
    assert_eq!(
        ok(&tools, "day_name", json!({"date": "2024-02-29"})).await,
        "2024-02-29 is a Thursday"
    );
    assert_eq!(
        ok(&tools, "day_name", json!({"date": "2000-01-01"})).await,
        "2000-01-01 is a Saturday"
    );
    assert_eq!(
        ok(
            &tools,
            "day_name",
            json!({"date": "2026-03-14T09:26:53+01:00"})
        )
        .await,
        "2026-03-14 is a Saturday"
    );
    let msg = err(&tools, "day_name", json!({"date": "2023-02-29"})).await;
    assert!(msg.starts_with("`2023-02-29` is not a valid date"), "{msg}");
    assert!(msg.ends_with("use YYYY-MM-DD, e.g. 2026-03-14"), "{msg}");
    let msg = err(&tools, "day_name", json!({"date": "next tuesday"})).await;
    assert!(msg.contains("not a valid date"), "{msg}");

    let today = call(&tools, "day_name", json!({})).await;
    assert!(!today.is_error);
    let weekdays = [
        "Monday",
        "Tuesday",
        "Wednesday",
        "Thursday",
        "Friday",
        "Saturday",
        "Sunday",
    ];
    assert!(
        weekdays.iter().any(|d| today.text.ends_with(d)),
        "{}",
        today.text
    );
}

#[test]
fn clock_tools_are_read_only() {
    for tool in clock_tools().iter() {
        let a = &tool.spec().annotations;
        assert_eq!((a.read_only, a.destructive), (Some(true), Some(false)));
    }
}

#[test]
fn tool_specs_snapshot() {
    insta::assert_json_snapshot!("clock_tool_specs", specs(&clock_tools()));
}
