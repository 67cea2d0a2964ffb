//! Logs on stderr (stdout carries results and, for the proxy, the protocol): human-readable, or
//! one JSON object per event with a `service` field.

use std::fmt;
use std::io::{self, IsTerminal, Write};
use std::sync::LazyLock;

use condense::secrets::SecretRedactor;
use serde_json::{Map, Value};
use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::format::{JsonFields, Writer};
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormattedFields, MakeWriter};
use tracing_subscriber::registry::LookupSpan;

use crate::cli::LogFormat;

pub(crate) fn init(format: LogFormat, filter: &str, service: &str) -> anyhow::Result<()> {
    let filter = EnvFilter::try_new(filter)
        .map_err(|e| anyhow::anyhow!("bad log filter `{filter}`: {e}"))?;
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(colour_wanted(
            io::stderr().is_terminal(),
            std::env::var_os("NO_COLOR").as_deref(),
        ))
        .with_writer(RedactingStderr);
    match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder
            .fmt_fields(JsonFields::new())
            .event_format(JsonWithService {
                service: service.to_owned(),
            })
            .try_init(),
    }
    .map_err(|e| anyhow::anyhow!("cannot set up logging: {e}"))
}

/// Colour only for a person at a terminal: a client that keeps the proxy's stderr in a log file
/// (Claude Code does) must get plain text, and `NO_COLOR` (any non-empty value, see
/// <https://no-color.org>) turns colour off everywhere.
fn colour_wanted(stderr_is_terminal: bool, no_color: Option<&std::ffi::OsStr>) -> bool {
    stderr_is_terminal && no_color.is_none_or(|value| value.is_empty())
}

/// Stderr, with every secret-shaped string in a log event masked before it is written. condense
/// never logs its key or payloads above `trace`, but the libraries under it log what they see:
/// rmcp logs an unreachable upstream's whole URL, query token included.
#[derive(Clone, Default)]
struct RedactingStderr;

/// The redactor of log events, built when the first event is written: compiling its patterns
/// takes a millisecond or more, which a run that logs nothing (most `compress` runs) must not
/// pay at start.
static REDACTOR: LazyLock<SecretRedactor> = LazyLock::new(SecretRedactor::new);

impl<'a> MakeWriter<'a> for RedactingStderr {
    type Writer = RedactedEvent<io::Stderr>;

    fn make_writer(&'a self) -> Self::Writer {
        RedactedEvent {
            redactor: &REDACTOR,
            buffer: Vec::new(),
            out: io::stderr(),
        }
    }
}

/// One event's text, collected and written masked when the formatter is done with it (it asks
/// for one writer per event, so a secret is never split across two writes).
struct RedactedEvent<W: Write> {
    redactor: &'static LazyLock<SecretRedactor>,
    buffer: Vec<u8>,
    out: W,
}

impl<W: Write> Write for RedactedEvent<W> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.buffer.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<W: Write> Drop for RedactedEvent<W> {
    fn drop(&mut self) {
        let text = String::from_utf8_lossy(&self.buffer);
        let masked = self.redactor.redact(&text);
        let _ = self.out.write_all(masked.as_bytes());
    }
}

/// One JSON object per event: timestamp, level, service, target, message, the event's fields,
/// and the fields of the spans it happened in (tool, tokens, method, …).
struct JsonWithService {
    service: String,
}

impl<S, N> FormatEvent<S, N> for JsonWithService
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> tracing_subscriber::fmt::FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let mut object = Map::new();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        object.insert("timestamp".into(), Value::from(now.as_secs_f64()));
        object.insert(
            "level".into(),
            Value::from(event.metadata().level().as_str()),
        );
        object.insert("service".into(), Value::from(self.service.as_str()));
        object.insert("target".into(), Value::from(event.metadata().target()));
        if let Some(scope) = ctx.event_scope() {
            for span in scope.from_root() {
                let extensions = span.extensions();
                if let Some(fields) = extensions.get::<FormattedFields<N>>()
                    && let Ok(Value::Object(map)) = serde_json::from_str::<Value>(fields)
                {
                    object.extend(map);
                }
            }
        }
        event.record(&mut FieldVisitor(&mut object));
        writeln!(writer, "{}", Value::Object(object))
    }
}

struct FieldVisitor<'a>(&'a mut Map<String, Value>);

impl Visit for FieldVisitor<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0
            .insert(field.name().into(), Value::from(format!("{value:?}")));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().into(), Value::from(value));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().into(), Value::from(value));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().into(), Value::from(value));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.insert(field.name().into(), Value::from(value));
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.0.insert(field.name().into(), Value::from(value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_only_on_a_terminal_and_never_with_no_color() {
        use std::ffi::OsStr;
        assert!(colour_wanted(true, None));
        assert!(colour_wanted(true, Some(OsStr::new(""))));
        assert!(!colour_wanted(true, Some(OsStr::new("1"))));
        assert!(!colour_wanted(false, None));
    }

    /// `line` as the log writer puts it out, written in two pieces as a formatter may.
    fn masked(line: &str) -> String {
        let mut out = Vec::new();
        {
            let mut event = RedactedEvent {
                redactor: &REDACTOR,
                buffer: Vec::new(),
                out: &mut out,
            };
            let (head, tail) = line.as_bytes().split_at(line.len() / 2);
            event.write_all(head).unwrap();
            event.write_all(tail).unwrap();
        }
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn credentials_in_logged_urls_and_headers_are_masked() {
        let line = masked(
            "ERROR rmcp::transport::worker: error sending request for url \
             (http://127.0.0.1:9/mcp?token=s3cr3t-upstream-token) \
             authorization: Bearer abcdefghijklmnopqrstuvwxyz012345 \
             https://deploy:hunter2hunter2@example.com/x",
        );
        for secret in [
            "s3cr3t-upstream-token",
            "abcdefghijklmnopqrstuvwxyz012345",
            "hunter2hunter2",
        ] {
            assert!(!line.contains(secret), "{line}");
        }
        assert!(line.contains("http://127.0.0.1:9/mcp"), "{line}");
    }

    #[test]
    fn ordinary_events_are_left_alone() {
        let line = "INFO condense{tool=\"read_log\" tokens_before=5000 tokens_after=900 \
                    method=\"extract\"}: extract 5000 → 900 tokens";
        assert_eq!(masked(line), line);
    }
}
