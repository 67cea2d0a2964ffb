//! Loading, validation, overrides and rule matching.

use super::*;

fn err(text: &str) -> String {
    Config::from_toml_str(text, "condense.toml")
        .unwrap_err()
        .to_string()
}

#[test]
fn empty_file_gives_documented_defaults() {
    let config = Config::from_toml_str("", "condense.toml").unwrap();
    assert_eq!(config.defaults, Rule::default());
    assert_eq!(config.defaults.threshold_tokens, 4000);
    assert_eq!(config.defaults.budget_tokens, 1500);
    assert!(config.llm.is_none());
    assert_eq!(config.cache, CacheConfig::default());
}

#[test]
fn unknown_key_is_named_with_the_file() {
    let message = err("[defaults]\nthreshhold_tokens = 10\n");
    assert!(message.contains("condense.toml"), "{message}");
    assert!(message.contains("defaults.threshhold_tokens"), "{message}");
}

#[test]
fn wrong_type_is_named_with_its_path() {
    let message = err("[[tools]]\nmatch = \"a\"\n\n[[tools]]\nmatch = \"b\"\nmode = \"fast\"\n");
    assert!(message.contains("tools[1].mode"), "{message}");
    let message = err("[llm]\nbase_url = 5\n");
    assert!(message.contains("llm.base_url"), "{message}");
}

#[test]
fn first_matching_rule_wins() {
    let config = Config::from_toml_str(
        "[[tools]]\nmatch = \"read_*\"\nthreshold_tokens = 8000\n\n[[tools]]\nmatch = \"read_file\"\nthreshold_tokens = 1\n",
        "t.toml",
    )
    .unwrap();
    assert_eq!(config.rule_for("read_file").threshold_tokens, 8000);
    assert_eq!(config.rule_for("list").threshold_tokens, 4000);
}

#[test]
fn environment_overrides_the_file() {
    let config = Config::from_toml_str_with_env(
        "[defaults]\nbudget_tokens = 900\n[llm]\nbase_url = \"http://file\"\n",
        "t.toml",
        [
            ("CONDENSE_BUDGET_TOKENS".to_owned(), "700".to_owned()),
            (
                "CONDENSE_LLM_BASE_URL".to_owned(),
                "http://env:4000".to_owned(),
            ),
            ("CONDENSE_LLM_API_KEY".to_owned(), "sk-test".to_owned()),
        ],
    )
    .unwrap();
    assert_eq!(config.defaults.budget_tokens, 700);
    let llm = config.llm.unwrap();
    assert_eq!(llm.base_url, "http://env:4000");
    assert_eq!(llm.api_key.as_deref(), Some("sk-test"));
    assert!(!format!("{llm:?}").contains("sk-test"));
}

#[test]
fn the_merge_lane_defaults_to_half_the_map_lane_and_can_be_set() {
    assert_eq!(Config::default().mapreduce.reduce_concurrency, 3);
    let derived = Config::from_toml_str_with_env(
        "[llm]\nbase_url = \"http://file\"\n",
        "t.toml",
        [("CONDENSE_LLM_MAX_CONCURRENCY".to_owned(), "8".to_owned())],
    )
    .unwrap();
    assert_eq!(derived.mapreduce.reduce_concurrency, 4);
    let set = Config::from_toml_str(
        "[llm]\nmax_concurrency = 8\n[mapreduce]\nreduce_concurrency = 1\n",
        "t.toml",
    )
    .unwrap();
    assert_eq!(set.mapreduce.reduce_concurrency, 1);
    let from_env = Config::from_toml_str_with_env(
        "",
        "t.toml",
        [(
            "CONDENSE_MAPREDUCE_REDUCE_CONCURRENCY".to_owned(),
            "2".to_owned(),
        )],
    )
    .unwrap();
    assert_eq!(from_env.mapreduce.reduce_concurrency, 2);
    let message = err("[mapreduce]\nreduce_concurrency = 0\n");
    assert!(message.contains("reduce_concurrency"), "{message}");
}

#[test]
fn secrets_are_redacted_unless_turned_off_even_without_a_base_url() {
    assert!(Config::default().redact_secrets);
    assert!(Config::from_toml_str("", "t.toml").unwrap().redact_secrets);
    let off = Config::from_toml_str("[llm]\nredact_secrets = false\n", "t.toml").unwrap();
    assert!(!off.redact_secrets);
    assert!(off.llm.is_none());
    let from_env = Config::from_toml_str_with_env(
        "",
        "t.toml",
        [("CONDENSE_LLM_REDACT_SECRETS".to_owned(), "false".to_owned())],
    )
    .unwrap();
    assert!(!from_env.redact_secrets);
}

