//! Values that are noise to a reader unless asked for, recognised by their shape rather than by
//! the name of the field that holds them: long hex digests, base64 blobs and UUIDs. They are
//! what lock files, manifests and API objects are mostly made of by bytes, and the answer is
//! hardly ever in them.

/// Tokens shorter than this are words, versions or small ids, never opaque noise.
const MIN_OPAQUE_LEN: usize = 20;

/// The share (0..=1) of the non-blank bytes of `text` that sit in opaque tokens: hex digests,
/// base64 runs, UUIDs.
pub(crate) fn opaque_share(text: &str) -> f32 {
    let mut opaque = 0usize;
    let mut total = 0usize;
    for token in text.split(|c: char| !is_token_char(c)) {
        total += token.len();
        if token.len() >= MIN_OPAQUE_LEN && is_opaque(token) {
            opaque += token.len();
        }
    }
    if total == 0 {
        0.0
    } else {
        opaque as f32 / total as f32
    }
}

fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '=' | '-' | '_')
}

/// A digest (hex, with digits among the letters), a UUID (hex and dashes), or a base64 run:
/// words and identifiers, even camelCase or SHOUTED ones, have runs of lowercase letters or no
/// lowercase at all; base64 scatters a few lowercase letters among capitals and digits.
fn is_opaque(token: &str) -> bool {
    let body = token.trim_end_matches('=');
    let len = body.len().max(1);
    if body
        .bytes()
        .all(|b| b.is_ascii_hexdigit() || b == b'-' || b == b'_')
    {
        return body.bytes().filter(u8::is_ascii_digit).count() * 5 >= len;
    }
    let mut lower = 0;
    let mut run = 0;
    let mut longest_run = 0;
    let mut upper_or_digit = 0;
    for b in body.bytes() {
        if b.is_ascii_lowercase() {
            lower += 1;
            run += 1;
            longest_run = longest_run.max(run);
        } else {
            run = 0;
            if b.is_ascii_uppercase() || b.is_ascii_digit() {
                upper_or_digit += 1;
            }
        }
    }
    longest_run < 5 && lower * 10 >= len && upper_or_digit * 4 >= len
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_and_uuids_are_opaque_and_prose_is_not() {
        // A `poetry.lock` file line and a Kubernetes object's uid.
        let hash = r#"{file = "keyring-25.7.0.tar.gz", hash = "sha256:fe01bd85eb3f8fb3dd0405defdeac9a5b4f6f0439edbb3149577f244a2e8245b"}"#;
        assert!(opaque_share(hash) > 0.5, "{}", opaque_share(hash));
        assert!(opaque_share(r#""uid": "6b2f3c4e-1d2a-4c1b-9e7f-0a1b2c3d4e5f""#) > 0.5);
        assert_eq!(opaque_share(r#"description = "Python Git Library""#), 0.0);
        assert_eq!(
            opaque_share("workforcePoolProvider.detailedAuditLogging"),
            0.0
        );
    }

    #[test]
    fn base64_is_opaque() {
        // The head of a real PNG icon as a data URI.
        assert!(opaque_share("iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAYAAAAf8/9hAAAABHNCSVQICAgI") > 0.9);
    }
}
