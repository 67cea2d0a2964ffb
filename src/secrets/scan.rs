//! The rules compiled into one expression, and the scan that checks each match against the
//! rules of evidence that keep ordinary content alone.

use std::ops::Range;
use std::sync::OnceLock;

use regex::{CaptureLocations, Regex};

use super::rules::{Classify, Evidence, rules};
use super::{Finding, SecretKind};

/// The rules compiled into one expression, and where each rule's groups are.
pub(super) struct Compiled {
    regex: Regex,
    rules: Vec<CompiledRule>,
}

struct CompiledRule {
    classify: Classify,
    evidence: Evidence,
    /// The capture group of the whole rule.
    whole: usize,
    /// The capture group of the replaced part, when the rule marks one.
    secret: Option<usize>,
}

pub(super) fn compiled() -> &'static Compiled {
    static COMPILED: OnceLock<Compiled> = OnceLock::new();
    COMPILED.get_or_init(|| {
        let rules = rules();
        let alternatives: Vec<String> = rules
            .iter()
            .enumerate()
            .map(|(i, rule)| {
                format!(
                    "(?P<r{i}>{})",
                    rule.pattern.replace("(?P<s>", &format!("(?P<s{i}>"))
                )
            })
            .collect();
        let regex = regex::RegexBuilder::new(&alternatives.join("|"))
            // The expression is large; the default limits are sized for hand-written ones.
            .size_limit(64 << 20)
            .dfa_size_limit(64 << 20)
            .build()
            .expect("the secret patterns are valid expressions");
        let group = |name: &str| regex.capture_names().position(|n| n == Some(name));
        let rules = rules
            .iter()
            .enumerate()
            .map(|(i, rule)| CompiledRule {
                classify: rule.classify,
                evidence: rule.evidence,
                whole: group(&format!("r{i}")).expect("every rule has its group"),
                secret: group(&format!("s{i}")),
            })
            .collect();
        Compiled { regex, rules }
    })
}

impl Compiled {
    /// Every shaped secret in `text`, in order. `nested` when `text` is a setting's value being
    /// looked into: values inside it are then not looked into again, which bounds the work and
    /// the recursion on input such as `token=token=token=…`.
    pub(super) fn scan(&self, text: &str, nested: bool) -> Vec<Finding> {
        let mut found = Vec::new();
        let mut locations: CaptureLocations = self.regex.capture_locations();
        let mut at = 0;
        while at < text.len() {
            let Some(whole) = self.regex.captures_read_at(&mut locations, text, at) else {
                break;
            };
            let next = match self.accept(text, &locations, nested, &mut found) {
                Some(resume) => resume,
                // A rejected setting's value may itself start a secret (`token: Bearer …`):
                // search again from the value, not from the end of the match.
                None => self.rejected_resume(&locations, whole.start(), whole.end()),
            };
            at = ceil_boundary(text, next.max(at + 1));
        }
        found
    }

    /// Decides whether the match in `locations` is a secret and, when it is, adds what to
    /// replace to `found` and returns where to search on.
    fn accept(
        &self,
        text: &str,
        locations: &CaptureLocations,
        nested: bool,
        found: &mut Vec<Finding>,
    ) -> Option<usize> {
        let rule = self
            .rules
            .iter()
            .find(|rule| locations.get(rule.whole).is_some())?;
        let (whole_start, whole_end) = locations.get(rule.whole)?;
        let (start, end) = rule
            .secret
            .and_then(|group| locations.get(group))
            .unwrap_or((whole_start, whole_end));
        let range = unquote(text, start..end);
        if matches!(rule.classify, Classify::Fixed(SecretKind::PrivateKey)) {
            // Keep the line breaks around the body, so the footer stays on its own line.
            let range = trim_line_breaks(text, range);
            if range.is_empty() {
                return None;
            }
            found.push(Finding {
                kind: SecretKind::PrivateKey,
                range,
            });
            return Some(whole_end);
        }
        let range = without_unopened_closers(text, range);
        let value = &text[range.clone()];
        let (kind, evidence) = match rule.classify {
            Classify::Fixed(kind) => (kind, rule.evidence),
            Classify::Setting => {
                // A value holding secrets of their own shape (`GITHUB_TOKEN=ghp_…`, a PEM
                // block in a `"private_key"` string, `"token": "Bearer …"`) is redacted as
                // those, so their own rules decide what stays.
                let inner = if nested {
                    Vec::new()
                } else {
                    self.scan(value, true)
                };
                if let Some(last) = inner.last() {
                    // Search on from the last of them: a secret that starts inside the value
                    // may run past it (a PEM header ending a bare value).
                    let resume = last.range.end + range.start;
                    found.extend(inner.into_iter().map(|finding| Finding {
                        kind: finding.kind,
                        range: finding.range.start + range.start..finding.range.end + range.start,
                    }));
                    return Some(resume);
                }
                let kind = setting_kind(&text[whole_start..start]);
                let evidence = match kind {
                    SecretKind::Password => Evidence::Context,
                    SecretKind::Secret | SecretKind::Token | SecretKind::ApiKey => Evidence::Random,
                    _ => Evidence::Shape,
                };
                (kind, evidence)
            }
        };
        if !plausible(value, evidence) {
            return None;
        }
        let resume = whole_end.max(range.end);
        found.push(Finding { kind, range });
        Some(resume)
    }

    /// Where to search again after a rejected match: at its replaced part when that is not at
    /// the start (the key is not searched twice), else one byte on.
    fn rejected_resume(&self, locations: &CaptureLocations, start: usize, end: usize) -> usize {
        self.rules
            .iter()
            .find(|rule| locations.get(rule.whole).is_some())
            .and_then(|rule| rule.secret)
            .and_then(|group| locations.get(group))
            .map(|(secret_start, _)| secret_start)
            .filter(|&secret_start| secret_start > start && secret_start <= end)
            .unwrap_or(start + 1)
    }
}

