//! Rules about tool dumps of indented fields (`openssl x509 -text`, `lshw`, `dmidecode`,
//! `systemd-analyze dump`): a `Key:` line with nothing after the colon holds its value on the
//! deeper lines under it, and long runs of hex bytes (keys, signatures, fingerprints) fill such
//! dumps without saying anything an agent reads.

use super::super::doc::Doc;

/// The share of a bare `Key:` line's query match its value lines gain.
const KEY_VALUE_SHARE: f32 = 0.9;
/// How many lines under a bare key count as its value (a serial number, a date, a name).
const MAX_VALUE_LINES: usize = 2;
/// How many field lines under a bare key count as its record's fields …
const MAX_FIELD_LINES: usize = 12;
/// … and the share of the key's query match each gains.
const FIELD_SHARE: f32 = 0.6;
/// A field's key and value are short; longer ones are a message or prose.
const MAX_FIELD_KEY_BYTES: usize = 40;
const MAX_FIELD_VALUE_BYTES: usize = 60;
/// The share of its score a hex dump line keeps when the query does not reach it.
const HEX_DUMP_SHARE: f32 = 0.2;
/// A line needs at least this many `:`-separated hex bytes to be a dump line.
const MIN_HEX_BYTES: usize = 8;
/// What the first row under a table's header line in command output gains.
const FIRST_ROW_WEIGHT: f32 = 3.0;
/// A header line of a table has at least this many column names.
const MIN_HEADER_NAMES: usize = 3;
/// The share of a table header's query match that a row the query also reaches gains.
const NAMED_TABLE_ROW_SHARE: f32 = 1.0;
/// How many lines in a row that are no rows of the table (a scanner's script output under a
/// port) it reads past before the table has ended.
const MAX_LINES_BETWEEN_ROWS: usize = 40;

/// The first lines under a `Key:` line without a value (`Serial Number:` over the serial) are
/// that key's value: they gain most of the key's query match, since their own text (a run of
/// hex digits, a date) never holds the query's words. When the lines under it are fields of
/// their own (`default: "0.0.0.0"` under an option's name in a YAML file read as text), the key
/// is a record and each of its first fields gains part of its match, wherever a multi-line
/// value between them puts it.
pub(super) fn raise_key_values(doc: &Doc<'_>, query_scores: &mut [f32]) {
    let own = query_scores.to_vec();
    // The run of lines under one parent, and its length so far.
    let mut parent = None;
    let mut nth = 0;
    // Field lines seen so far under each parent, across the deeper lines between them.
    let mut fields: std::collections::HashMap<usize, usize> = std::collections::HashMap::new();
    for (u, unit) in doc.units.iter().enumerate() {
        let Some(p) = unit.parent.get().filter(|&p| p < u) else {
            parent = None;
            continue;
        };
        if parent != Some(p) {
            parent = Some(p);
            nth = 0;
        }
        nth += 1;
        if own[p] <= 0.0 || !is_bare_key(doc.text(p)) {
            continue;
        }
        if nth <= MAX_VALUE_LINES {
            query_scores[u] += KEY_VALUE_SHARE * own[p];
        } else if is_field_line(doc.text(u)) {
            let seen = fields.entry(p).or_default();
            *seen += 1;
            if *seen <= MAX_FIELD_LINES {
                query_scores[u] += FIELD_SHARE * own[p];
            }
        }
    }
}

/// Whether `line` is one `key: value` field: a short identifier, then a short value (a
/// compiler's `note: …` or `error[E0599]: …` is a message, not a field).
fn is_field_line(line: &str) -> bool {
    line.trim().split_once(": ").is_some_and(|(key, value)| {
        let value = value.trim();
        !key.is_empty()
            && key.len() <= MAX_FIELD_KEY_BYTES
            && key
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b))
            && !value.is_empty()
            && value.len() <= MAX_FIELD_VALUE_BYTES
    })
}

/// Hex dump lines (`30:65:02:31:00:89:6a:8d:…`, a modulus or a signature) that the query does
/// not reach keep a small share of their score, so the fields around them come first.
pub(super) fn lower_hex_dumps(doc: &Doc<'_>, query_scores: &[f32], scores: &mut [f32]) {
    for (u, s) in scores.iter_mut().enumerate() {
        if query_scores[u] <= 0.0 && is_hex_dump(doc.text(u)) {
            *s *= HEX_DUMP_SHARE;
        }
    }
}

/// A table inside command output, after lines of other text (`cProfile`'s totals, `top`'s
/// summary), is not read as a table; but a tool that sorts its rows puts the extreme one
/// (the most time, the most memory) right under the header line: that row gains a little.
pub(super) fn raise_first_rows(doc: &Doc<'_>, scores: &mut [f32]) {
    for (u, s) in scores.iter_mut().enumerate().skip(1) {
        if is_header_line(doc.text(u - 1)) && is_row_under(doc.text(u - 1), doc.text(u)) {
            *s += FIRST_ROW_WEIGHT;
        }
    }
}

