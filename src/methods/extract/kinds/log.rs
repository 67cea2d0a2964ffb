//! Logs: one unit per entry (a line with a timestamp or level, plus the lines that continue it,
//! such as a stack trace), a level per entry, and a template for folding repeats.

use std::collections::{HashMap, HashSet};

use super::access;
use crate::methods::extract::detect::ContentKind;
use crate::methods::extract::doc::{self, Doc, Level, Unit};

/// At most this many lines of one entry form one unit; a longer trace is cut into more units
/// whose context is the entry's first line.
const MAX_ENTRY_LINES: usize = 12;
/// An entry's first unit holds at most this many lines of a trace: the entry's line and the
/// top of its trace. The frames under them are units of their own, kept when the query asks
/// for them, so that a log's many exceptions each show their class and message. A Python
/// trace, whose exception comes last, is cut by its exception line instead.
const FIRST_UNIT_LINES: usize = 6;

/// Whether `line` is the exception a trace ends with, at the margin: `KeyError: 'item_id'`,
/// `sqlite3.OperationalError: database is locked`.
pub(crate) fn is_raised_exception(line: &str) -> bool {
    if line.starts_with(char::is_whitespace) {
        return false;
    }
    let name = line
        .split_once(':')
        .map_or(line, |(name, _)| name)
        .trim_end();
    !name.contains(' ') && doc::is_exception_name(name.rsplit('.').next().unwrap_or(name))
}

/// Whether `line` is how Python chains a trace to the exception raised before it.
fn is_exception_chaining(line: &str) -> bool {
    line.starts_with("The above exception was the direct cause of the following exception")
        || line.starts_with("During handling of the above exception, another exception occurred")
}

/// Whether `line` is a frame of a stack trace: indented (`\tat com.x.Y.run(Y.java:9)`,
/// `\t/app/app.rb:20:in 'block'`), and no exception (`\tjava.lang.ArithmeticException: / by
/// zero`, the root cause a Java trace names under its entry).
fn is_frame_line(line: &str) -> bool {
    line.starts_with(char::is_whitespace) && !is_raised_exception(line.trim_start())
}

/// Whether `line` starts a log entry: a time near its start (of day, a date's, or the
/// seconds since start), or a level word among its first words.
pub(crate) fn starts_entry(line: &str) -> bool {
    has_timestamp(line) || explicit_level(line).is_some()
}

/// Whether `line` is a rule of dashes (`--------  ------  -------`, `===`, `+---+`): it sets
/// apart what follows, a listing's totals under its rows.
pub(crate) fn is_rule_of_dashes(line: &str) -> bool {
    line.trim().bytes().all(|b| b" -=+".contains(&b))
}

pub(crate) fn has_timestamp(line: &str) -> bool {
    if has_elapsed_seconds(line) {
        return true;
    }
    let head = &line.as_bytes()[..line.len().min(48)];
    let digit = |i: usize| head.get(i).is_some_and(|b| b.is_ascii_digit());
    (0..head.len()).any(|i| {
        // hh:mm:ss
        (digit(i) && digit(i + 1) && head.get(i + 2) == Some(&b':') && digit(i + 3) && digit(i + 4)
            && head.get(i + 5) == Some(&b':') && digit(i + 6) && digit(i + 7))
            // yyyy-mm-dd followed by a time (not a date inside a path or a version)
            || (digit(i) && digit(i + 1) && digit(i + 2) && digit(i + 3) && head.get(i + 4) == Some(&b'-')
                && digit(i + 5) && digit(i + 6) && head.get(i + 7) == Some(&b'-') && digit(i + 8)
                && digit(i + 9) && matches!(head.get(i + 10), Some(b' ' | b'T')) && digit(i + 11))
    })
}

