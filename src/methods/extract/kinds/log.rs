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

/// Whether `line` starts a log entry: a time of day or date near its start, or a level word
/// among its first words.
/// Whether `line` is the exception a trace ends with, at the margin: `KeyError: 'item_id'`,
/// `sqlite3.OperationalError: database is locked`.
fn is_raised_exception(line: &str) -> bool {
    if line.starts_with(char::is_whitespace) {
        return false;
    }
    let name = line
        .split_once(':')
        .map_or(line, |(name, _)| name)
        .trim_end();
    !name.contains(' ') && doc::is_exception_name(name.rsplit('.').next().unwrap_or(name))
}

/// Whether `line` is a frame of a stack trace: indented (`\tat com.x.Y.run(Y.java:9)`,
/// `\t/app/app.rb:20:in 'block'`), and no exception (`\tjava.lang.ArithmeticException: / by
/// zero`, the root cause a Java trace names under its entry).
fn is_frame_line(line: &str) -> bool {
    line.starts_with(char::is_whitespace) && !is_raised_exception(line.trim_start())
}

pub(crate) fn starts_entry(line: &str) -> bool {
    has_timestamp(line) || explicit_level(line).is_some()
}

/// Whether `line` is a rule of dashes (`--------  ------  -------`, `===`, `+---+`): it sets
/// apart what follows, a listing's totals under its rows.
pub(crate) fn is_rule_of_dashes(line: &str) -> bool {
    line.trim().bytes().all(|b| b" -=+".contains(&b))
}