#[test]
fn bad_environment_value_names_the_variable() {
    let message = Config::from_toml_str_with_env(
        "",
        "t.toml",
        [("CONDENSE_THRESHOLD_TOKENS".to_owned(), "lots".to_owned())],
    )
    .unwrap_err()
    .to_string();
    assert!(message.contains("CONDENSE_THRESHOLD_TOKENS"), "{message}");
    let message = Config::from_toml_str_with_env(
        "",
        "t.toml",
        [("CONDENSE_MODE".to_owned(), "fast".to_owned())],
    )
    .unwrap_err()
    .to_string();
    assert!(message.contains("CONDENSE_MODE"), "{message}");
}

#[test]
fn globs_match_like_shell_patterns() {
    assert!(glob_matches("read_*", "read_file"));
    assert!(glob_matches("*", ""));
    assert!(glob_matches("*_logs", "search_logs"));
    assert!(glob_matches("get_?", "get_x"));
    assert!(!glob_matches("get_?", "get_xy"));
    assert!(glob_matches("[ab]*", "beta"));
    assert!(!glob_matches("[!ab]*", "beta"));
    assert!(glob_matches("tool\\*", "tool*"));
    assert!(!glob_matches("tool\\*", "toolx"));
    assert!(glob_matches("a*b*c", "a__b__b__c"));
    assert!(glob_matches("weird[name", "weird[name"));
}

#[test]
fn proxy_keys_are_typed_in_the_one_config() {
    let config = Config::from_toml_str(
        r#"
        [defaults]
        structured_content = "keep"
        [proxy]
        query_argument_name = "goal"
        upstream_timeout_ms = 2500
        restart_backoff_initial_ms = 50
        restart_backoff_max_ms = 800
        [[tools]]
        match = "echo"
        query_argument = false
        structured_content = "condense"
        "#,
        "t.toml",
    )
    .unwrap();
    assert_eq!(config.proxy.query_argument_name, "goal");
    assert_eq!(
        config.proxy.upstream_timeout,
        Some(Duration::from_millis(2500))
    );
    assert_eq!(
        config.proxy.restart_backoff_initial,
        Duration::from_millis(50)
    );
    assert_eq!(config.proxy.restart_backoff_max, Duration::from_millis(800));
    let echo = config.rule_for("echo");
    assert!(!echo.query_argument);
    assert_eq!(echo.structured_content, StructuredContentPolicy::Condense);
    let other = config.rule_for("other");
    assert!(other.query_argument);
    assert_eq!(other.structured_content, StructuredContentPolicy::Keep);
}

#[test]
fn proxy_keys_default_to_a_120_s_timeout_and_100_ms_doubling_to_30_s() {
    let config = Config::from_toml_str("[proxy]\n", "t.toml").unwrap();
    assert_eq!(config.proxy, ProxyConfig::default());
    assert_eq!(config.proxy.query_argument_name, DEFAULT_QUERY_ARGUMENT);
    // Issue 15: a finite default, so that no relayed request can wait forever.
    assert_eq!(
        config.proxy.upstream_timeout,
        Some(Duration::from_secs(120))
    );
    let no_timeout = Config::from_toml_str("[proxy]\nupstream_timeout_ms = 0\n", "t.toml").unwrap();
    assert_eq!(no_timeout.proxy.upstream_timeout, None);
    assert_eq!(
        config.proxy.restart_backoff_initial,
        Duration::from_millis(100)
    );
    assert_eq!(config.proxy.restart_backoff_max, Duration::from_secs(30));
    assert_eq!(
        config.defaults.structured_content,
        StructuredContentPolicy::Drop
    );
    assert!(config.defaults.query_argument);
}

#[test]
fn bad_proxy_keys_are_named() {
    for (text, key) in [
        ("[proxy]\nbogus = 1\n", "proxy.bogus"),
        (
            "[proxy]\nrestart_backoff_initial_ms = 0\n",
            "proxy.restart_backoff_initial_ms",
        ),
        (
            "[proxy]\nrestart_backoff_initial_ms = 500\nrestart_backoff_max_ms = 100\n",
            "proxy.restart_backoff_max_ms",
        ),
        (
            "[proxy]\nquery_argument_name = \"\"\n",
            "proxy.query_argument_name",
        ),
        (
            "[[tools]]\nmatch = \"x\"\nstructured_content = \"shrink\"\n",
            "tools[0].structured_content",
        ),
    ] {
        let message = err(text);
        assert!(message.contains(key), "{text}: {message}");
        assert!(message.contains("condense.toml"), "{text}: {message}");
    }
}

