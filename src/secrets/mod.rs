//! Finding and masking secrets in tool output before any of it is sent to an LLM.
//!
//! Tool output is full of credentials: `.env` files, kubeconfigs, CI logs that echo an
//! `Authorization` header, connection strings with a password in them. An LLM summary sends the
//! text to a model endpoint, often a third party's; a [`SecretRedactor`] replaces every secret
//! it recognises with a typed placeholder such as `[redacted:aws-access-key-id]` and keeps
//! everything around it (the `password=` key name, the URL's user and host, the PEM header line)
//! so that a summary can still say that a credential was there and where.
//!
//! The redactor is one pass of one compiled regular expression over the text (plus a substring
//! search per [known secret](SecretRedactor::with_known_secret)), and every match is checked
//! against a few rules that keep ordinary content alone: placeholders such as `${TOKEN}` or
//! `<your-key>`, `null`, numbers where a token was expected, code such as
//! `password = getpass()`. What it recognises is listed in [`SecretKind`].
//!
//! ```
//! use condense::secrets::{SecretKind, SecretRedactor};
//!
//! let redactor = SecretRedactor::new();
//! let log = "\
//! export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE
//! db: postgres://app:Sup3rS3cret@db.internal:5432/orders
//! curl -H 'Authorization: Bearer 3f9a8c7e1b2d4f60a9c8e7d6' https://api.example.com/v1/items
//! ";
//! let redacted = redactor.redact(log);
//! assert_eq!(
//!     redacted,
//!     "\
//! export AWS_ACCESS_KEY_ID=[redacted:aws-access-key-id]
//! db: postgres://app:[redacted:url-password]@db.internal:5432/orders
//! curl -H 'Authorization: Bearer [redacted:bearer-token]' https://api.example.com/v1/items
//! "
//! );
//! let kinds: Vec<SecretKind> = redactor.find(log).iter().map(|f| f.kind).collect();
//! assert_eq!(
//!     kinds,
//!     [SecretKind::AwsAccessKeyId, SecretKind::UrlPassword, SecretKind::BearerToken]
//! );
//! // Ordinary content is left as it is.
//! let commit = "commit 9fceb02d0ae598e95dc970b74767f19372d61af8 (uuid 123e4567-e89b-12d3-a456-426614174000)";
//! assert_eq!(redactor.redact(commit), commit);
//! ```

mod rules;
mod scan;
#[cfg(test)]
mod tests;

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

use scan::compiled;

/// What a redacted secret was: names the placeholder `[redacted:<name>]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum SecretKind {
    /// The body of a PEM private key block (`-----BEGIN … PRIVATE KEY-----`); the header and
    /// footer lines stay.
    PrivateKey,
    /// An AWS access key id (`AKIA…`, `ASIA…`).
    AwsAccessKeyId,
    /// The value of an `aws_secret_access_key` / `SecretAccessKey` setting.
    AwsSecretAccessKey,
    /// A GitHub token (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, `github_pat_`).
    GitHubToken,
    /// A GitLab personal access token (`glpat-`).
    GitLabToken,
    /// A Slack token (`xoxb-`, `xoxp-`, …).
    SlackToken,
    /// The secret path of a Slack incoming-webhook URL.
    SlackWebhook,
    /// A Stripe secret or restricted key (`sk_live_`, `rk_live_`, and their `_test_` forms).
    StripeKey,
    /// A Google API key (`AIza…`).
    GoogleApiKey,
    /// An OpenAI-style key (`sk-…`, `sk-proj-…`).
    OpenAiKey,
    /// An Anthropic key (`sk-ant-…`).
    AnthropicKey,
    /// An npm access token (`npm_…`).
    NpmToken,
    /// A SendGrid API key (`SG.x.y`).
    SendGridKey,
    /// A JSON Web Token (`eyJ….eyJ….…`).
    Jwt,
    /// The credential of an `Authorization` header or of a `Bearer` token anywhere.
    BearerToken,
    /// The credentials of an `Authorization: Basic` header.
    BasicAuth,
    /// The password of a URL (`scheme://user:password@host`).
    UrlPassword,
    /// The value of a password setting (`password`, `passwd`, `pwd`, `passphrase`), of a
    /// command line's `--password` / `-u user:password` / MySQL's `-p<password>` /
    /// `sshpass -p`, or of a `.netrc` entry's `password`.
    Password,
    /// The value of a `…secret` / `…credentials` setting.
    Secret,
    /// The value of a `…token` setting.
    Token,
    /// The value of an `…api_key` / `…access_key` setting.
    ApiKey,
    /// An Azure storage or service-bus key (`AccountKey=`, `SharedAccessKey=`).
    AzureKey,
    /// A secret the redactor was given by value
    /// ([`SecretRedactor::with_known_secret`]), such as condense's own LLM API key.
    KnownSecret,
}

