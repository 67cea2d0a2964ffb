//! The rules: which expressions find a secret, how each match is classified and how much it must
//! look like a secret to count.

use std::borrow::Cow;

use super::SecretKind;

/// How a rule decides a match's kind.
#[derive(Debug, Clone, Copy)]
pub(super) enum Classify {
    /// Always this kind.
    Fixed(SecretKind),
    /// A `key = value` setting: by the value's shape when it is a recognisable token, else by
    /// the key's name.
    Setting,
}

/// How much a matched value must look like a secret to count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Evidence {
    /// The shape is the evidence (a prefix such as `ghp_`, a PEM header).
    Shape,
    /// Any real value (not a placeholder): the context says it is a password.
    Context,
    /// A value that looks random: a digit in it, or 32 characters or more. Keeps
    /// `token: expired` and `Bearer authentication` alone.
    Random,
}

/// One kind of secret: how it is found, classified and confirmed.
pub(super) struct Rule {
    pub(super) classify: Classify,
    pub(super) evidence: Evidence,
    /// The expression; `(?P<s>…)` marks the part replaced (else the whole match).
    pub(super) pattern: Cow<'static, str>,
}

/// The names settings holding secrets end with (case-insensitive), followed by an optional
/// closing quote, `=`, `:` or `=>`, and the value.
const SETTING_KEY: &str = r"[A-Za-z0-9_.-]*(?i:password|passwd|passphrase|pwd|secret|token|api[_.-]?key|apikey|access[_.-]?key|auth[_.-]?key|private[_.-]?key|client[_.-]?key|key[_.-]?data|credentials?|accountkey|signing[_.-]?key|encryption[_.-]?key|master[_.-]?key)";

/// A setting's value: double-quoted (JSON), single-quoted, double-quoted inside a JSON string,
/// or bare up to a space, quote, comma, semicolon or `&`.
const SETTING_VALUE: &str =
    r#"(?P<s>"(?:[^"\\\n]|\\.)*"|'[^'\n]*'|\\"(?:[^"\\\n]|\\[^"\n])*\\"|[^\s"'\\,;&]+)"#;

/// Every rule; where two match at the same place, the earlier one wins (leftmost-first).
pub(super) fn rules() -> Vec<Rule> {
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