/// A table inside command output whose header the query names (`PORT  STATE  SERVICE` of
/// "which ports came back open, what service…") holds the answer in the rows the query also
/// reaches by a value (`open`): each such row gains the header's match, so it
/// outranks the lines around the table that name the same value in passing (`Discovered open
/// port …`). Rows the query does not reach stay as they are: a table of a hundred closed ports
/// is not all the answer.
pub(super) fn raise_rows_of_named_tables(doc: &Doc<'_>, query_scores: &mut [f32]) {
    let own = query_scores.to_vec();
    for (h, &header_score) in own.iter().enumerate() {
        if header_score <= 0.0 || !is_header_line(doc.text(h)) {
            continue;
        }
        let columns = Columns::of(doc.text(h));
        let mut between = 0;
        for u in h + 1..doc.units.len() {
            let line = doc.text(u);
            if line.trim().is_empty() || is_header_line(line) {
                break;
            }
            if !columns.line_up(line) {
                between += 1;
                if between > MAX_LINES_BETWEEN_ROWS {
                    break;
                }
                continue;
            }
            between = 0;
            if own[u] > 0.0 {
                query_scores[u] += NAMED_TABLE_ROW_SHARE * header_score;
            }
        }
    }
}

/// The columns of a table's header line: the byte span of each name, and whether the line
/// is indented.
struct Columns {
    spans: Vec<(usize, usize)>,
    indented: bool,
}

impl Columns {
    fn of(header: &str) -> Columns {
        let mut spans = Vec::new();
        let mut start = None;
        for (i, b) in header.bytes().enumerate() {
            match (b.is_ascii_whitespace(), start) {
                (false, None) => start = Some(i),
                (true, Some(s)) => {
                    spans.push((s, i));
                    start = None;
                }
                _ => {}
            }
        }
        if let Some(s) = start {
            spans.push((s, header.len()));
        }
        Columns {
            spans,
            indented: header.starts_with(' '),
        }
    }

    /// Whether `row` lines up under these columns: each column the row reaches starts a field
    /// of the row where its name starts (left-aligned) or ends one where its name ends
    /// (right-aligned numbers), and the row reaches past its first two columns.
    fn line_up(&self, row: &str) -> bool {
        let r = row.as_bytes();
        if self.spans.len() < MIN_HEADER_NAMES
            || r.len() <= self.spans[1].0
            || (r[0] == b' ' && !self.indented)
        {
            return false;
        }
        let blank = |i: usize| r.get(i).is_none_or(|b| *b == b' ');
        self.spans.iter().skip(1).all(|&(start, end)| {
            start >= r.len()
                || (blank(start - 1) && !blank(start))
                || (end <= r.len() && !blank(end - 1) && blank(end))
        })
    }
}

/// Whether `line` reads as a table's header: at least three names without digits, some of
/// them apart by a run of spaces.
fn is_header_line(line: &str) -> bool {
    let t = line.trim();
    let names = t.split_whitespace();
    t.contains("  ")
        && names.clone().count() >= MIN_HEADER_NAMES
        && names
            .into_iter()
            .all(|n| n.chars().any(char::is_alphabetic) && !n.chars().any(|c| c.is_ascii_digit()))
}

/// Whether `row` is a row under `header`: as many fields, a number among them.
fn is_row_under(header: &str, row: &str) -> bool {
    row.split_whitespace().count() == header.split_whitespace().count()
        && row.chars().any(|c| c.is_ascii_digit())
}

/// Whether `line` is a key with its value on the lines below: one or a few words and a colon.
fn is_bare_key(line: &str) -> bool {
    let t = line.trim();
    t.strip_suffix(':')
        .is_some_and(|key| !key.is_empty() && !key.contains(':') && key.split(' ').count() <= 5)
}

/// Whether unit `u` starts a record of a dump of indented fields: an unindented bare key
/// (`Certificate:`) with its fields indented under it (not a `dir:` line of `ls -lR`, whose
/// entries are not indented).
pub(super) fn is_record_head(doc: &Doc<'_>, u: usize) -> bool {
    let line = doc.text(u);
    !line.starts_with(char::is_whitespace)
        && is_bare_key(line)
        && u + 1 < doc.units.len()
        && doc.text(u + 1).starts_with(char::is_whitespace)
}

/// Whether `line` is made of `:`-separated pairs of hex digits only.
pub(super) fn is_hex_dump(line: &str) -> bool {
    let t = line.trim().trim_end_matches(':');
    let mut bytes = 0;
    for part in t.split(':') {
        if part.len() != 2 || !part.bytes().all(|b| b.is_ascii_hexdigit()) {
            return false;
        }
        bytes += 1;
    }
    bytes >= MIN_HEX_BYTES
}

#[cfg(test)]
mod tests {
    use super::super::tests::scored;
    use super::*;

