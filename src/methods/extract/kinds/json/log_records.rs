//! Structured log lines (python-json-logger, bunyan, pino, zap, structlog): records that each
//! hold a level and a message, read as a log reads them, `time LEVEL key=value message`, with
//! their longer members (a traceback) after. Spelt out as JSON, each line spends a third of
//! its bytes on the keys every line repeats.

use serde_json::{Map, Value};

use super::render::render_string;
use crate::methods::extract::doc::Level;
use crate::methods::extract::kinds::log;

/// Records looked at to tell the shape.
const SAMPLE: usize = 64;
/// Records the shape needs: a log of two lines is no log.
const MIN_RECORDS: usize = 4;
/// A member is the shape's when at least nine in ten sampled records hold it.
const PRESENT_SHARE: usize = 9;
/// A message is text: on average this long at least.
const MIN_MESSAGE_BYTES: usize = 16;
/// A short member is written `key=value` before the message; longer ones come after it.
const MAX_SHORT_BYTES: usize = 40;

/// The members that make records log lines.
#[derive(Debug)]
pub(super) struct LogShape {
    time: String,
    level: String,
    message: String,
    /// Members every sampled record holds with one value (the logger's name): said by none.
    constant: Vec<String>,
}

/// Per top-level member of the sampled records: how many hold it as a string, how many of
/// those are a level word or a time, their bytes and the ones with spaces, and whether all
/// equal the first.
#[derive(Default)]
struct MemberStats {
    strings: usize,
    levels: usize,
    times: usize,
    bytes: usize,
    spaced: usize,
    first: Option<String>,
    same: bool,
    /// Records that hold it as a number of seconds or milliseconds since 1970 of this
    /// century (`1796027488.01`): a time, as a timestamp's text is.
    epochs: usize,
}

/// Whether `value` reads as a time since 1970 in seconds or milliseconds, between 2001 and
/// 2286: the range where such counts have ten or thirteen digits.
fn is_epoch_time(value: &serde_json::Number) -> bool {
    value
        .as_f64()
        .is_some_and(|t| (1e9..1e10).contains(&t) || (1e12..1e13).contains(&t))
}

/// The shape of log lines being told, one record at a time.
#[derive(Default)]
pub(super) struct LogShapeBuilder {
    members: Vec<(String, MemberStats)>,
    records: usize,
    /// Whether a sampled record was no object: then the records are no log.
    mixed: bool,
}

impl LogShapeBuilder {
    /// Adds one record to the sample (records past it are not looked at).
    pub(super) fn add(&mut self, record: &Value) {
        if self.records >= SAMPLE || self.mixed {
            return;
        }
        self.records += 1;
        let Value::Object(map) = record else {
            self.mixed = true;
            return;
        };
        for (key, value) in map {
            let text = match value {
                Value::String(text) => text,
                Value::Number(number) if is_epoch_time(number) => {
                    self.stats_of(key).epochs += 1;
                    continue;
                }
                _ => continue,
            };
            let stats = self.stats_of(key);
            stats.strings += 1;
            stats.levels += usize::from(is_level_word(text));
            stats.times += usize::from(log::has_timestamp(text));
            stats.bytes += text.len();
            stats.spaced += usize::from(text.contains(' '));
            match &stats.first {
                None => {
                    stats.first = Some(text.clone());
                    stats.same = true;
                }
                Some(first) => stats.same &= first == text,
            }
        }
    }

    /// The statistics of member `key`, new when it is first seen.
    fn stats_of(&mut self, key: &str) -> &mut MemberStats {
        let at = match self.members.iter().position(|(k, _)| k == key) {
            Some(at) => at,
            None => {
                self.members.push((key.to_owned(), MemberStats::default()));
                self.members.len() - 1
            }
        };
        &mut self.members[at].1
    }