#[test]
fn environment_overrides_the_proxy_keys_and_names_a_bad_variable() {
    let config = Config::from_toml_str_with_env(
        "[proxy]\nupstream_timeout_ms = 1000\n",
        "t.toml",
        [
            (
                "CONDENSE_PROXY_UPSTREAM_TIMEOUT_MS".to_owned(),
                "3000".to_owned(),
            ),
            (
                "CONDENSE_PROXY_RESTART_BACKOFF_MAX_MS".to_owned(),
                "5000".to_owned(),
            ),
        ],
    )
    .unwrap();
    assert_eq!(config.proxy.upstream_timeout, Some(Duration::from_secs(3)));
    assert_eq!(config.proxy.restart_backoff_max, Duration::from_secs(5));
    let message = Config::from_toml_str_with_env(
        "",
        "t.toml",
        [(
            "CONDENSE_PROXY_UPSTREAM_TIMEOUT_MS".to_owned(),
            "soon".to_owned(),
        )],
    )
    .unwrap_err()
    .to_string();
    assert!(
        message.contains("CONDENSE_PROXY_UPSTREAM_TIMEOUT_MS"),
        "{message}"
    );
}

/// A line in the shape of a shadow file's, with a made-up hash.
const SHADOW_LINE: &str =
    "root:$6$Zq0wJ8xP$fakefakehashnotrealXq1eJ9lM2kLp0oN7uYvT4sR3aB6cD8eF0gH:19700:0:99999:7:::";

#[test]
fn text_that_is_not_toml_is_located_but_never_quoted() {
    let message = err(&format!("{SHADOW_LINE}\ndaemon:*:19700:0:99999:7:::\n"));
    assert!(message.contains("line 1, column"), "{message}");
    assert!(!message.contains("fakefakehash"), "{message}");
    assert!(!message.contains("root:"), "{message}");
    let message = err("[defaults]\nthreshold_tokens = 10\nnot toml at all\n");
    assert!(message.contains("line 3"), "{message}");
    assert!(!message.contains("at all"), "{message}");
}

#[test]
fn a_value_quoted_by_a_schema_error_is_short_and_redacted() {
    let long = "x".repeat(500);
    let message = err(&format!("[defaults]\nmode = \"{long}\"\n"));
    assert!(message.contains("defaults.mode"), "{message}");
    assert!(message.len() < 300, "{} bytes: {message}", message.len());
    let token = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB";
    let message = err(&format!("[llm]\nmodel = [\"{token}\"]\n"));
    assert!(message.contains("llm.model"), "{message}");
    assert!(!message.contains(token), "{message}");
}

#[test]
fn a_base_url_that_is_not_a_url_names_where_it_came_from() {
    let from_env = Config::from_toml_str_with_env(
        "",
        "condense.toml",
        [("CONDENSE_LLM_BASE_URL".to_owned(), "not-a-url".to_owned())],
    )
    .unwrap_err();
    assert!(
        matches!(&from_env, ConfigError::Env { var, .. } if var == "CONDENSE_LLM_BASE_URL"),
        "{from_env}"
    );
    let message = err("[llm]\nbase_url = \"ftp://host\"\n");
    assert!(message.contains("llm.base_url"), "{message}");
    let good = Config::from_toml_str("[llm]\nbase_url = \"http://127.0.0.1:4000\"\n", "t");
    assert!(good.is_ok());
}

#[cfg(unix)]
#[test]
fn loading_a_fifo_fails_at_once_naming_the_file() {
    let dir = std::env::temp_dir().join(format!("condense-cfg-{}", fastrand::u64(..)));
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("condense.toml");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.unwrap().success());
    let message = Config::load(Some(&fifo)).unwrap_err().to_string();
    assert!(message.contains("condense.toml"), "{message}");
    assert!(message.contains("a FIFO"), "{message}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn http_keys_are_typed_and_default_to_a_bounded_loopback_proxy() {
    let defaults = ProxyConfig::default();
    assert_eq!(defaults.max_sessions, 32);
    assert_eq!(defaults.session_idle_timeout, Duration::from_secs(120));
    assert_eq!(defaults.read_timeout, Duration::from_secs(10));
    assert!(defaults.allowed_origins.is_empty());
    assert_eq!(defaults.auth_token_env, None);
    assert!(!defaults.allow_unauthenticated);

    let config = Config::from_toml_str(
        r#"
        [proxy]
        max_sessions = 4
        session_idle_timeout_ms = 1500
        read_timeout_ms = 250
        allowed_origins = ["https://app.example.com", "http://10.0.0.5:*"]
        auth_token_env = "CONDENSE_TOKEN"
        allow_unauthenticated = true
        "#,
        "t.toml",
    )
    .unwrap();
    assert_eq!(config.proxy.max_sessions, 4);
    assert_eq!(
        config.proxy.session_idle_timeout,
        Duration::from_millis(1500)
    );
    assert_eq!(config.proxy.read_timeout, Duration::from_millis(250));
    assert_eq!(
        config.proxy.allowed_origins,
        ["https://app.example.com", "http://10.0.0.5:*"]
    );
    assert_eq!(
        config.proxy.auth_token_env.as_deref(),
        Some("CONDENSE_TOKEN")
    );
    assert!(config.proxy.allow_unauthenticated);
}