impl SecretKind {
    /// The kind's name, as written in its placeholder.
    pub fn name(self) -> &'static str {
        match self {
            SecretKind::PrivateKey => "private-key",
            SecretKind::AwsAccessKeyId => "aws-access-key-id",
            SecretKind::AwsSecretAccessKey => "aws-secret-access-key",
            SecretKind::GitHubToken => "github-token",
            SecretKind::GitLabToken => "gitlab-token",
            SecretKind::SlackToken => "slack-token",
            SecretKind::SlackWebhook => "slack-webhook",
            SecretKind::StripeKey => "stripe-key",
            SecretKind::GoogleApiKey => "google-api-key",
            SecretKind::OpenAiKey => "openai-key",
            SecretKind::AnthropicKey => "anthropic-key",
            SecretKind::NpmToken => "npm-token",
            SecretKind::SendGridKey => "sendgrid-key",
            SecretKind::Jwt => "jwt",
            SecretKind::BearerToken => "bearer-token",
            SecretKind::BasicAuth => "basic-auth",
            SecretKind::UrlPassword => "url-password",
            SecretKind::Password => "password",
            SecretKind::Secret => "secret",
            SecretKind::Token => "token",
            SecretKind::ApiKey => "api-key",
            SecretKind::AzureKey => "azure-key",
            SecretKind::KnownSecret => "known-secret",
        }
    }

    /// The text that replaces a secret of this kind: `[redacted:<name>]`.
    pub fn placeholder(self) -> String {
        format!("[redacted:{}]", self.name())
    }
}

impl fmt::Display for SecretKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One secret found in a text: its kind and the bytes it takes. `Debug` shows the range, never
/// the secret.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Finding {
    /// What it is.
    pub kind: SecretKind,
    /// Where it is, in bytes of the searched text: exactly what [`SecretRedactor::redact`]
    /// replaces.
    pub range: Range<usize>,
}

/// Finds secrets in text and replaces them with `[redacted:<kind>]`. Cheap to create and to
/// clone: the expression is compiled once per process and shared.
///
/// `Debug` shows how many known secrets it holds, never their values.
///
/// ```
/// use condense::secrets::SecretRedactor;
///
/// let redactor = SecretRedactor::new().with_known_secret("my-proxy-master-key-42");
/// let text = "LITELLM_MASTER_KEY was my-proxy-master-key-42\n\"password\": \"hunter2\"";
/// assert_eq!(
///     redactor.redact(text),
///     "LITELLM_MASTER_KEY was [redacted:known-secret]\n\"password\": \"[redacted:password]\""
/// );
/// assert!(!format!("{redactor:?}").contains("master-key"));
/// ```
#[derive(Clone)]
pub struct SecretRedactor {
    /// Whether secrets are recognised by their shape (else only known secrets are masked).
    by_shape: bool,
    /// Secrets given by value: each form in which it may appear (as given, and JSON-escaped).
    known: Vec<String>,
}

impl Default for SecretRedactor {
    fn default() -> Self {
        SecretRedactor::new()
    }
}

impl fmt::Debug for SecretRedactor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecretRedactor")
            .field("by_shape", &self.by_shape)
            .field("known_secrets", &self.known.len())
            .finish()
    }
}

/// Known secrets shorter than this are ignored: masking every occurrence of a two-letter string
/// would garble the text and protect nothing.
const MIN_KNOWN_SECRET_LEN: usize = 4;