    /// The log shape of the records, when they are log lines: a member that is always a
    /// level word, and one of text (the longest such).
    pub(super) fn finish(self) -> Option<LogShape> {
        let (members, n) = (self.members, self.records);
        if self.mixed {
            return None;
        }
        if n < MIN_RECORDS {
            return None;
        }
        let held = |s: &MemberStats| s.strings * 10 >= n * PRESENT_SHARE;
        let level = members
            .iter()
            .find(|(_, s)| held(s) && s.levels == s.strings)?
            .0
            .clone();
        // A time on every line: a linter's findings have a level and a message too, but
        // are read by where they are, not when.
        let time = members
            .iter()
            .find(|(_, s)| (held(s) && s.times == s.strings) || s.epochs * 10 >= n * PRESENT_SHARE)?
            .0
            .clone();
        let message = members
            .iter()
            .filter(|(k, s)| {
                held(s)
                    && *k != level
                    && *k != time
                    && !s.same
                    && s.spaced * 2 >= s.strings
                    && s.bytes >= MIN_MESSAGE_BYTES * s.strings
            })
            .max_by_key(|(_, s)| s.bytes / s.strings.max(1))?
            .0
            .clone();
        let constant = members
            .iter()
            .filter(|(_, s)| s.same && s.strings == n)
            .map(|(k, _)| k.clone())
            .collect();
        Some(LogShape {
            time,
            level,
            message,
            constant,
        })
    }
}

impl LogShape {
    /// The level `record` states, when it states one.
    pub(super) fn level_of(&self, record: &Value) -> Option<Level> {
        let level = record.get(&self.level)?.as_str()?.to_ascii_lowercase();
        Some(match level.as_str() {
            "error" | "err" | "critical" | "crit" | "fatal" | "alert" | "emerg" => Level::Error,
            "warn" | "warning" => Level::Warn,
            "info" | "notice" => Level::Info,
            _ => Level::Debug,
        })
    }

    /// The message of `record`, when it has one.
    pub(super) fn message_of<'v>(&self, record: &'v Value) -> Option<&'v str> {
        record.get(&self.message)?.as_str()
    }

    /// What the schema line says of the records' lines: `one line per record, as a log:
    /// time level message`.
    pub(super) fn header(&self) -> String {
        format!(
            "one line per record, as a log: {} {} key=value {}",
            self.time, self.level, self.message
        )
    }
}

/// Whether `text` is a log level's name.
fn is_level_word(text: &str) -> bool {
    const LEVELS: &[&str] = &[
        "trace", "debug", "info", "notice", "warn", "warning", "error", "err", "critical", "crit",
        "fatal", "alert", "emerg",
    ];
    LEVELS.iter().any(|l| l.eq_ignore_ascii_case(text))
}

