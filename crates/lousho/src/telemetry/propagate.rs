//! W3C Trace Context across MCP: the client writes the `tools/call` span's
//! context into the request's `params._meta` (`traceparent`, `tracestate`,
//! the unprefixed keys SEP-414 reserves), the server reads it and makes the
//! caller's span the parent of its own, so a lousho agent calling a
//! lousho-served agent gives one trace across both processes.
//!
//! Only with the `otel` feature (a trace id exists only under an
//! OpenTelemetry layer); without it nothing is written or read.

#[cfg(any(feature = "mcp-client", feature = "mcp-server"))]
use rmcp::model::RequestMetaObject;
#[cfg(any(feature = "mcp-client", feature = "mcp-server"))]
use tracing::Span;

/// `_meta` carrying `span`'s trace context, when it has one.
#[cfg(feature = "mcp-client")]
pub(crate) fn inject(span: &Span) -> Option<RequestMetaObject> {
    #[cfg(feature = "otel")]
    {
        let (traceparent, tracestate) = w3c::traceparent(span)?;
        let mut meta = RequestMetaObject::new();
        meta.set_traceparent(traceparent);
        if !tracestate.is_empty() {
            meta.set_tracestate(tracestate);
        }
        Some(meta)
    }
    #[cfg(not(feature = "otel"))]
    {
        let _ = span;
        None
    }
}

/// Makes the caller's span (from `meta`'s `traceparent`) the parent of
/// `span`; call before `span` is first entered. A missing or malformed
/// `traceparent` leaves `span` where it is.
#[cfg(feature = "mcp-server")]
pub(crate) fn adopt_remote_parent(span: &Span, meta: &RequestMetaObject) {
    #[cfg(feature = "otel")]
    if let Some(traceparent) = meta.get_traceparent() {
        w3c::set_remote_parent(span, traceparent, meta.get_tracestate().unwrap_or(""));
    }
    #[cfg(not(feature = "otel"))]
    let _ = (span, meta);
}

#[cfg(all(feature = "otel", any(feature = "mcp-client", feature = "mcp-server")))]
mod w3c {
    use opentelemetry::trace::TraceContextExt;
    #[cfg(any(feature = "mcp-server", test))]
    use opentelemetry::trace::{SpanContext, SpanId, TraceFlags, TraceId, TraceState};
    use tracing::Span;
    use tracing_opentelemetry::OpenTelemetrySpanExt;

    /// `00-{trace id}-{span id}-{flags}` and the trace state, for a span
    /// an OpenTelemetry layer records.
    #[cfg(feature = "mcp-client")]
    pub(super) fn traceparent(span: &Span) -> Option<(String, String)> {
        if span.is_disabled() {
            return None;
        }
        let cx = span.context();
        let sc = cx.span().span_context().clone();
        if !sc.is_valid() {
            return None;
        }
        Some((
            format!(
                "00-{}-{}-{:02x}",
                sc.trace_id(),
                sc.span_id(),
                sc.trace_flags().to_u8()
            ),
            sc.trace_state().header(),
        ))
    }

    /// Parses a version-00 `traceparent` (W3C Trace Context §3.2).
    #[cfg(any(feature = "mcp-server", test))]
    pub(super) fn parse(traceparent: &str, tracestate: &str) -> Option<SpanContext> {
        let mut parts = traceparent.trim().split('-');
        let (version, trace, span, flags) =
            (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
        if version != "00" || parts.next().is_some() || trace.len() != 32 || span.len() != 16 {
            return None;
        }
        let trace_id = TraceId::from_hex(trace).ok()?;
        let span_id = SpanId::from_hex(span).ok()?;
        let flags = u8::from_str_radix(flags, 16).ok()?;
        let state = tracestate.parse::<TraceState>().unwrap_or_default();
        let sc = SpanContext::new(trace_id, span_id, TraceFlags::new(flags), true, state);
        sc.is_valid().then_some(sc)
    }

    #[cfg(feature = "mcp-server")]
    pub(super) fn set_remote_parent(span: &Span, traceparent: &str, tracestate: &str) {
        if span.is_disabled() {
            return;
        }
        if let Some(sc) = parse(traceparent, tracestate) {
            let cx = opentelemetry::Context::new().with_remote_span_context(sc);
            if let Err(e) = span.set_parent(cx) {
                tracing::debug!(error = %e, "could not adopt the caller's trace context");
            }
        }
    }

    #[cfg(test)]
    mod tests {
        use super::parse;

        #[test]
        fn a_traceparent_parses_and_a_malformed_one_does_not() {
            let sc = parse(
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                "",
            )
            .expect("valid");
            assert_eq!(
                sc.trace_id().to_string(),
                "4bf92f3577b34da6a3ce929d0e0e4736"
            );
            assert_eq!(sc.span_id().to_string(), "00f067aa0ba902b7");
            assert!(sc.is_sampled() && sc.is_remote());
            for bad in [
                "",
                "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
                "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
            ] {
                assert!(parse(bad, "").is_none(), "{bad}");
            }
        }
    }
}