/// Whether `line` starts with the seconds since its program started, to the millisecond or
/// finer, as logs without a clock write them: the kernel's `[    4.123456] …`, NUT's
/// `   2.017913\t…`. A number with fewer decimals, or one that runs on into a word or a
/// column separator, is a table's value.
fn has_elapsed_seconds(line: &str) -> bool {
    /// Digits of a time to the millisecond at least.
    const MIN_DECIMALS: usize = 3;
    /// Digits before the point: up to years of seconds.
    const MAX_WHOLE: usize = 9;
    let rest = line.trim_start_matches(' ');
    let rest = rest
        .strip_prefix('[')
        .map_or(rest, |r| r.trim_start_matches(' '));
    let whole = rest.bytes().take_while(u8::is_ascii_digit).count();
    let Some(after_point) = rest[whole..].strip_prefix('.') else {
        return false;
    };
    let decimals = after_point.bytes().take_while(u8::is_ascii_digit).count();
    (1..=MAX_WHOLE).contains(&whole)
        && decimals >= MIN_DECIMALS
        && matches!(
            after_point.as_bytes().get(decimals),
            Some(b' ' | b'\t' | b']')
        )
}

/// The level a log line states, if it states one among its first words.
pub(crate) fn explicit_level(line: &str) -> Option<Level> {
    if let Some(level) = bracketed_letter_level(line) {
        return Some(level);
    }
    let mut previous_numeric = false;
    for word in line.split_ascii_whitespace().take(8) {
        let bracketed = word.starts_with('[') || word.starts_with('<');
        let whole = word.trim_matches(|c: char| "[]()<>:,-|".contains(c));
        // Celery's `WARNING/MainProcess`: the level, then the process that logged.
        let w = whole.split_once('/').map_or(whole, |(level, _)| level);
        // A one-letter level is a word of its own: the `I` of `I/O error` is none.
        let after_number = previous_numeric && w == whole;
        let level = match w {
            "FATAL" | "CRITICAL" | "CRIT" | "SEVERE" | "ERROR" | "ERR" | "EMERG" | "ALERT" => {
                Some(Level::Error)
            }
            "WARN" | "WARNING" => Some(Level::Warn),
            "INFO" | "NOTICE" => Some(Level::Info),
            "DEBUG" | "TRACE" | "FINE" | "FINER" | "FINEST" => Some(Level::Debug),
            "error" | "fatal" | "crit" | "emerg" | "alert" if bracketed => Some(Level::Error),
            "warn" | "warning" if bracketed => Some(Level::Warn),
            "info" | "notice" if bracketed => Some(Level::Info),
            "debug" | "trace" if bracketed => Some(Level::Debug),
            // Android logcat: a one-letter level after the pid and tid; socat's after its
            // `socat[24048]` (`N` a notice).
            "E" | "F" if after_number => Some(Level::Error),
            "W" if after_number => Some(Level::Warn),
            "I" | "N" if after_number => Some(Level::Info),
            "D" | "V" if after_number => Some(Level::Debug),
            _ => None,
        };
        if level.is_some() {
            return level;
        }
        previous_numeric = (!w.is_empty() && w.bytes().all(|b| b.is_ascii_digit()))
            || is_process_tag(word)
            || is_elapsed_time(w);
    }
    None
}

/// The one-letter level that opens a line in brackets before its date, as Tornado and the
/// Jupyter servers write it (`[W 2024-05-01 10:00:00.123 Hub base:41] …`, `[E 240501 10:00:00
/// web:2106] …`): `C` is critical.
fn bracketed_letter_level(line: &str) -> Option<Level> {
    let &[b'[', letter, b' ', digit, ..] = line.as_bytes() else {
        return None;
    };
    if !digit.is_ascii_digit() {
        return None;
    }
    match letter {
        b'C' | b'E' | b'F' => Some(Level::Error),
        b'W' => Some(Level::Warn),
        b'I' => Some(Level::Info),
        b'D' | b'V' => Some(Level::Debug),
        _ => None,
    }
}

/// Whether `word` is a time in seconds to the millisecond or finer (`0.000`, `12.345678`), as
/// PulseAudio's `(   3.083|   0.000) W: …` and other logs without a clock write it before a
/// one-letter level.
fn is_elapsed_time(word: &str) -> bool {
    word.split_once('.').is_some_and(|(whole, fraction)| {
        !whole.is_empty()
            && fraction.len() >= 3
            && whole
                .bytes()
                .chain(fraction.bytes())
                .all(|b| b.is_ascii_digit())
    })
}

