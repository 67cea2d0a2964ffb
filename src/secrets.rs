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

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;
use std::sync::OnceLock;

use regex::{CaptureLocations, Regex};

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
        // Compile now, so that a first call does not pay for it (and a bad pattern shows at
        // construction in tests, not on some later input).
        let _ = compiled();
        SecretRedactor {
            by_shape: true,
            known: Vec::new(),
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

/// How a rule decides a match's kind.
#[derive(Debug, Clone, Copy)]
enum Classify {
    /// Always this kind.
    Fixed(SecretKind),
    /// A `key = value` setting: by the value's shape when it is a recognisable token, else by
    /// the key's name.
    Setting,
}

/// How much a matched value must look like a secret to count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Evidence {
    /// The shape is the evidence (a prefix such as `ghp_`, a PEM header).
    Shape,
    /// Any real value (not a placeholder): the context says it is a password.
    Context,
    /// A value that looks random: a digit in it, or 32 characters or more. Keeps
    /// `token: expired` and `Bearer authentication` alone.
    Random,
}

struct Rule {
    classify: Classify,
    evidence: Evidence,
    /// The expression; `(?P<s>…)` marks the part replaced (else the whole match).
    pattern: Cow<'static, str>,
}

/// The names settings holding secrets end with (case-insensitive), followed by an optional
/// closing quote, `=`, `:` or `=>`, and the value.
const SETTING_KEY: &str = r"[A-Za-z0-9_.-]*(?i:password|passwd|passphrase|pwd|secret|token|api[_.-]?key|apikey|access[_.-]?key|auth[_.-]?key|private[_.-]?key|client[_.-]?key|key[_.-]?data|credentials?|accountkey|signing[_.-]?key|encryption[_.-]?key|master[_.-]?key)";

/// A setting's value: double-quoted (JSON), single-quoted, double-quoted inside a JSON string,
/// or bare up to a space, quote, comma, semicolon or `&`.
const SETTING_VALUE: &str =
    r#"(?P<s>"(?:[^"\\\n]|\\.)*"|'[^'\n]*'|\\"(?:[^"\\\n]|\\[^"\n])*\\"|[^\s"'\\,;&]+)"#;