    /// The shape of `openssl x509 -noout -text`: bare keys over their values, hex dumps.
    const CERT: &str = "Certificate:\n    Data:\n        Version: 3 (0x2)\n        Serial Number:\n\
            \x20           82:10:cf:b0:d2:40:e3:59:44:63:e0:bb:63:82:8b:00\n\
            \x20       Signature Algorithm: sha256WithRSAEncryption\n\
            \x20       Subject Public Key Info:\n\
            \x20           Public Key Algorithm: rsaEncryption\n\
            \x20               Modulus:\n\
            \x20                   00:ad:e8:24:73:f4:14:37:f3:9b:9e:2b:57:28:1c:\n\
            \x20                   87:be:dc:b7:df:38:90:8c:6e:3c:e6:57:a0:78:f7:\n";

    #[test]
    fn a_bare_key_named_by_the_query_lends_its_match_to_its_value() {
        let s = scored(CERT, "what is the certificate's serial number");
        let plain = scored(CERT, "what is the certificate's version");
        assert!(
            s[4] > plain[4],
            "the serial gains its key's match: {s:?} {plain:?}"
        );
        assert!(s[4] > s[9], "{s:?}");
        assert!(is_bare_key("        Serial Number:"));
        assert!(!is_bare_key("        Version: 3 (0x2)"));
    }

    #[test]
    fn the_first_row_under_a_table_header_in_output_gains() {
        // The shape of `python -m cProfile -s tottime`: totals, then a table sorted by time.
        let text = "         2191 function calls in 0.132 seconds\n\
                    \x20  Ordered by: internal time\n\
                    \x20  ncalls  tottime  percall  cumtime  percall filename:lineno(function)\n\
                    \x20    9008    0.020    0.000    0.032    0.000 pydoc.py:213(replace)\n\
                    \x20    4558    0.001    0.000    0.012    0.000 pydoc.py:531(escape)\n\
                    \x20     104    0.001    0.000    0.059    0.001 pydoc.py:1024(docroutine)\n";
        let s = scored(text, "which pydoc function takes the most internal time");
        assert!(s[3] > s[4] && s[3] > s[5], "{s:?}");
        assert!(!is_header_line("Ordered by: internal time"));
    }

    #[test]
    fn hex_dumps_rank_below_the_fields_around_them() {
        let s = scored(CERT, "which algorithms does it use");
        assert!(s[9] < s[5] && s[10] < s[7], "{s:?}");
        assert!(is_hex_dump(
            "   30:65:02:31:00:89:6a:8d:47:e7:ec:fc:6e:55:03:d9:67:6c:"
        ));
        assert!(!is_hex_dump("2024-05-01 10:00:00"));
        assert!(!is_hex_dump("aa:bb"));
    }

    #[test]
    fn the_fields_of_a_key_the_query_names_gain_past_a_long_value() {
        // A YAML file of options read as text: a multi-line description between the option's
        // name and its default.
        let text = "scheduler:\n  options:\n    health_check_server_host:\n      description: |\n        The web server serves a health check\n        on this host.\n      version_added: 2.8.0\n      type: string\n      default: \"0.0.0.0\"\n    parsing_processes:\n      description: |\n        How many processes parse.\n      type: integer\n      default: \"2\"\n";
        let s = scored(text, "Which host does health_check_server_host default to?");
        // `default: "0.0.0.0"` (unit 8) outranks the other option's default (unit 13).
        assert!(s[8] > s[13] + 1.0, "{s:?}");
        assert!(is_field_line("      default: \"0.0.0.0\""));
        assert!(!is_field_line(
            "note: If the actual output is the correct output you can bless it by rerunning"
        ));
        assert!(!is_field_line(
            "error[E0599]: no method named `as_dyn_error`"
        ));
    }

    #[test]
    fn the_rows_a_query_reaches_in_a_table_it_names_gain_the_header_s_match() {
        // The shape of `nmap -sV -d`: debug lines naming open ports in passing, then the port
        // table, with script output under some rows.
        let mut text = String::from("Starting Nmap 7.93 ( https://nmap.org )\n");
        text.push_str("Discovered open port 7021/tcp on 127.0.0.1\n");
        text.push_str("Discovered open port 6697/tcp on 127.0.0.1\n");
        text.push_str("PORT     STATE  SERVICE         REASON         VERSION\n");
        for p in 2000..2010 {
            text.push_str(&format!("{p}/tcp closed unknown         reset ttl 64\n"));
        }
        text.push_str("6697/tcp open   ircs-u?         syn-ack ttl 64\n");
        text.push_str("| fingerprint-strings: \n|_    ERR unknown symbol\n");
        text.push_str("7021/tcp open   dpserveadmin?   syn-ack ttl 64\n");
        let s = scored(
            &text,
            "which ports came back open, and what service did nmap assign?",
        );
        for row in [14, 17] {
            assert!(s[row] > s[1] && s[row] > s[2], "{s:?}");
        }
        // A closed port the query does not reach gains nothing.
        assert!(s[4] < s[1], "{s:?}");
        let columns = Columns::of("PORT     STATE  SERVICE         REASON         VERSION");
        assert!(
            columns
                .line_up("8030/tcp open   http            syn-ack ttl 64 Golang net/http server")
        );
        assert!(!columns.line_up("| fingerprint-strings: "));
    }
}
