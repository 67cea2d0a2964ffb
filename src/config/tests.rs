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