fn rules() -> Vec<Rule> {
    use Classify::{Fixed, Setting};
    use Evidence::{Context, Random, Shape};
    use SecretKind as K;
    let setting = format!(r#"{SETTING_KEY}\\?["']?[ \t]*(?:=>|[:=])[ \t]*{SETTING_VALUE}"#);
    let flag = format!(
        r#"--(?i:[a-z-]*(?:password|passwd|token|secret|api-key|apikey))(?:=|[ \t]+){SETTING_VALUE}"#
    );
    let rule = |classify, evidence, pattern: &'static str| Rule {
        classify,
        evidence,
        pattern: Cow::Borrowed(pattern),
    };
    // Order matters where two rules match at the same place: the first listed wins.
    vec![
        rule(
            Fixed(K::PrivateKey),
            Shape,
            r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----(?P<s>[\s\S]*?)(?:-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|\z)",
        ),
        rule(
            Fixed(K::AwsAccessKeyId),
            Shape,
            r"(?-u:\b)(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}(?-u:\b)",
        ),
        rule(
            Fixed(K::GitHubToken),
            Shape,
            r"(?-u:\b)(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})(?-u:\b)",
        ),
        rule(
            Fixed(K::GitLabToken),
            Shape,
            r"(?-u:\b)glpat-[A-Za-z0-9_-]{20,}",
        ),
        rule(
            Fixed(K::SlackToken),
            Shape,
            r"(?-u:\b)xox[abposre]-[A-Za-z0-9-]{10,}",
        ),
        rule(
            Fixed(K::SlackWebhook),
            Shape,
            r"hooks\.slack\.com/(?:services|workflows)/(?P<s>[A-Za-z0-9_/-]{20,})",
        ),
        rule(
            Fixed(K::StripeKey),
            Shape,
            r"(?-u:\b)[sr]k_(?:live|test)_[A-Za-z0-9]{16,}",
        ),
        rule(
            Fixed(K::GoogleApiKey),
            Shape,
            r"(?-u:\b)AIza[0-9A-Za-z_-]{35}",
        ),
        rule(
            Fixed(K::AnthropicKey),
            Shape,
            r"(?-u:\b)sk-ant-[A-Za-z0-9_-]{20,}",
        ),
        rule(
            Fixed(K::OpenAiKey),
            Random,
            r"(?-u:\b)sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}",
        ),
        rule(
            Fixed(K::NpmToken),
            Shape,
            r"(?-u:\b)npm_[A-Za-z0-9]{36}(?-u:\b)",
        ),
        rule(
            Fixed(K::SendGridKey),
            Shape,
            r"(?-u:\b)SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}",
        ),
        rule(
            Fixed(K::Jwt),
            Shape,
            r"(?-u:\b)eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*",
        ),
        rule(
            Fixed(K::AzureKey),
            Random,
            r"(?i:AccountKey|SharedAccessKey)[ \t]*=[ \t]*(?P<s>[A-Za-z0-9+/]{16,}={0,2})",
        ),
        rule(
            Fixed(K::BasicAuth),
            Context,
            r#"(?i:authorization)\\?["']?[ \t]*[:=][ \t]*\\?["']?(?i:basic)[ \t]+(?P<s>[A-Za-z0-9+/]{4,}={0,2})(?:[\s"'\\,;]|\z)"#,
        ),
        rule(
            Fixed(K::BearerToken),
            Random,
            r#"(?i:authorization)\\?["']?[ \t]*[:=][ \t]*\\?["']?(?:(?i:bearer|token)[ \t]+)?(?P<s>[A-Za-z0-9._~+/-]{8,}=*)"#,
        ),
        rule(
            Fixed(K::BearerToken),
            Random,
            r"(?-u:\b)(?i:bearer)[ \t]+(?P<s>[A-Za-z0-9._~+/-]{12,}=*)",
        ),
        rule(
            Fixed(K::UrlPassword),
            Context,
            r#"(?-u:\b)[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#@:"'<>\[\]]*:(?P<s>[^\s/?#@"'<>\[\]]+)@"#,
        ),
        rule(
            Fixed(K::Password),
            Context,
            r#"(?m:^|[ \t"'])(?:-u|--user)[ \t]+["']?[^\s:"']+:(?P<s>[^\s"'@]+)"#,
        ),
        // A `.netrc` entry: `machine <host> login <user> password <secret>` (or `default …`),
        // on one line or across lines.
        rule(
            Fixed(K::Password),
            Context,
            r#"(?-u:\b)(?:machine[ \t\r\n]+[^\s"']+|default)[ \t\r\n]+login[ \t\r\n]+[^\s"']+[ \t\r\n]+password[ \t\r\n]+(?P<s>[^\s"']+)"#,
        ),
        // The MySQL clients' `-p<password>` (no space: `-p` alone prompts), and `sshpass -p`.
        rule(
            Fixed(K::Password),
            Context,
            r#"(?-u:\b)(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)(?:[ \t]+[^\s|;&]+)*?[ \t]+-p(?P<s>"[^"\n]+"|'[^'\n]+'|[^\s"'|;&]+)"#,
        ),
        rule(
            Fixed(K::Password),
            Context,
            r#"(?-u:\b)sshpass[ \t]+-p[ \t]*(?P<s>"[^"\n]+"|'[^'\n]+'|[^\s"'|;&]+)"#,
        ),
        Rule {
            classify: Setting,
            evidence: Context,
            pattern: Cow::Owned(flag),
        },
        Rule {
            classify: Setting,
            evidence: Context,
            pattern: Cow::Owned(setting),
        },
    ]
}

/// The rules compiled into one expression, and where each rule's groups are.
struct Compiled {
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

fn compiled() -> &'static Compiled {
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
    fn scan(&self, text: &str, nested: bool) -> Vec<Finding> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn redact(text: &str) -> String {
        SecretRedactor::new().redact(text).into_owned()
    }

