//! Removing credentials from text that came back from an endpoint.
//!
//! Proxies and gateways that reject a request often echo it back, `Authorization` header
//! included, in their error body. Every message that condense builds from a response passes
//! through [`Redactor::clean`] before it reaches an error, a log or a caller.

/// What replaces a credential.
pub(crate) const REDACTED: &str = "[redacted]";

/// The longest message kept from a response body, in characters. Error bodies can be whole
/// HTML pages; the start says what went wrong.
const MAX_MESSAGE_CHARS: usize = 512;

/// Characters of an RFC 6750 bearer token (`b64token`).
fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~' | '+' | '/' | '=')
}

/// Removes one client's API key, and anything shaped like a credential, from text.
#[derive(Clone, Default)]
pub(crate) struct Redactor {
    /// The key as sent, and as it reads inside a JSON string when that differs.
    forms: Vec<String>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redactor").finish_non_exhaustive()
    }
}

impl Redactor {
    /// A redactor for `api_key` (none: only credential shapes are removed).
    pub(crate) fn new(api_key: Option<&str>) -> Self {
        let mut forms = Vec::new();
        if let Some(key) = api_key.filter(|key| !key.is_empty()) {
            forms.push(key.to_owned());
            // A JSON body may escape `/` or other characters of the key.
            if let Ok(quoted) = serde_json::to_string(key) {
                let escaped = &quoted[1..quoted.len() - 1];
                if escaped != key {
                    forms.push(escaped.to_owned());
                }
            }
        }
        Redactor { forms }
    }

    /// `text` with credentials replaced by `[redacted]`, whitespace collapsed and cut to a
    /// readable length. Redaction comes first, so a cut can never leave half a key behind.
    pub(crate) fn clean(&self, text: &str) -> String {
        let redacted = self.redact(text);
        let collapsed = redacted.split_whitespace().collect::<Vec<_>>().join(" ");
        match collapsed.char_indices().nth(MAX_MESSAGE_CHARS) {
            Some((cut, _)) => format!("{}…", &collapsed[..cut]),
            None => collapsed,
        }
    }

    /// `text` with only the key replaced: for a model's answer, where a `Bearer` or `sk-` in
    /// the summary is the tool output's own content (already masked before the call when
    /// secret redaction is on), but the key is this client's credential echoed back.
    pub(crate) fn remove_key(&self, text: String) -> String {
        let mut out = text;
        for form in &self.forms {
            if out.contains(form.as_str()) {
                out = out.replace(form.as_str(), REDACTED);
            }
        }
        out
    }

    /// `text` with the key, `Bearer <token>` and `sk-…` shaped tokens replaced.
    pub(crate) fn redact(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for form in &self.forms {
            if out.contains(form.as_str()) {
                out = out.replace(form.as_str(), REDACTED);
            }
        }
        let out = redact_after_prefix(&out, "bearer", true);
        redact_after_prefix(&out, "sk-", false)
    }
}

/// Replaces the token that follows each case-insensitive, word-initial `prefix`.
///
/// With `spaced`, the prefix is a scheme name and the token comes after spaces (`Bearer abc`);
/// otherwise the prefix is part of the token (`sk-abc…`) and the whole token goes, but only when
/// at least 8 token characters follow it, so prose such as "sk-learn" stays readable.
fn redact_after_prefix(text: &str, prefix: &str, spaced: bool) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut search = 0;
    while let Some(found) = lower[search..].find(prefix) {
        let start = search + found;
        let after_prefix = start + prefix.len();
        search = after_prefix;
        let word_start = text[..start]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_ascii_alphanumeric());
        if !word_start {
            continue;
        }
        let rest = &text[after_prefix..];
        let token_start = if spaced {
            let spaces = rest.len() - rest.trim_start_matches([' ', '\t']).len();
            if spaces == 0 {
                continue;
            }
            after_prefix + spaces
        } else {
            after_prefix
        };
        let token_len = text[token_start..]
            .find(|c: char| !is_token_char(c))
            .unwrap_or(text.len() - token_start);
        let long_enough = if spaced {
            token_len > 0
        } else {
            token_len >= 8
        };
        if !long_enough || text[token_start..].starts_with(REDACTED) {
            continue;
        }
        let replace_from = if spaced { token_start } else { start };
        out.push_str(&text[copied..replace_from]);
        out.push_str(REDACTED);
        copied = token_start + token_len;
        search = copied;
    }
    out.push_str(&text[copied..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removes_the_key_wherever_it_appears() {
        let redactor = Redactor::new(Some("k3y-Secret"));
        let cleaned = redactor.clean("got k3y-Secret;again:k3y-Secret!");
        assert_eq!(cleaned, "got [redacted];again:[redacted]!");
    }

    #[test]
    fn removes_the_json_escaped_form_of_the_key() {
        let redactor = Redactor::new(Some("abc/def\"ghi"));
        let body = serde_json::json!({ "echo": "abc/def\"ghi" }).to_string();
        assert!(!redactor.clean(&body).contains("def"));
    }

    #[test]
    fn removes_bearer_tokens_of_any_case_without_a_configured_key() {
        let redactor = Redactor::new(None);
        let cleaned = redactor.clean("header was 'authorization: BEARER abc.DEF_123' here");
        assert_eq!(
            cleaned,
            "header was 'authorization: BEARER [redacted]' here"
        );
    }

    #[test]
    fn removes_sk_shaped_keys() {
        let redactor = Redactor::new(None);
        assert_eq!(redactor.clean("key=sk-1234567890abcdef"), "key=[redacted]");
    }

    #[test]
    fn keeps_words_that_only_look_like_prefixes() {
        let redactor = Redactor::new(None);
        let text = "use sk-learn, a bearer, or a risk-averse task-manager";
        assert_eq!(redactor.clean(text), text);
    }

    #[test]
    fn cuts_long_messages_after_redacting() {
        let key = "sk-0123456789abcdefghij";
        let redactor = Redactor::new(Some(key));
        let body = format!("{}{key}", "x".repeat(MAX_MESSAGE_CHARS - 3));
        let cleaned = redactor.clean(&body);
        assert!(!cleaned.contains("sk-0"));
        assert!(cleaned.ends_with('…'));
    }

    #[test]
    fn handles_multibyte_text_around_prefixes() {
        let redactor = Redactor::new(None);
        let text = "日本 Bearer 日本語 sk-日本語日本語日本語 ébearer";
        assert_eq!(redactor.clean(text), text);
    }

    #[test]
    fn remove_key_replaces_only_the_key() {
        let redactor = Redactor::new(Some("k3y-Secret-1234"));
        let answer = "The log shows k3y-Secret-1234 and Bearer abcdefgh12345678.".to_owned();
        assert_eq!(
            redactor.remove_key(answer),
            "The log shows [redacted] and Bearer abcdefgh12345678."
        );
    }

    #[test]
    fn debug_does_not_show_the_key() {
        let redactor = Redactor::new(Some("hunter2-secret"));
        assert!(!format!("{redactor:?}").contains("hunter2"));
    }
}