#[test]
fn allowed_origins_come_comma_separated_from_the_environment() {
    let config = Config::from_toml_str_with_env(
        "",
        "t.toml",
        [(
            "CONDENSE_PROXY_ALLOWED_ORIGINS".to_owned(),
            "https://a.example, http://b.example:8080".to_owned(),
        )],
    )
    .unwrap();
    assert_eq!(
        config.proxy.allowed_origins,
        ["https://a.example", "http://b.example:8080"]
    );
}

#[test]
fn an_origin_with_a_path_or_no_scheme_is_rejected_naming_the_key() {
    for origin in ["app.example.com", "https://app.example.com/mcp"] {
        let message = err(&format!("[proxy]\nallowed_origins = [\"{origin}\"]\n"));
        assert!(message.contains("allowed_origins"), "{message}");
    }
    let message = err("[proxy]\nmax_sessions = 0\n");
    assert!(message.contains("proxy.max_sessions"), "{message}");
}

#[test]
fn added_tools_default_to_retrieve_and_an_unknown_one_is_named() {
    let defaults = Config::from_toml_str("", "condense.toml").unwrap().proxy;
    assert_eq!(defaults.added_tools, ["condense_retrieve"]);
    let config = Config::from_toml_str(
        "[proxy]\nadded_tools = [\"condense_retrieve\", \"summarize\"]\n",
        "condense.toml",
    )
    .unwrap();
    assert_eq!(config.proxy.added_tools, ["condense_retrieve", "summarize"]);
    let none = Config::from_toml_str("[proxy]\nadded_tools = []\n", "condense.toml").unwrap();
    assert!(none.proxy.added_tools.is_empty());
    let message = err("[proxy]\nadded_tools = [\"condense_retreive\"]\n");
    assert!(message.contains("proxy.added_tools"), "{message}");
    assert!(message.contains("condense_retreive"), "{message}");
}

#[test]
fn added_tools_come_comma_separated_from_the_environment() {
    let env = |value: &str| {
        Config::from_toml_str_with_env(
            "",
            "t.toml",
            [("CONDENSE_PROXY_ADDED_TOOLS".to_owned(), value.to_owned())],
        )
    };
    let config = env("condense_retrieve, call_tool_summarized").unwrap();
    assert_eq!(
        config.proxy.added_tools,
        ["condense_retrieve", "call_tool_summarized"]
    );
    let message = env("summarise").unwrap_err().to_string();
    assert!(
        message.contains("CONDENSE_PROXY_ADDED_TOOLS") && message.contains("summarise"),
        "{message}"
    );
}

#[test]
fn a_value_its_pattern_does_not_match_is_named_by_key_or_variable() {
    let message = err("[store]\ndir = \"   \"\n");
    assert!(message.contains("store.dir"), "{message}");
    assert!(message.contains("does not match"), "{message}");
    let message = err("[store]\nkey_prefix = \"two words\"\n");
    assert!(message.contains("store.key_prefix"), "{message}");
    let env = [("CONDENSE_STORE_DIR".to_owned(), " ".to_owned())];
    let message = Config::from_toml_str_with_env("", "condense.toml", env)
        .unwrap_err()
        .to_string();
    assert!(message.contains("CONDENSE_STORE_DIR"), "{message}");
    // Valid values pass.
    Config::from_toml_str(
        "[store]\ndir = \"/var/lib/condense\"\nkey_prefix = \"c:\"\n",
        "f",
    )
    .unwrap();
}

#[test]
fn every_pattern_of_the_schema_is_checked() {
    // Patterns are checked outside the compiled validator, by a walk through `properties`,
    // `items` and `$ref`: a pattern anywhere else in the schema would go unchecked.
    fn reached(node: &serde_json::Value, schema: &serde_json::Value, depth: usize) -> usize {
        if depth > 16 {
            return 0;
        }
        let node = match node.get("$ref").and_then(|r| r.as_str()) {
            Some(r) => &schema["$defs"][r.trim_start_matches("#/$defs/")],
            None => node,
        };
        usize::from(node.get("pattern").is_some())
            + node
                .get("properties")
                .and_then(|p| p.as_object())
                .map_or(0, |p| {
                    p.values().map(|n| reached(n, schema, depth + 1)).sum()
                })
            + node
                .get("items")
                .map_or(0, |n| reached(n, schema, depth + 1))
    }
    let schema: serde_json::Value = serde_json::from_str(CONFIG_SCHEMA).unwrap();
    let written = CONFIG_SCHEMA.matches("\"pattern\"").count();
    assert!(written > 0);
    assert_eq!(reached(&schema, &schema, 0), written);
}