fn has_timestamp(line: &str) -> bool {
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
        previous_numeric =
            (!w.is_empty() && w.bytes().all(|b| b.is_ascii_digit())) || is_process_tag(word);
    }
    None
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
fn level_prior(level: Level, explicit: bool) -> f32 {
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
/// guessed from words would.
fn understated_failure_prior(line: &str, level: Level, explicit: bool) -> f32 {
    if explicit
        && matches!(level, Level::Debug | Level::Info)
        && doc::level_from_words(line) == Level::Error
    {
        level_prior(Level::Warn, false)
    } else {
        0.0
    }
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
        let in_first_unit = entry_head.is_some_and(|head| head + 1 == units.len());
        let unit_lines = if in_first_unit && !in_python_trace && is_frame_line(line) {
            FIRST_UNIT_LINES
        } else {
            MAX_ENTRY_LINES
        };
        let continues = !is_rule_of_dashes(line)
            && !starts_entry(line)
            && !raised
            && entry_head.is_some()
            && entry_lines < unit_lines;
        if continues && let Some(last) = units.last_mut() {
            last.span.set_end(span.end);
            last.weight += 1;
            entry_lines += 1;
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
mod tests {
    use super::*;

    #[test]
    fn recognises_common_log_prefixes() {
        assert!(starts_entry(
            "2015-07-29 17:41:44,747 - INFO  [QuorumPeer] - x"
        ));
        assert!(starts_entry("081109 203615 148 INFO dfs.DataNode: x"));
        assert!(starts_entry(
            "Jun 14 15:16:01 combo sshd(pam_unix)[19939]: x"
        ));
        assert!(starts_entry(
            "[Sun Dec 04 04:47:44 2005] [error] mod_jk child"
        ));
        assert!(!starts_entry("    at org.example.Foo.bar(Foo.java:12)"));
    }

    #[test]
    fn a_failure_stated_at_a_low_level_gains_as_a_warning() {
        let text = "[2026-11-28 20:52:04,887] auth:217 :: DEBUG - Authentication failure: \
                    password mismatch for user 'boiler'\n\
                    [2026-11-28 20:52:04,888] auth:220 :: DEBUG - Authentication checked for \
                    user 'boiler'\n\
                    [2026-11-28 20:52:04,889] auth:221 :: ERROR - Authentication backend down\n";
        let doc = build(text);
        assert!(doc.units[0].prior > doc.units[1].prior);
        assert_eq!(doc.units[0].level, Level::Debug);
        assert!(doc.units[2].prior > doc.units[0].prior);
    }

    #[test]
    fn reads_explicit_levels() {
        assert_eq!(
            explicit_level("2015-07-29 23:44:28,903 - ERROR [x] - y"),
            Some(Level::Error)
        );
        assert_eq!(
            explicit_level("[Sun Dec 04 04:47:44 2005] [notice] ok"),
            Some(Level::Info)
        );
        assert_eq!(
            explicit_level("03-17 16:13:38.811  1702  2395 W Foo: x"),
            Some(Level::Warn)
        );
        // socat: a one-letter level after the process and its pid.
        assert_eq!(
            explicit_level("2026/11/28 17:50:46 socat[24048] W exiting on signal 15"),
            Some(Level::Warn)
        );
        assert_eq!(
            explicit_level("2026/11/28 17:50:31 socat[24075] N inactivity timeout triggered"),
            Some(Level::Info)
        );
        assert_eq!(explicit_level("see socat W for the rest"), None);
        assert_eq!(
            explicit_level("Nov 28 10:00:00 host smartd[812]: I/O error on /dev/sda"),
            None
        );
        assert_eq!(
            explicit_level("[2026-11-28 03:53:06,141: WARNING/MainProcess] No hostname"),
            Some(Level::Warn)
        );
        assert_eq!(explicit_level("an error happened"), None);
    }

    #[test]
    fn stack_traces_stay_with_their_entry() {
        let text = "2020-01-01 00:00:00 ERROR boom\n  at a.b(C.java:1)\n  at d.e(F.java:2)\n2020-01-01 00:00:01 INFO ok\n";
        let doc = build(text);
        assert_eq!(doc.units.len(), 2);
        assert!(doc.text(0).ends_with("F.java:2)"));
        assert_eq!(doc.units[0].level, Level::Error);
    }

    #[test]
    fn a_long_trace_keeps_its_top_with_the_entry_and_its_frames_under_it() {
        // Sinatra's dumped error: the class and message, then a dozen frames of the framework.
        let mut text = String::from(
            "2026-11-28 07:06:42 - KeyError - key not found: \"chai\":\n\t/app/app.rb:21:in `fetch'\n",
        );
        for i in 0..10 {
            text.push_str(&format!("\t/gems/sinatra/base.rb:{i}:in `route_eval'\n"));
        }
        text.push_str(
            "2026-11-28 07:06:43 - NoMethodError - undefined method `sum' for nil:NilClass:\n",
        );
        let doc = build(&text);
        assert_eq!(
            doc.text(0).lines().count(),
            FIRST_UNIT_LINES,
            "{}",
            doc.text(0)
        );
        assert_eq!(doc.units[1].parent.get(), Some(0));
        assert!(
            doc.text(doc.units.len() - 1)
                .starts_with("2026-11-28 07:06:43")
        );
        // A Java root cause under the entry is no frame: it stays in the entry's first unit.
        assert!(!is_frame_line("\tjava.lang.ArithmeticException: / by zero"));
        assert!(is_frame_line(
            "\t\tat org.apache.jsp.price_jsp._jspService(price_jsp.java:121)"
        ));
    }

    #[test]
    fn the_exception_a_python_trace_ends_with_is_a_unit_under_its_entry() {
        let mut text = String::from(
            "2026-11-28 07:04:48,407 ERROR [app] Exception on /orders [POST]\nTraceback (most recent call last):\n",
        );
        for i in 0..8 {
            text.push_str(&format!("  File \"/venv/flask/app.py\", line {i}, in dispatch\n    rv = self.dispatch_request()\n"));
        }
        text.push_str("sqlite3.OperationalError: database is locked\n");
        text.push_str("2026-11-28 07:04:48,409 INFO [werkzeug] \"POST /orders HTTP/1.1\" 500 -\n");
        let doc = build(&text);
        let texts: Vec<&str> = (0..doc.units.len()).map(|u| doc.text(u)).collect();
        let raised = texts
            .iter()
            .position(|t| t.starts_with("sqlite3.OperationalError"))
            .expect("the exception starts a unit");
        assert_eq!(doc.units[raised].level, Level::Error, "{texts:?}");
        assert_eq!(doc.units[raised].parent.get(), Some(0), "{texts:?}");
        assert!(is_raised_exception("KeyError: 'item_id'"));
        assert!(!is_raised_exception("    raise KeyError(key)"));
        assert!(!is_raised_exception("The TypeError: was expected"));
    }

    #[test]
    fn a_short_trace_s_exception_is_part_of_its_entry_s_kind() {
        // The same line logs every exception a remote call raised; what was raised sets the
        // entries apart, and the same exception of another meter is a repeat.
        let mut text = String::new();
        for (i, raised) in [
            "PermissionError: meter MTR-0113 is flagged tampered",
            "PermissionError: meter MTR-0114 is flagged tampered",
            "KeyError: 'MTR-9999'",
        ]
        .iter()
        .enumerate()
        {
            text.push_str(&format!(
                "2026-11-29 09:40:4{i},021 DEBUG [worker] rpyc: Exception caught\n\
                 Traceback (most recent call last):\n  File \"/srv/server.py\", line 38, in read\n\
                 \x20   m = METERS[meter_id]\n{raised}\n"
            ));
        }
        let doc = build(&text);
        assert_eq!(doc.units.len(), 3, "one unit per entry");
        assert_eq!(doc.units[0].template, doc.units[1].template);
        assert_ne!(doc.units[0].template, doc.units[2].template);
    }

    #[test]
    fn an_error_keeps_the_entry_of_its_process_just_before_it() {
        let text = "Nov 27 20:57:11 gw in.tftpd[21819]: RRQ from 127.0.0.1 filename initrd.img\n\
Nov 27 20:57:11 gw in.tftpd[21825]: RRQ from 127.0.0.1 filename firmware/core.bin\n\
Nov 27 20:57:11 gw in.tftpd[21825]: sending NAK (0, Permission denied) to 127.0.0.1\n\
Nov 27 20:57:12 gw in.tftpd[21830]: RRQ from 127.0.0.1 filename pxelinux.0\n\
Nov 27 20:57:12 gw in.tftpd[21831]: sending NAK (0, Permission denied) to 127.0.0.1\n";
        let doc = build(text);
        assert_eq!(doc.units[2].level, Level::Error);
        assert_eq!(doc.units[2].parent.get(), Some(1));
        // Another process's entry before it is no part of the error.
        assert_eq!(doc.units[4].parent.get(), None);
        assert_eq!(process_tag(doc.text(1)), Some("in.tftpd[21825]:"));
    }

    #[test]
    fn a_rare_stated_warning_weighs_more_than_a_common_one() {
        let log = |warn_every: usize| {
            (0..300)
                .map(|i| {
                    let level = if i % warn_every == 7 {
                        "WARNING"
                    } else {
                        "DEBUG"
                    };
                    format!(
                        "[2026-11-27 20:57:{:02} +0000] [24729] [{level}] request {i} done\n",
                        i % 60
                    )
                })
                .collect::<String>()
        };
        let (rare_text, common_text) = (log(200), log(10));
        let (rare, common) = (build(&rare_text), build(&common_text));
        let warning = |doc: &Doc<'_>| {
            doc.units
                .iter()
                .find(|u| u.level == Level::Warn)
                .map(|u| u.prior)
                .unwrap()
        };
        assert!(
            warning(&rare) > level_prior(Level::Error, false),
            "{}",
            warning(&rare)
        );
        assert_eq!(warning(&common), level_prior(Level::Warn, true));
    }

    #[test]
    fn an_access_logs_rare_and_failed_statuses_stand_out() {
        let mut text = String::new();
        for i in 0..400 {
            let status = match i {
                100 => 206,
                200 => 403,
                300 => 502,
                _ if i % 40 == 0 => 404,
                _ if i % 4 == 1 => 503,
                _ => 200,
            };
            text.push_str(&format!(
                "127.0.0.1 - - [27/Nov/2026:20:59:{:02} +0000] \"GET /docs/page.html HTTP/1.1\" {status} {}\n",
                i % 60,
                1000 + i
            ));
        }
        let doc = build(&text);
        let unit = |status: &str| {
            doc.units
                .iter()
                .find(|u| text[u.span.range()].contains(&format!("\" {status} ")))
                .unwrap()
        };
        // A status is part of the line's kind: a 206 is no repeat of the 200s.
        assert_ne!(unit("206").template, unit("200").template);
        assert_eq!(unit("404").level, Level::Warn);
        assert_eq!(unit("502").level, Level::Error);
        // A failure a quarter of the requests share is routine there.
        assert_eq!(unit("503").level, Level::None);
        // The rare ones rank above the common failures, and those above the successes.
        assert!(
            unit("206").prior > unit("404").prior,
            "{}",
            unit("206").prior
        );
        assert!(unit("403").prior > unit("404").prior);
        assert!(unit("404").prior > unit("200").prior);
    }

    #[test]
    fn thousands_are_separated() {
        assert_eq!(thousands(1203), "1,203");
        assert_eq!(thousands(12), "12");
        assert_eq!(thousands(1_000_000), "1,000,000");
    }
}