/// What the last entry of a log gains when it is of a shape few entries share: it says how
/// the run ended (`Daemon terminated.`, a crash, a hang at one step).
const CLOSING_ENTRY_PRIOR: f32 = 1.5;
/// An entry whose template more entries than this share is one more of a repeated shape (the
/// last request of an access log).
const MAX_CLOSING_REPEATS: usize = 2;

/// Raises the last entry of the log when it is not one more of a repeated shape.
fn raise_closing_entry(units: &mut [Unit]) {
    let Some(last) = units.iter().rposition(|u| u.parent.get().is_none()) else {
        return;
    };
    let template = units[last].template;
    let repeats = units.iter().filter(|u| u.template == template).count();
    if repeats <= MAX_CLOSING_REPEATS {
        units[last].prior += CLOSING_ENTRY_PRIOR;
    }
}

/// The process a syslog line names among its first words: `in.tftpd[21825]:`.
fn process_tag(line: &str) -> Option<&str> {
    line.split_ascii_whitespace()
        .take(6)
        .find(|word| is_process_tag(word))
}

/// Whether `word` is a process and its pid: `in.tftpd[21825]:`, `socat[24048]`.
fn is_process_tag(word: &str) -> bool {
    let word = word.strip_suffix(':').unwrap_or(word);
    word.strip_suffix(']')
        .and_then(|w| w.split_once('['))
        .is_some_and(|(name, pid)| {
            !name.is_empty() && !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit())
        })
}

/// Spreads a status over a template's bits (the golden ratio's, as Fibonacci hashing does).
const STATUS_MIX: u64 = 0x9E37_79B9_7F4A_7C15;

/// Warnings held by at most one entry in this many are rare.
const RARE_LEVEL_SHARE: usize = 100;
/// What a rare stated warning gains over a guessed error.
const RARE_WARNING_EXTRA: f32 = 1.5;

/// Prior of an entry by its level; a level stated by the log counts more than one guessed from
/// its words.
pub(crate) fn level_prior(level: Level, explicit: bool) -> f32 {
    match (level, explicit) {
        (Level::Error, true) => 6.0,
        (Level::Error, false) => 3.0,
        (Level::Warn, true) => 2.5,
        (Level::Warn, false) => 1.0,
        _ => 0.0,
    }
}

/// A failure a log states at a low level (amqtt's `DEBUG - Authentication failure: password
/// mismatch for user …`): its words say what its level does not, and it gains as a warning
/// guessed from words would. A trace logged one entry a line (`[INFO] Traceback …`) ends with
/// an entry whose message is the exception (`[INFO] ZeroDivisionError: division by zero`):
/// that is an error, as the exception line of a trace under one entry is.
fn understated_failure_prior(line: &str, level: Level, explicit: bool) -> f32 {
    if !explicit || !matches!(level, Level::Debug | Level::Info) {
        0.0
    } else if message_raises(line) {
        level_prior(Level::Error, false)
    } else if doc::level_from_words(line) == Level::Error {
        level_prior(Level::Warn, false)
    } else {
        0.0
    }
}

/// Words of an entry's head (time, level, logger) before its message.
const MAX_HEAD_WORDS: usize = 6;

/// Whether an entry's message, after its head, is a raised exception (`KeyError: 'region'`).
fn message_raises(line: &str) -> bool {
    // Most lines name no exception: one scan each sets them aside.
    if !line.contains("Error") && !line.contains("Exception") {
        return false;
    }
    let mut rest = line;
    for _ in 0..MAX_HEAD_WORDS {
        let Some((_, after)) = rest.split_once(char::is_whitespace) else {
            return false;
        };
        rest = after.trim_start();
        if is_raised_exception(rest) && rest.contains(':') {
            return true;
        }
    }
    false
}