    fn kinds(text: &str) -> Vec<SecretKind> {
        SecretRedactor::new()
            .find(text)
            .into_iter()
            .map(|f| f.kind)
            .collect()
    }

    #[test]
    fn pem_private_key_body_is_masked_and_its_lines_kept() {
        let pem = "key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB\naFDrBz9vFqU4yx0lZ2h2ZGVuLXBvcnRhbA==\n-----END RSA PRIVATE KEY-----\ntail";
        assert_eq!(
            redact(pem),
            "key:\n-----BEGIN RSA PRIVATE KEY-----\n[redacted:private-key]\n-----END RSA PRIVATE KEY-----\ntail"
        );
    }

    #[test]
    fn pem_keys_of_every_header_and_json_escaped_are_masked() {
        for header in ["", "EC ", "OPENSSH ", "ENCRYPTED ", "DSA "] {
            let pem = format!(
                "-----BEGIN {header}PRIVATE KEY-----\nAAAAB3NzaC1yc2EAAAADAQAB\n-----END {header}PRIVATE KEY-----"
            );
            assert!(!redact(&pem).contains("AAAAB3"), "{header}");
        }
        let json = r#"{"private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n"}"#;
        let out = redact(json);
        assert!(!out.contains("MIIEvQ"), "{out}");
        assert!(out.contains("-----BEGIN PRIVATE KEY-----"), "{out}");
    }

    #[test]
    fn a_cut_off_private_key_is_masked_to_the_end() {
        let out = redact("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU");
        assert_eq!(
            out,
            "-----BEGIN OPENSSH PRIVATE KEY-----\n[redacted:private-key]"
        );
    }

    #[test]
    fn cloud_and_service_tokens_are_recognised_by_shape() {
        let cases = [
            ("AKIAIOSFODNN7EXAMPLE", SecretKind::AwsAccessKeyId),
            (
                "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",
                SecretKind::GitHubToken,
            ),
            (
                "github_pat_11ABCDEFG0abcdefghijkl_mnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXY",
                SecretKind::GitHubToken,
            ),
            ("glpat-x8Fz3kQwErTyUiOp1234", SecretKind::GitLabToken),
            (
                "xoxb-2048-4096-AbCdEfGhIjKlMnOpQrStUvWx",
                SecretKind::SlackToken,
            ),
            ("sk_live_4eC39HqLyjWDarjtT1zdp7dc", SecretKind::StripeKey),
            ("rk_live_4eC39HqLyjWDarjtT1zdp7dc", SecretKind::StripeKey),
            (
                "AIzaSyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe",
                SecretKind::GoogleApiKey,
            ),
            (
                "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z",
                SecretKind::OpenAiKey,
            ),
            (
                "sk-ant-api03-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z",
                SecretKind::AnthropicKey,
            ),
            (
                "npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
                SecretKind::NpmToken,
            ),
            (
                "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",
                SecretKind::SendGridKey,
            ),
            (
                "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
                SecretKind::Jwt,
            ),
        ];
        for (secret, kind) in cases {
            let text = format!("value was {secret} here");
            assert_eq!(kinds(&text), [kind], "{secret}");
            assert_eq!(
                redact(&text),
                format!("value was {} here", kind.placeholder())
            );
        }
    }

    #[test]
    fn netrc_entries_and_command_line_passwords_are_masked() {
        let cases = [
            (
                "machine api.example.com login deploy password N3trc-pass-1\n",
                "machine api.example.com login deploy password [redacted:password]\n",
            ),
            (
                "machine api.example.com\n  login deploy\n  password N3trc-pass-2\n",
                "machine api.example.com\n  login deploy\n  password [redacted:password]\n",
            ),
            (
                "mysql -h db.internal -uroot -pMyQl-pass orders",
                "mysql -h db.internal -uroot -p[redacted:password] orders",
            ),
            (
                "mysqldump -p'quoted pass' shop > shop.sql",
                "mysqldump -p'[redacted:password]' shop > shop.sql",
            ),
            (
                "sshpass -p Ssh-pass-9 ssh deploy@bastion",
                "sshpass -p [redacted:password] ssh deploy@bastion",
            ),
        ];
        for (text, masked) in cases {
            assert_eq!(redact(text), masked, "{text}");
        }
        // `-p` alone prompts; `-p` of other programs, prose about logins and passwords, and
        // a login line without a password are left alone.
        for text in [
            "mysql -u root -p orders",
            "mkdir -p /var/lib/mysql",
            "ssh -p 2222 deploy@bastion",
            "the login page asks for a password before the dashboard",
            "login deploy-bot\nmachine other.example.com",
            "# Return with login / password\n login_i = 0 if _netrc[0] else 1",
        ] {
            assert_eq!(redact(text), text);
        }
    }