/// `record` as a log line within about `cap` bytes: its time and level, its other short
/// members as `key=value`, its message, then its longer members rendered by `render_rest`
/// in the room left. `None` when the record lacks the shape's level or message.
pub(super) fn log_line(
    record: &Value,
    shape: &LogShape,
    cap: usize,
    render_rest: &dyn Fn(&Value, usize) -> String,
) -> Option<String> {
    let map = record.as_object()?;
    let level = map.get(&shape.level)?.as_str()?;
    let message = map.get(&shape.message)?.as_str()?;
    let mut line = String::new();
    if let Some(time) = map.get(&shape.time) {
        match time {
            Value::String(text) => line.push_str(text),
            other => line.push_str(&other.to_string()),
        }
        line.push(' ');
    }
    line.push_str(level);
    let mut rest = Map::new();
    for (key, value) in map {
        if *key == shape.level
            || *key == shape.message
            || *key == shape.time
            || shape.constant.contains(key)
        {
            continue;
        }
        let short = match value {
            Value::String(s) if s.len() <= MAX_SHORT_BYTES && !s.contains('\n') => Some(s.clone()),
            Value::Number(_) | Value::Bool(_) => Some(value.to_string()),
            Value::Null => continue,
            _ => None,
        };
        match short {
            Some(text) => {
                line.push(' ');
                line.push_str(key);
                line.push('=');
                line.push_str(&text);
            }
            None => {
                rest.insert(key.clone(), value.clone());
            }
        }
    }
    line.push(' ');
    // The message keeps its head and its end (a reason, a traceback's last line) when long.
    let room = cap.saturating_sub(line.len()).max(MIN_MESSAGE_BYTES);
    let message_room = if rest.is_empty() { room } else { room * 2 / 3 };
    if message.len() <= message_room {
        line.push_str(message);
    } else {
        let mut quoted = String::new();
        render_string(&mut quoted, message, message_room, None, None);
        let text = serde_json::from_str::<String>(&quoted).unwrap_or(quoted);
        line.push_str(&text);
    }
    if !rest.is_empty() {
        let room = cap.saturating_sub(line.len() + 1);
        line.push(' ');
        line.push_str(&render_rest(&Value::Object(rest), room));
    }
    Some(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records() -> Vec<Value> {
        (0..10)
            .map(|i| {
                let (level, message) = if i == 7 {
                    (
                        "WARNING",
                        format!(
                            "400 PUT /api/contents/f{i}.bin (127.0.0.1): Encoding error: bad base64"
                        ),
                    )
                } else {
                    ("DEBUG", format!("200 GET /api/contents/f{i} 1.2ms"))
                };
                serde_json::json!({"time": format!("2026-11-30 05:24:0{i},330"), "level": level,
                                   "name": "ServerApp", "module": if i % 2 == 0 { "log" } else { "web" },
                                   "message": message})
            })
            .collect()
    }

    #[test]
    fn records_with_a_level_and_a_message_read_as_log_lines() {
        let records = records();
        let mut builder = LogShapeBuilder::default();
        records.iter().for_each(|r| builder.add(r));
        let shape = builder.finish().expect("a log");
        assert_eq!(shape.level, "level");
        assert_eq!(shape.message, "message");
        assert_eq!(shape.time, "time");
        // The logger's name, the same on every line, is said by none.
        assert_eq!(shape.constant, ["name"]);
        let line = log_line(&records[7], &shape, 300, &|v, _| v.to_string()).expect("a line");
        assert_eq!(
            line,
            "2026-11-30 05:24:07,330 WARNING module=web 400 PUT /api/contents/f7.bin (127.0.0.1): \
             Encoding error: bad base64"
        );
    }

    #[test]
    fn a_time_in_seconds_since_1970_is_a_time() {
        // A homeserver's terse JSON log: the time a number, the message under `log`.
        let records: Vec<Value> = (0..10)
            .map(|i| {
                serde_json::json!({"log": format!("Denying new event {i} because 403: not invited"),
                                   "namespace": "synapse.handlers.message", "level": "WARNING",
                                   "time": 1_796_027_488.01 + f64::from(i), "request": format!("POST-{i}")})
            })
            .collect();
        let mut builder = LogShapeBuilder::default();
        records.iter().for_each(|r| builder.add(r));
        let shape = builder.finish().expect("a log");
        assert_eq!(
            (shape.time.as_str(), shape.message.as_str()),
            ("time", "log")
        );
        let line = log_line(&records[2], &shape, 300, &|v, _| v.to_string()).expect("a line");
        assert_eq!(
            line,
            "1796027490.01 WARNING request=POST-2 Denying new event 2 because 403: not invited"
        );
        // Counts too small or too large for a time since 1970 are no time.
        let counts: Vec<Value> = (0..10)
            .map(|i| {
                serde_json::json!({"level": "info", "bytes": 4096 + i,
                                        "message": "a request was served in full"})
            })
            .collect();
        let mut builder = LogShapeBuilder::default();
        counts.iter().for_each(|r| builder.add(r));
        assert!(builder.finish().is_none());
    }

    #[test]
    fn findings_with_a_level_and_no_time_are_no_log() {
        let findings: Vec<Value> = (0..10)
            .map(|i| serde_json::json!({"type": "error", "url": format!("file:/p{i}.html"),
                                        "message": "Element “a” is missing required attribute “href”."}))
            .collect();
        let mut builder = LogShapeBuilder::default();
        findings.iter().for_each(|r| builder.add(r));
        assert!(builder.finish().is_none());
    }

    #[test]
    fn records_without_a_level_are_no_log() {
        let rows: Vec<Value> = (0..10)
            .map(|i| serde_json::json!({"name": format!("pkg{i}"), "description": "a package that does a thing"}))
            .collect();
        let mut builder = LogShapeBuilder::default();
        rows.iter().for_each(|r| builder.add(r));
        assert!(builder.finish().is_none());
    }
}