pub(crate) fn build(text: &str) -> Doc<'_> {
    let mut units: Vec<Unit> = Vec::with_capacity(doc::line_count(text));
    let mut counts = [0usize; 5];
    let mut templates = HashSet::new();
    let mut entry_lines = 0;
    let mut entry_head: Option<usize> = None;
    // Whether the entry so far holds a Python trace, whose exception line ends it.
    let mut in_python_trace = false;
    // The entries whose line states a warning.
    let mut stated_warnings: Vec<usize> = Vec::new();
    // The entries that give a request's response status, with it.
    let mut statuses: Vec<(usize, u16)> = Vec::new();
    for span in doc::lines(text) {
        let line = &text[span.clone()];
        if line.trim().is_empty() {
            continue;
        }
        // A rule of dashes ends an entry: what follows it (a listing's totals) is no part of
        // the line above.
        // The exception a Python trace ends with (`KeyError: 'item_id'`), past the frames that
        // fill its entry's first unit, is a unit of its own under the entry: what an answer
        // quotes, not the framework's frames above it.
        if line.starts_with("Traceback (most recent call last)") {
            in_python_trace = true;
        }
        // Only past the entry's first unit: a trace that fits keeps its exception there.
        let raised = in_python_trace
            && entry_head.is_some_and(|head| head + 1 < units.len())
            && is_raised_exception(line);
        // Python's chaining of one exception to the next starts a unit: the exception raised
        // before it, the root cause, ends its own, not read as the head of the next trace.
        let chained = is_exception_chaining(line);
        let in_first_unit = entry_head.is_some_and(|head| head + 1 == units.len());
        let unit_lines = if in_first_unit && !in_python_trace && is_frame_line(line) {
            FIRST_UNIT_LINES
        } else {
            MAX_ENTRY_LINES
        };
        let continues = !is_rule_of_dashes(line)
            && !starts_entry(line)
            && !raised
            && !chained
            && entry_head.is_some()
            && entry_lines < unit_lines;
        if continues && let Some(last) = units.last_mut() {
            // An entry is the kind its lines make, not its first line alone: a reply's headers
            // under `Date:` differ in their error line. A trace's indented frames do not count:
            // where it was raised is not another kind of failure.
            if !in_python_trace
                && !line.starts_with(char::is_whitespace)
                && let Some(template) = last.template
            {
                last.template = Some(doc::template_id(
                    template.get().rotate_left(7) ^ doc::template_of(line).get(),
                ));
            }
            last.span.set_end(span.end);
            last.weight += 1;
            entry_lines += 1;
            // An entry that dumps what a device or a peer said (a printer's `| Recv: Error:
            // Checksum mismatch` under an INFO `Got a resend request`) failed by what it
            // quotes: it weighs as a stated warning, though its head is routine.
            if !in_python_trace
                && last.level < Level::Warn
                && last.prior < level_prior(Level::Warn, true)
                && doc::level_from_words(line) == Level::Error
            {
                last.prior = level_prior(Level::Warn, true);
            }
            // An entry that goes on to an exception at the margin, its frames under it (a web
            // server's `final handler default 403`, then `PermissionDeniedError: Not allowed`), failed
            // whatever its head line says.
            if last.level < Level::Error && is_raised_exception(line) {
                last.level = Level::Error;
                last.prior = last.prior.max(level_prior(Level::Error, false));
            }
            // A trace that fits its entry ends with what was raised: one line logs every
            // exception of a remote call (`Exception caught`), and what it caught is the
            // entry's kind, not a repeat of the one before.
            if in_python_trace
                && is_raised_exception(line)
                && let Some(template) = last.template
            {
                last.template = Some(doc::template_id(
                    template.get() ^ doc::template_of(line).get().rotate_left(1),
                ));
            }
            continue;
        }
        let starts = starts_entry(line);
        let (level, explicit) = match explicit_level(line) {
            Some(level) => (level, true),
            None if raised => (Level::Error, false),
            None => (doc::level_from_words(line), false),
        };
        let mut template = doc::template_of(line);
        // An access log's status is a category: a 404 is another kind of line than a 200.
        if let Some(status) = access::response_status(line) {
            statuses.push((units.len(), status));
            template =
                doc::template_id(template.get() ^ u64::from(status).wrapping_mul(STATUS_MIX));
        }
        templates.insert(template);
        counts[level as usize] += 1;
        // An error right after an entry of the same process (`in.tftpd[21825]:` twice) is that
        // entry's failure: the request that failed is the error's context.
        let same_process_before = (level == Level::Error && starts)
            .then(|| process_tag(line))
            .flatten()
            .and_then(|tag| {
                let before = units.len().checked_sub(1)?;
                let previous = &units[before];
                let text = &text[previous.span.range()];
                (previous.parent.get().is_none()
                    && previous.level != Level::Error
                    && process_tag(text) == Some(tag))
                .then_some(before)
            });
        if level == Level::Warn && explicit {
            stated_warnings.push(units.len());
        }
        units.push(Unit {
            span: span.into(),
            // A trace too long for one unit continues under its entry's first line.
            parent: if starts {
                same_process_before
            } else {
                entry_head
            }
            .into(),
            template: Some(template),
            prior: level_prior(level, explicit) + understated_failure_prior(line, level, explicit),
            level,
            weight: 1,
            ..Unit::default()
        });
        if starts || entry_head.is_none() {
            entry_head = Some(units.len() - 1);
            in_python_trace = false;
        }
        if raised {
            in_python_trace = false;
        }
        entry_lines = 1;
    }
    // A stated warning few entries share (six among thousands of debug lines) is as telling
    // as an error.
    if counts[Level::Warn as usize] * RARE_LEVEL_SHARE <= units.len() {
        for &u in &stated_warnings {
            units[u].prior =
                level_prior(Level::Error, false).max(units[u].prior) + RARE_WARNING_EXTRA;
        }
    }
    raise_failed_statuses(&mut units, &statuses, &mut counts);
    raise_closing_entry(&mut units);
    let total: usize = units.iter().map(|u| u.weight as usize).sum();
    let mut overview = format!(
        "[log: {} lines, {} distinct templates",
        thousands(total),
        thousands(templates.len())
    );
    for level in [Level::Error, Level::Warn, Level::Info, Level::Debug] {
        if counts[level as usize] > 0 {
            overview.push_str(&format!(
                ", {} {}",
                thousands(counts[level as usize]),
                level.label().unwrap_or_default()
            ));
        }
    }
    overview.push(']');
    Doc {
        kind: ContentKind::Log,
        source: text.into(),
        units,
        overview: Some(overview),
        noun: "lines",
        fields: Vec::new(),
        fuller: Default::default(),
    }
}