    #[test]
    fn authorization_headers_keep_their_scheme() {
        assert_eq!(
            redact("Authorization: Bearer abc123def456ghi789"),
            "Authorization: Bearer [redacted:bearer-token]"
        );
        assert_eq!(
            redact(r#"{"authorization": "Basic dXNlcjpodW50ZXIy"}"#),
            r#"{"authorization": "Basic [redacted:basic-auth]"}"#
        );
        assert_eq!(
            redact("sent bearer 9f8e7d6c5b4a39281706 upstream"),
            "sent bearer [redacted:bearer-token] upstream"
        );
    }

    #[test]
    fn url_passwords_keep_the_user_and_host() {
        assert_eq!(
            redact("DATABASE_URL=postgres://orders:Pa55w0rd!@db.internal:5432/orders"),
            "DATABASE_URL=postgres://orders:[redacted:url-password]@db.internal:5432/orders"
        );
        assert_eq!(
            redact("https://ci-bot: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@github.com/org/repo"),
            "https://ci-bot:[redacted:url-password]@github.com/org/repo"
        );
    }

    #[test]
    fn settings_keep_the_key_in_env_yaml_json_and_logs() {
        assert_eq!(
            redact("DB_PASSWORD=hunter2"),
            "DB_PASSWORD=[redacted:password]"
        );
        assert_eq!(
            redact("  password: 'correct horse'"),
            "  password: '[redacted:password]'"
        );
        assert_eq!(
            redact(r#"{"client_secret": "8f14e45fceea167a5a36dedd4bea2543", "id": 7}"#),
            r#"{"client_secret": "[redacted:secret]", "id": 7}"#
        );
        assert_eq!(
            redact("login ok user=ann api_key=a8d9f7e6c5b4a3 took 3ms"),
            "login ok user=ann api_key=[redacted:api-key] took 3ms"
        );
        assert_eq!(
            redact("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
            "aws_secret_access_key = [redacted:aws-secret-access-key]"
        );
        assert_eq!(
            redact("GITHUB_TOKEN=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"),
            "GITHUB_TOKEN=[redacted:github-token]"
        );
        assert_eq!(
            redact("mysql --password=s3cr3t -h db"),
            "mysql --password=[redacted:password] -h db"
        );
        assert_eq!(
            redact("curl -u admin:hunter2 https://x"),
            "curl -u admin:[redacted:password] https://x"
        );
    }

    #[test]
    fn azure_connection_strings_lose_only_the_key() {
        let text = "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;EndpointSuffix=core.windows.net";
        assert_eq!(
            redact(text),
            "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=[redacted:azure-key];EndpointSuffix=core.windows.net"
        );
    }

    #[test]
    fn placeholders_references_and_code_are_not_secrets() {
        for text in [
            "password: ${DB_PASSWORD}",
            "token = <your-token-here>",
            "\"api_key\": null",
            "password=********",
            "secret: {{ .Values.secret }}",
            "password = getpass.getpass()",
            "token = os.environ[\"TOKEN\"]",
            "password: settings.DB_PASSWORD",
            "\"max_tokens\": 4096, \"tokens\": 12",
            "token: expired",
            "Bearer authentication is required",
            "\"token\": 1234567890",
            "postgres://localhost:5432/db",
        ] {
            assert_eq!(redact(text), text, "{text}");
        }
    }

    #[test]
    fn ordinary_content_is_left_alone() {
        let text = "\
commit 9fceb02d0ae598e95dc970b74767f19372d61af8
Author: Ann <ann@example.com>
id 123e4567-e89b-12d3-a456-426614174000 sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
use sk-learn, a bearer bond, the risk-averse task-manager
data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==
https://docs.rs/regex/1.10.0/regex/#syntax and ssh://git@github.com/org/repo.git
";
        assert_eq!(redact(text), text);
    }

    #[test]
    fn a_rejected_setting_does_not_hide_a_secret_in_its_value() {
        assert_eq!(
            redact("token: Bearer 0a1b2c3d4e5f6a7b8c9d"),
            "token: Bearer [redacted:bearer-token]"
        );
    }

    #[test]
    fn known_secrets_are_masked_in_plain_and_json_escaped_form() {
        let redactor = SecretRedactor::new().with_known_secret("k3y/with\"quote");
        let text = format!(
            "plain k3y/with\"quote and {}",
            serde_json::json!("k3y/with\"quote")
        );
        let out = redactor.redact(&text);
        assert!(!out.contains("k3y"), "{out}");
        assert_eq!(out.matches("[redacted:known-secret]").count(), 2);
    }

    #[test]
    fn short_known_secrets_are_ignored() {
        let redactor = SecretRedactor::new().with_known_secret("ab");
        assert_eq!(redactor.redact("a tab and a cab"), "a tab and a cab");
    }

    #[test]
    fn overlapping_findings_are_replaced_once_and_whole() {
        // The known secret starts inside a setting's value and runs past it.
        let redactor = SecretRedactor::new().with_known_secret("4a39281706 tail");
        let out = redactor.redact("token=9f8e7d6c5b4a39281706 tail end");
        assert_eq!(out, "token=[redacted:token] end");
    }

    #[test]
    fn nothing_to_redact_borrows_the_text() {
        let text = "INFO all good\n";
        assert!(matches!(
            SecretRedactor::new().redact(text),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn multibyte_text_around_secrets_is_handled() {
        let text = "日本語 password=日本語パス ünïcödé AKIAIOSFODNN7EXAMPLE é";
        assert_eq!(
            redact(text),
            "日本語 password=[redacted:password] ünïcödé [redacted:aws-access-key-id] é"
        );
    }

    #[test]
    fn deeply_repeated_settings_neither_recurse_nor_take_long() {
        let text = "token=".repeat(200_000) + "0a1b2c3d4e5f6a7b";
        let started = std::time::Instant::now();
        let out = redact(&text);
        assert!(
            out.ends_with("[redacted:token]"),
            "{}",
            &out[out.len() - 40..]
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }

    proptest::proptest! {
        #[test]
        fn redaction_never_panics_and_is_idempotent(
            parts in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::strategy::Just("password=".to_owned()),
                    proptest::strategy::Just("token: ".to_owned()),
                    proptest::strategy::Just("Authorization: Bearer ".to_owned()),
                    proptest::strategy::Just("https://u:".to_owned()),
                    proptest::strategy::Just("@".to_owned()),
                    proptest::strategy::Just("\"".to_owned()),
                    proptest::strategy::Just("\\\"".to_owned()),
                    proptest::strategy::Just("-----BEGIN PRIVATE KEY-----\n".to_owned()),
                    proptest::strategy::Just("-----END PRIVATE KEY-----".to_owned()),
                    proptest::strategy::Just("AKIAIOSFODNN7EXAMPLE".to_owned()),
                    "[a-zA-Z0-9 _=:;,./(){}\\[\\]\n-]{0,12}",
                    "\\PC{0,6}",
                ],
                0..24,
            )
        ) {
            let text: String = parts.concat();
            let once = redact(&text);
            let twice = redact(&once);
            proptest::prop_assert_eq!(&once, &twice);
        }
    }

    #[test]
    fn debug_never_shows_a_known_secret() {
        let redactor = SecretRedactor::new().with_known_secret("hunter2-secret-value");
        assert!(!format!("{redactor:?}").contains("hunter2"));
    }
}