impl SecretRedactor {
    /// A redactor for every [`SecretKind`] it recognises by shape.
    pub fn new() -> Self {
        SecretRedactor {
            by_shape: true,
            known: Vec::new(),
        }
    }

    /// Compiles the patterns now, when this redactor recognises secrets by shape, so that the
    /// first text redacted does not pay for it. A process that never sends text anywhere (no
    /// LLM) never calls this, and never compiles them: they were a millisecond of its start.
    pub(crate) fn prepare(&self) {
        if self.by_shape {
            let _ = compiled();
        }
    }

    /// A redactor that masks only the secrets it is given with
    /// [`with_known_secret`](Self::with_known_secret), and recognises nothing by shape.
    ///
    /// ```
    /// use condense::secrets::SecretRedactor;
    ///
    /// let redactor = SecretRedactor::only_known().with_known_secret("proxy-key-123");
    /// assert_eq!(
    ///     redactor.redact("password=hunter2 key=proxy-key-123"),
    ///     "password=hunter2 key=[redacted:known-secret]"
    /// );
    /// ```
    pub fn only_known() -> Self {
        SecretRedactor {
            by_shape: false,
            known: Vec::new(),
        }
    }

    /// Also masks `secret` wherever it appears verbatim (and in its JSON-escaped form), as
    /// [`SecretKind::KnownSecret`]: for credentials of no recognisable shape, such as the API key
    /// condense itself uses. Values shorter than 4 bytes are ignored.
    #[must_use]
    pub fn with_known_secret(mut self, secret: impl Into<String>) -> Self {
        let secret = secret.into();
        if secret.len() < MIN_KNOWN_SECRET_LEN {
            return self;
        }
        if let Ok(quoted) = serde_json::to_string(&secret) {
            let escaped = &quoted[1..quoted.len() - 1];
            if escaped != secret && !self.known.iter().any(|k| k == escaped) {
                self.known.push(escaped.to_owned());
            }
        }
        if !self.known.contains(&secret) {
            self.known.push(secret);
        }
        self
    }

    /// The secrets in `text`, in order, without overlaps.
    pub fn find(&self, text: &str) -> Vec<Finding> {
        let mut found = Vec::new();
        for known in &self.known {
            found.extend(text.match_indices(known.as_str()).map(|(at, _)| Finding {
                kind: SecretKind::KnownSecret,
                range: at..at + known.len(),
            }));
        }
        let shaped = if self.by_shape {
            compiled().scan(text, false)
        } else {
            Vec::new()
        };
        if found.is_empty() {
            return shaped;
        }
        found.extend(shaped);
        merge_overlaps(found)
    }

    /// `text` with every secret replaced by its kind's placeholder. Borrows `text` when there
    /// is nothing to replace.
    pub fn redact<'t>(&self, text: &'t str) -> Cow<'t, str> {
        self.redact_counted(text).0
    }

    /// Like [`redact`](Self::redact), and how many secrets were replaced.
    pub fn redact_counted<'t>(&self, text: &'t str) -> (Cow<'t, str>, usize) {
        let found = self.find(text);
        if found.is_empty() {
            return (Cow::Borrowed(text), 0);
        }
        let mut out = String::with_capacity(text.len());
        let mut copied = 0;
        for finding in &found {
            out.push_str(&text[copied..finding.range.start]);
            out.push_str("[redacted:");
            out.push_str(finding.kind.name());
            out.push(']');
            copied = finding.range.end;
        }
        out.push_str(&text[copied..]);
        (Cow::Owned(out), found.len())
    }
}

/// Sorts findings and joins overlapping ones, so that a secret matched twice (a known key
/// inside a `token=` value) is replaced once and no part of either is left.
fn merge_overlaps(mut found: Vec<Finding>) -> Vec<Finding> {
    found.sort_by(|a, b| {
        a.range
            .start
            .cmp(&b.range.start)
            .then(b.range.end.cmp(&a.range.end))
    });
    let mut merged: Vec<Finding> = Vec::with_capacity(found.len());
    for finding in found {
        match merged.last_mut() {
            Some(last) if finding.range.start < last.range.end => {
                last.range.end = last.range.end.max(finding.range.end);
            }
            _ => merged.push(finding),
        }
    }
    merged
}
