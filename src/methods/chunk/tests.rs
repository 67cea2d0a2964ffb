use super::ranges::is_horizontal_rule;
use super::*;

fn counter() -> TokenCounter {
    TokenCounter::default()
}

fn options(chunk_tokens: usize, overlap_tokens: usize) -> ChunkOptions {
    ChunkOptions::default()
        .with_chunk_tokens(chunk_tokens)
        .with_overlap_tokens(overlap_tokens)
}

fn markdown() -> String {
    let mut text = String::from("# Manual\n\nIntro paragraph.\n\n");
    for section in 0..6 {
        text.push_str(&format!("## Section {section}\n\n"));
        for para in 0..8 {
            text.push_str(&format!(
                "Paragraph {para} of section {section} talks about pumps and valves at {para}0 PSI.\n\n"
            ));
        }
        text.push_str("---\n\n");
    }
    text
}

#[test]
fn empty_text_gives_no_chunks() {
    assert!(chunk("", ContentKind::Text, &ChunkOptions::default(), &counter()).is_empty());
    assert!(
        chunk(
            " \n\n ",
            ContentKind::Log,
            &ChunkOptions::default(),
            &counter()
        )
        .is_empty()
    );
}

#[test]
fn small_text_is_one_chunk_without_context() {
    let chunks = chunk(
        "just a line",
        ContentKind::Text,
        &ChunkOptions::default(),
        &counter(),
    );
    assert_eq!(chunks.len(), 1);
    assert_eq!(chunks[0].body, "just a line");
    assert_eq!(chunks[0].context, "");
}

#[test]
fn markdown_chunks_carry_their_section_header() {
    let text = markdown();
    let chunks = chunk(&text, ContentKind::Markdown, &options(120, 20), &counter());
    assert!(chunks.len() > 6);
    for c in &chunks {
        assert!(c.tokens <= 120, "{} tokens", c.tokens);
        let has_section = c.context.contains("## Section") || c.body.starts_with("## Section");
        let is_intro = c.body.starts_with("# Manual");
        assert!(has_section || is_intro, "no header context in {c:?}");
    }
}

#[test]
fn a_body_starting_with_a_header_drops_the_sibling_from_context() {
    let text = markdown();
    let chunks = chunk(&text, ContentKind::Markdown, &options(200, 20), &counter());
    let starts = chunks
        .iter()
        .find(|c| c.body.starts_with("## Section 3"))
        .unwrap();
    assert_eq!(starts.context, "# Manual");
}

#[test]
fn headers_inside_code_fences_are_content() {
    let (headers, _) = scan_markdown("# Real\n```\n# not a header\n```\n");
    assert_eq!(headers.len(), 1);
    assert_eq!(headers[0].line, "# Real");
}

#[test]
fn horizontal_rules_are_recognised() {
    assert!(is_horizontal_rule("---"));
    assert!(is_horizontal_rule("* * *"));
    assert!(!is_horizontal_rule("--"));
    assert!(!is_horizontal_rule("-- x"));
}

#[test]
fn logs_are_cut_in_whole_lines() {
    let log: String = (0..500)
        .map(|i| {
            format!(
                "2024-01-01 12:00:{:02} INFO worker-{i} processed batch {i}\n",
                i % 60
            )
        })
        .collect();
    let chunks = chunk(&log, ContentKind::Log, &options(200, 50), &counter());
    assert!(chunks.len() > 5);
    for c in &chunks {
        assert!(c.tokens <= 200);
        for line in c.body.lines() {
            assert!(line.starts_with("2024-01-01"), "cut line: {line}");
        }
    }
}

#[test]
fn one_huge_line_is_cut_at_tokens_with_overlap() {
    let line: String = (0..3000).map(|i| format!("w{i} ")).collect();
    let chunks = chunk(&line, ContentKind::Log, &options(200, 40), &counter());
    assert!(chunks.len() > 3);
    let spans: Vec<_> = chunks.iter().map(|c| c.span.clone().unwrap()).collect();
    for pair in spans.windows(2) {
        assert!(pair[1].start < pair[0].end, "no overlap between {pair:?}");
    }
}

#[test]
fn token_strategy_ignores_headers() {
    let text = markdown();
    let opts = options(100, 10).with_strategy(ChunkStrategy::Token);
    let chunks = chunk(&text, ContentKind::Markdown, &opts, &counter());
    assert!(
        chunks
            .iter()
            .all(|c| c.context.is_empty() && c.tokens <= 100)
    );
}

#[test]
fn json_array_chunks_are_valid_json_groups_of_whole_records() {
    let records: Vec<Value> = (0..300)
        .map(|i| serde_json::json!({"id": i, "name": format!("item-{i}"), "ok": i % 7 != 0}))
        .collect();
    let text =
        serde_json::to_string_pretty(&serde_json::json!({"items": records, "total": 300})).unwrap();
    let chunks = chunk(&text, ContentKind::Json, &options(300, 20), &counter());
    assert!(chunks.len() > 3);
    let mut seen = Vec::new();
    for c in &chunks {
        assert!(c.tokens <= 300);
        let body: Value = serde_json::from_str(&c.body).expect("chunk body is JSON");
        if c.context.starts_with("$.items") {
            seen.extend(body.as_array().unwrap().iter().cloned());
        }
    }
    assert_eq!(seen, records);
}

#[test]
fn json_path_names_the_elements() {
    let text = serde_json::to_string(&(0..400).collect::<Vec<_>>()).unwrap();
    let chunks = chunk(&text, ContentKind::Json, &options(100, 10), &counter());
    assert!(
        chunks[0].context.starts_with("$[0..="),
        "{}",
        chunks[0].context
    );
    assert!(chunks[0].context.ends_with("of 400 elements)"));
}

#[test]
fn a_huge_json_string_is_cut_with_its_path() {
    let text = serde_json::json!({"blob": "x y ".repeat(2000)}).to_string();
    let chunks = chunk(&text, ContentKind::Json, &options(100, 10), &counter());
    assert!(chunks.len() > 5);
    assert!(
        chunks
            .iter()
            .all(|c| c.context == "$.blob (part of one value)" && c.tokens <= 100)
    );
}

#[test]
fn invalid_json_falls_back_to_text() {
    let text = "{ not json\n".repeat(200);
    let chunks = chunk(&text, ContentKind::Json, &options(100, 10), &counter());
    assert!(chunks.len() > 1 && chunks.iter().all(|c| c.span.is_some()));
}

#[test]
fn detect_recognises_json() {
    assert_eq!(detect_kind(" [1, 2]"), ContentKind::Json);
    assert_eq!(detect_kind("[1, 2"), ContentKind::Text);
    assert_eq!(detect_kind("hello"), ContentKind::Text);
}

#[test]
fn a_tiny_chunk_size_is_raised_to_the_minimum() {
    let text = "word ".repeat(500);
    let chunks = chunk(&text, ContentKind::Text, &options(1, 0), &counter());
    assert!(chunks.iter().all(|c| c.tokens <= MIN_CHUNK_TOKENS));
    assert!(chunks.len() > 10);
}

#[test]
fn indexes_follow_the_order() {
    let text = markdown();
    let chunks = chunk(&text, ContentKind::Markdown, &options(100, 10), &counter());
    assert!(chunks.iter().enumerate().all(|(i, c)| c.index == i));
}