/// An access log's refused and failed requests (4xx, 5xx) are its warnings and errors, whatever
/// level the line states, unless a twentieth of the requests or more got that status (a failure
/// that common is routine there). A status few requests got (a 206 or a 403 among thousands of
/// 200s) is what the log is read for, whatever its class: as telling as a rare stated warning.
/// `counts` are the entries per level, kept in step.
fn raise_failed_statuses(units: &mut [Unit], statuses: &[(usize, u16)], counts: &mut [usize; 5]) {
    /// Fewer requests than this tell no rarity.
    const MIN_REQUESTS: usize = 20;
    /// A status at most one request in this many got is not routine.
    const UNCOMMON_SHARE: usize = 20;
    let mut per_status: HashMap<u16, usize> = HashMap::new();
    for &(_, status) in statuses {
        *per_status.entry(status).or_default() += 1;
    }
    let many = statuses.len() >= MIN_REQUESTS;
    for &(u, status) in statuses {
        let count = per_status[&status];
        let unit = &mut units[u];
        let level = access::status_level(status);
        if level > unit.level && (!many || count * UNCOMMON_SHARE <= statuses.len()) {
            counts[unit.level as usize] -= 1;
            counts[level as usize] += 1;
            unit.level = level;
            unit.prior = unit.prior.max(level_prior(level, false));
        }
        if many && count * RARE_LEVEL_SHARE <= statuses.len() {
            unit.prior = level_prior(Level::Warn, true).max(unit.prior) + RARE_WARNING_EXTRA;
        }
    }
}

/// `n` with thousands separators: `1,203` (the same grouping the truncation marker uses).
pub(crate) use crate::methods::truncate::group as thousands;

#[cfg(test)]
mod tests;
