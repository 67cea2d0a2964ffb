//! How the query's tokens are read: quoted strings, identifiers, decimal numbers, calls
//! (`run()`), classes of HTTP status (`5xx`), the keys adjacent words abbreviate to, and the
//! values of a tool's arguments.

use super::super::terms::{is_stopword, stem};
use super::{MAX_ARGUMENT_LEN, MIN_EXACT_LEN, WordHash};

/// Shorter keys are common words by accident ("file id" is no `fid` a reader would know).
const MIN_ACRONYM_LEN: usize = 3;

/// Words at least this long are clipped to their first [`CLIP`] letters in a column's name.
const MIN_CLIPPED_WORD: usize = 5;
const CLIP: usize = 3;

/// The keys runs of two or three adjacent query words abbreviate to: the first letters of
/// all but the last and the last whole (`purl`, `pid`, `fname`), or of all three (`cwd`), or
/// of two long words, each clipped (`libinc`).
/// A run is of letters-only words, none a stopword, with no punctuation between them.
pub(super) fn acronyms(text: &str) -> std::collections::HashSet<String, WordHash> {
    let mut found = std::collections::HashSet::default();
    let mut run: Vec<String> = Vec::new();
    let mut add = |mut key: String| {
        if key.len() >= MIN_ACRONYM_LEN {
            stem(&mut key);
            found.insert(key);
        }
    };
    for token in text.split_whitespace() {
        let word = token.trim_matches(|c: char| !c.is_alphanumeric());
        let plain = !word.is_empty() && word.bytes().all(|b| b.is_ascii_alphabetic());
        let lower = word.to_ascii_lowercase();
        if !plain || is_stopword(&lower) {
            run.clear();
            continue;
        }
        if !token.starts_with(|c: char| c.is_alphanumeric()) {
            run.clear();
        }
        run.push(lower);
        for len in 2..=run.len().min(3) {
            let words = &run[run.len() - len..];
            let initials: String = words[..len - 1].iter().map(|w| &w[..1]).collect();
            add(format!("{initials}{}", words[len - 1]));
            if len == 3 {
                add(format!("{initials}{}", &words[2][..1]));
            }
            // A data set's column clips each of two long words to its first syllable:
            // `libinc` of "Liberal incumbent", `popden` of "population density".
            if len == 2 && words.iter().all(|w| w.len() >= MIN_CLIPPED_WORD) {
                add(format!("{}{}", &words[0][..CLIP], &words[1][..CLIP]));
            }
        }
        if !token.ends_with(|c: char| c.is_alphanumeric()) {
            run.clear();
        }
    }
    found
}

/// The initials values write for a name the query spells out, each with the name's last word
/// (lowercased, stemmed): `nc` of "non-commercial", `cc` of "Creative Commons" (`CC-BY-NC-4.0`).
/// A name is a hyphenated word of two or three parts, or a run of two or three capitalized
/// words that does not begin a sentence (a longer one is a title: "Debian Stable Release Key").
/// Initials that are a word of their own (`be` of "Brendan Eich") are left out.
pub(super) fn initialisms(text: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut add = |parts: &[&str]| {
        let initials: String = parts.iter().map(|p| p[..1].to_ascii_lowercase()).collect();
        if is_stopword(&initials) {
            return;
        }
        let mut last = parts[parts.len() - 1].to_ascii_lowercase();
        stem(&mut last);
        found.push((initials, last));
    };
    let tokens: Vec<&str> = text.split_whitespace().collect();
    let mut run: Vec<&str> = Vec::new();
    for (i, token) in tokens.iter().enumerate() {
        let word = token.trim_matches(|c: char| !c.is_alphanumeric());
        let parts: Vec<&str> = word.split('-').collect();
        if (2..=3).contains(&parts.len())
            && parts
                .iter()
                .all(|p| p.len() >= 2 && p.bytes().all(|b| b.is_ascii_alphabetic()))
        {
            add(&parts);
        }
        let sentence_start = i == 0 || tokens[i - 1].ends_with(['.', '?', '!', ':']);
        let capitalized = word.len() >= 2
            && word.starts_with(|c: char| c.is_ascii_uppercase())
            && word[1..].bytes().all(|b| b.is_ascii_lowercase());
        let mut flush = |run: &mut Vec<&str>| {
            if (2..=3).contains(&run.len()) {
                add(run);
            }
            run.clear();
        };
        // A run ends at a word that is not capitalized and at punctuation either side.
        if !capitalized || sentence_start || !token.starts_with(|c: char| c.is_alphanumeric()) {
            flush(&mut run);
        }
        if capitalized && !sentence_start {
            run.push(word);
        }
        if !token.ends_with(|c: char| c.is_alphanumeric()) {
            flush(&mut run);
        }
    }
    if (2..=3).contains(&run.len()) {
        add(&run);
    }
    found
}