/// The kind of a `key = value` setting's secret, by the key's name.
fn setting_kind(key: &str) -> SecretKind {
    let key = key.to_ascii_lowercase();
    let key = key.trim_start_matches('-');
    if key.contains("pass") || key.ends_with("pwd") {
        SecretKind::Password
    } else if key.contains("aws") && key.contains("secret") || key.contains("secretaccesskey") {
        SecretKind::AwsSecretAccessKey
    } else if key.contains("accountkey") {
        SecretKind::AzureKey
    } else if key.contains("private") || key.contains("key-data") || key.contains("key_data") {
        SecretKind::PrivateKey
    } else if key.contains("secret") || key.contains("credential") {
        SecretKind::Secret
    } else if key.contains("token") {
        SecretKind::Token
    } else {
        SecretKind::ApiKey
    }
}

/// Whether `value` is a real value (not a placeholder, a reference or code) with the evidence
/// its rule needs.
fn plausible(value: &str, evidence: Evidence) -> bool {
    if value.is_empty() || is_placeholder(value) {
        return false;
    }
    match evidence {
        Evidence::Shape => true,
        Evidence::Context => !looks_like_code(value),
        Evidence::Random => {
            !looks_like_code(value)
                && value.len() >= 8
                && !value.bytes().all(|b| b.is_ascii_digit())
                && (value.bytes().any(|b| b.is_ascii_digit()) || value.chars().count() >= 32)
        }
    }
}

/// Values that stand for a secret rather than being one.
fn is_placeholder(value: &str) -> bool {
    const WORDS: &[&str] = &[
        "null",
        "none",
        "nil",
        "true",
        "false",
        "undefined",
        "empty",
        "redacted",
        "hidden",
        "masked",
        "secret",
        "password",
        "changeme",
        "string",
        "required",
        "optional",
        "pass",
        // Types, where code declares a password parameter (`password: str`).
        "str",
        "bytes",
        "int",
        "bool",
        "any",
        "char",
    ];
    let mut chars = value.chars();
    let Some(first) = chars.next() else {
        return true;
    };
    matches!(first, '$' | '%' | '<' | '{' | '[' | '(')
        || value.len() < 2 && !value.bytes().all(|b| b.is_ascii_alphanumeric())
        || chars.all(|c| c == first)
        || WORDS.iter().any(|word| value.eq_ignore_ascii_case(word))
        || value.starts_with("***")
        || value.contains("...")
        || value.contains('…')
}

/// Code that reads a secret from somewhere (`getpass()`, `os.environ[…]`,
/// `settings.DB_PASSWORD`), an object's debug form (`Token{a64f992}`,
/// `android.os.BinderProxy@2bd79ce`) or a version (`"pbkdf2-password": "1.2.1"` in a
/// `package.json`) is not a secret.
fn looks_like_code(value: &str) -> bool {
    if value.contains(['(', '[', '{']) {
        return true;
    }
    let version = value.trim_start_matches(['^', '~', '>', '<', '=', 'v']);
    if version.contains('.')
        && version
            .split('.')
            .all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()))
    {
        return true;
    }
    // A dotted path of two or more identifiers, perhaps with an object hash (`@2bd79ce`).
    let path = match value.rsplit_once('@') {
        Some((path, hash)) if !hash.is_empty() && hash.bytes().all(|b| b.is_ascii_hexdigit()) => {
            path
        }
        _ => value,
    };
    path.contains('.')
        && path.split('.').all(|part| {
            let mut chars = part.chars();
            chars
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
        })
}

/// `range` without the quotes around a quoted value.
fn unquote(text: &str, range: Range<usize>) -> Range<usize> {
    let value = &text[range.clone()];
    for (open, close) in [("\\\"", "\\\""), ("\"", "\""), ("'", "'")] {
        if value.len() >= open.len() + close.len()
            && value.starts_with(open)
            && value.ends_with(close)
        {
            return range.start + open.len()..range.end - close.len();
        }
    }
    range
}

/// `range` without the closing brackets that end a bare value in code or prose
/// (`f(password: str)`, `(token=abc123)`) when the value does not open them.
fn without_unopened_closers(text: &str, mut range: Range<usize>) -> Range<usize> {
    for (open, close) in [('(', ')'), ('[', ']'), ('{', '}')] {
        let value = &text[range.clone()];
        if !value.contains(open) {
            range.end -= value.len() - value.trim_end_matches(close).len();
        }
    }
    range
}

/// `range` without leading and trailing whitespace or JSON-escaped line breaks (`\n`).
fn trim_line_breaks(text: &str, mut range: Range<usize>) -> Range<usize> {
    loop {
        let value = &text[range.clone()];
        if value.starts_with("\\n") || value.starts_with("\\r") {
            range.start += 2;
        } else if value.starts_with(char::is_whitespace) {
            range.start += value.chars().next().map_or(1, char::len_utf8);
        } else {
            break;
        }
    }
    loop {
        let value = &text[range.clone()];
        if value.ends_with("\\n") || value.ends_with("\\r") {
            range.end -= 2;
        } else if value.ends_with(char::is_whitespace) {
            range.end -= value.chars().next_back().map_or(1, char::len_utf8);
        } else {
            break;
        }
    }
    range
}

/// The first char boundary at or after `at` (at most `text.len()`).
fn ceil_boundary(text: &str, mut at: usize) -> usize {
    while at < text.len() && !text.is_char_boundary(at) {
        at += 1;
    }
    at.min(text.len())
}
