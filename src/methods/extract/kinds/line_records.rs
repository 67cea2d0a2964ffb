//! Where the records of a command's output start, told from its lines alone: at a key word
//! every record starts with (`commit` of `git log`, `Package:` of `dpkg -s`, `pub:` of `gpg
//! --with-colons`), or at a line of its own shape heading a run of `Name: value` fields
//! (`/proc/PID/smaps`).

use crate::methods::extract::doc;

/// The name of `line` when it is one field of a record: `Name: value` at the margin, the name
/// a word or two (`Rss:`, `Private_Dirty:`, `Cpus_allowed_list:`, `Model name:`).
pub(crate) fn field_name(line: &str) -> Option<&str> {
    /// A field's name is short.
    const MAX_NAME: usize = 32;
    let (name, rest) = line.split_once(':')?;
    let field = (1..=MAX_NAME).contains(&name.len())
        && name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_ ()-".contains(&b))
        && name.bytes().filter(|&b| b == b' ').count() <= 1
        && (rest.is_empty() || rest.starts_with([' ', '\t']));
    field.then_some(name)
}

/// Whether `text` is records of fields, each headed by a line of its own shape (`/proc/PID/
/// smaps`: a mapping's address line, then `Size:`, `Rss:` … lines; a `lscpu -e`-less dump of
/// many devices): most lines are fields, and at least three other lines at the margin head
/// them, without blank lines between records.
pub(crate) fn are_headed_fields(text: &str) -> bool {
    /// Records needed for the shape.
    const MIN_RECORDS: usize = 3;
    let (mut fields, mut heads, mut lines) = (0usize, 0usize, 0usize);
    for span in doc::lines(text).take(SAMPLE_LINES) {
        let line = &text[span];
        if line.trim().is_empty() {
            continue;
        }
        lines += 1;
        if field_name(line).is_some() {
            fields += 1;
        } else if !line.starts_with(char::is_whitespace) {
            heads += 1;
        }
    }
    // Each head has a few fields under it: not a listing with a `key: value` line here and there.
    heads >= MIN_RECORDS && fields * 10 >= lines * 7 && fields >= heads * 3
}

/// Lines of a text read to tell its shape.
const SAMPLE_LINES: usize = 2000;

/// The word that starts each record of a record-per-paragraph output (`commit` in `git log`,
/// `Package:` in `dpkg -s`): the first word of the first line, when it starts at least three
/// unindented lines.
pub(crate) fn record_key(text: &str) -> Option<&str> {
    let first_line = doc::lines(text)
        .map(|s| &text[s])
        .find(|l| !l.trim().is_empty())?;
    let key = first_word(first_line)?;
    if !key
        .chars()
        .all(|c| c.is_alphabetic() || c == ':' || c == '-' || c == '_')
    {
        return None;
    }
    let starts = doc::lines(text)
        .filter(|span| first_word(&text[span.clone()]) == Some(key))
        .take(3)
        .count();
    (starts >= 3).then_some(key)
}

/// The first word of an unindented line; of a line of `:`-separated fields without spaces
/// (`pub:-:4096:1:…` of `gpg --with-colons`), its first field and colon (`pub:`), the record
/// type that such outputs start each record with.
pub(crate) fn first_word(line: &str) -> Option<&str> {
    /// A line of fields has at least this many colons (`INFO:root:msg` is a log line).
    const MIN_FIELD_COLONS: usize = 3;
    /// A record type is a short word (`pub`, `sec`, `uid`).
    const MAX_TYPE_LEN: usize = 8;
    if line.starts_with(char::is_whitespace) {
        return None;
    }
    let word = line.split_whitespace().next()?;
    match word.find(':') {
        Some(at)
            if (1..=MAX_TYPE_LEN).contains(&at)
                && word[..at].bytes().all(|b| b.is_ascii_alphabetic())
                && word.matches(':').count() >= MIN_FIELD_COLONS =>
        {
            Some(&word[..=at])
        }
        _ => Some(word),
    }
}