/// Text between matching quotes or backticks, where the opening one starts a word. Text too
/// short to be searched alone (an operator, `'^'`) is kept with its quotes: a grammar tool or
/// a linter quotes a token the same way.
pub(super) fn quoted_strings(text: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let q = bytes[i];
        let opens =
            matches!(q, b'\'' | b'"' | b'`') && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric());
        if opens && let Some(len) = text[i + 1..].find(q as char) {
            let inner = &text[i + 1..i + 1 + len];
            let after = bytes.get(i + 2 + len).copied();
            if !inner.is_empty() && after.is_none_or(|b| !b.is_ascii_alphanumeric()) {
                found.push(if inner.trim().len() < MIN_EXACT_LEN {
                    &text[i..i + 2 + len]
                } else {
                    inner
                });
                i += len + 2;
                continue;
            }
        }
        i += 1;
    }
    found
}

/// `0.25`, `1.5s`, `12.5%`: a fraction or a quantity with its unit. Not a version (`1.2.3`,
/// and `3.10` reads as one too), whose words may still match.
pub(super) fn is_decimal_number(token: &str) -> bool {
    let token = token.trim_matches(|c: char| !c.is_ascii_alphanumeric() && c != '%');
    let number = token.trim_end_matches(|c: char| c.is_ascii_alphabetic() || c == '%');
    let Some((whole, fraction)) = number.split_once('.') else {
        return false;
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let has_unit = number.len() < token.len();
    digits(whole) && digits(fraction) && (whole == "0" || has_unit)
}

/// The leading digit of a class of HTTP status written `5xx` or `4XX`.
pub(super) fn status_class(token: &str) -> Option<u8> {
    match token.as_bytes() {
        [d @ b'1'..=b'5', x, y]
            if x.eq_ignore_ascii_case(&b'x') && y.eq_ignore_ascii_case(&b'x') =>
        {
            Some(d - b'0')
        }
        _ => None,
    }
}

/// The name a query token writes as a call with no arguments (`run()`, `abort(),`), lowercased.
pub(super) fn called_name(token: &str) -> Option<String> {
    let token = token.trim_end_matches(|c: char| ",.;:?!'\"`".contains(c));
    let name = token
        .trim_start_matches(|c: char| "'\"`(".contains(c))
        .strip_suffix("()")?;
    let name = name.rsplit(['.', ':']).next().unwrap_or(name);
    (!name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
        .then(|| name.to_ascii_lowercase())
}

/// A token that names one thing: has a digit, inner punctuation (`a.b`, `a::b`, `a/b`,
/// `a_b`, `a-b`, `a@1`) or inner capitals (`camelCase`).
pub(super) fn is_identifier_like(token: &str) -> bool {
    if token.len() < MIN_EXACT_LEN {
        return false;
    }
    let bytes = token.as_bytes();
    let has_digit = bytes.iter().any(u8::is_ascii_digit);
    let inner_punct = bytes.windows(3).any(|w| {
        w[0].is_ascii_alphanumeric()
            && b"._:/@-~$".contains(&w[1])
            && (w[2].is_ascii_alphanumeric() || w[2] == b':')
    });
    let inner_capital = bytes
        .windows(2)
        .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase());
    let underscore = token.contains('_');
    has_digit || inner_punct || inner_capital || underscore
}

/// The identifier form of a name prose writes with a hyphen between its letters and its
/// number: `AES-256` is `GCRY_CIPHER_AES256`, `SHA-512` `sha512sum`, `UTF-8` `utf8`.
pub(super) fn run_together(token: &str) -> Option<String> {
    let (letters, digits) = token.split_once('-')?;
    (letters.len() >= 2
        && letters.bytes().all(|b| b.is_ascii_alphabetic())
        && !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit()))
    .then(|| format!("{letters}{digits}").to_ascii_lowercase())
}

pub(super) fn collect_argument_values(
    value: &serde_json::Value,
    out: &mut Vec<String>,
    depth: usize,
) {
    if depth > 8 {
        return;
    }
    match value {
        serde_json::Value::String(s) if s.len() <= MAX_ARGUMENT_LEN => out.push(s.clone()),
        serde_json::Value::Number(n) => out.push(n.to_string()),
        serde_json::Value::Array(items) => items
            .iter()
            .for_each(|v| collect_argument_values(v, out, depth + 1)),
        serde_json::Value::Object(map) => map
            .values()
            .for_each(|v| collect_argument_values(v, out, depth + 1)),
        _ => {}
    }
}
