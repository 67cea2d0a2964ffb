//! The redactor's behaviour on every kind of secret, and on content it must leave alone.

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
