//! The counter against the reference: tiktoken-rs's `encode_ordinary` gives the same counts,
//! limit decisions and cut points on every corpus file and on random and adversarial text.

use std::path::{Path, PathBuf};

use condense::{Encoding, TokenCounter};
use proptest::prelude::*;
use tiktoken_rs::CoreBPE;

const ENCODINGS: [Encoding; 2] = [Encoding::Cl100kBase, Encoding::O200kBase];

fn reference(encoding: Encoding) -> &'static CoreBPE {
    match encoding {
        Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
        Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
        other => panic!("no reference for {other}"),
    }
}

/// The cut `TokenCounter::prefix_within` promises, computed with the reference tokenizer: the
/// end of the `limit`-th token, stepped back while re-tokenizing the prefix exceeds `limit`.
fn reference_prefix(bpe: &CoreBPE, text: &str, limit: usize) -> usize {
    if limit == 0 {
        return 0;
    }
    if bpe.encode_ordinary(text).len() <= limit {
        return text.len();
    }
    let mut ends = Vec::new();
    let mut offset = 0;
    for token in bpe.encode_ordinary(text) {
        offset += bpe.decode_bytes(&[token]).expect("a known token").len();
        ends.push(offset);
    }
    let mut take = limit.min(ends.len());
    loop {
        let mut cut = if take == 0 { 0 } else { ends[take - 1] };
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        if take == 0 || bpe.encode_ordinary(&text[..cut]).len() <= limit {
            return cut;
        }
        take = take.saturating_sub(1 + take / 64);
    }
}

/// Checks count, the limit decisions around the exact count and, for `limits`, the prefix cut.
fn assert_agrees(name: &str, text: &str, limits: &[usize]) {
    for encoding in ENCODINGS {
        let counter = TokenCounter::new(encoding);
        let bpe = reference(encoding);
        let exact = bpe.encode_ordinary(text).len();
        assert_eq!(counter.count(text), exact, "{name} ({encoding}): count");
        assert_eq!(
            counter.count_up_to(text, exact),
            Some(exact),
            "{name} ({encoding})"
        );
        assert!(
            !counter.exceeds(text, exact),
            "{name} ({encoding}): exceeds its count"
        );
        if exact > 0 {
            assert!(counter.exceeds(text, exact - 1), "{name} ({encoding})");
            assert_eq!(
                counter.count_up_to(text, exact - 1),
                None,
                "{name} ({encoding})"
            );
        }
        for &limit in limits {
            assert_eq!(
                counter.prefix_within(text, limit).len(),
                reference_prefix(bpe, text, limit),
                "{name} ({encoding}): prefix within {limit}"
            );
        }
    }
}

fn files_under(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files_under(&path, found);
        } else {
            found.push(path);
        }
    }
}

#[test]
fn every_corpus_file_counts_as_tiktoken_counts_it() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    let mut files = Vec::new();
    for split in ["dev", "dev2", "holdout"] {
        files_under(&root.join(split), &mut files);
    }
    files.sort();
    if files.is_empty() {
        eprintln!("skipped: no corpus at {}", root.display());
        return;
    }
    for file in &files {
        let bytes = std::fs::read(file).expect("a readable corpus file");
        let text = String::from_utf8_lossy(&bytes);
        assert_agrees(&file.display().to_string(), &text, &[1, 100, 2000]);
    }
}

#[test]
fn a_large_input_counted_in_parallel_counts_as_tiktoken_counts_it() {
    // Large enough to be counted in parts, with lines of every shape the cuts must respect.
    let mut text = String::new();
    for i in 0..20_000 {
        text.push_str(&format!(
            "  {{\"id\": {i}}},\n/{i} x\n\n \t\n\tend {i} é 世界\n  \n- item {i}\r\n"
        ));
    }
    assert!(text.len() > 1 << 20);
    assert_agrees("generated 1 MB", &text, &[]);
}

/// Text the tokenizers find hard: long runs, scripts, emoji, replaced invalid UTF-8.
fn adversarial_text() -> impl Strategy<Value = String> {
    let atoms = prop::sample::select(vec![
        "hello",
        " ",
        "  ",
        "\n",
        "\n\n",
        " \n",
        "\r\n",
        "\t",
        "世界",
        "日本語",
        "😀",
        "👩‍👩‍👧",
        "123456",
        "'s",
        "'LL",
        "e\u{301}",
        "Ω",
        "ДОМ",
        "/",
        "\n/",
        "...",
        "{\"a\":",
        "é",
        "\u{200b}",
        "x",
        "\u{fffd}",
    ]);
    prop_oneof![
        any::<String>(),
        prop::collection::vec(atoms, 0..400).prop_map(|atoms| atoms.concat()),
        (any::<char>(), 1usize..3000).prop_map(|(c, n)| c.to_string().repeat(n)),
        (
            prop::sample::select(vec![" ", "\n", " \n", "\t ", "a", "1", "世"]),
            1usize..3000
        )
            .prop_map(|(s, n)| s.repeat(n)),
        "[ \t\n\r]{0,600}",
        "[0-9]{0,2000}",
        "[\u{4e00}-\u{9fff}]{0,600}",
        "[\u{1F300}-\u{1F64F}\u{1F900}-\u{1F9FF}]{0,300}",
        "[a-zA-Z0-9 \n\u{4e00}-\u{4e40}\u{0400}-\u{04ff}\u{1F600}-\u{1F640}.,:/]{0,800}",
        prop::collection::vec(any::<u8>(), 0..2000)
            .prop_map(|bytes| String::from_utf8_lossy(&bytes).into_owned()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(192))]

    #[test]
    fn random_and_adversarial_text_counts_as_tiktoken_counts_it(
        text in adversarial_text(),
        limit in 0usize..400,
    ) {
        assert_agrees("generated", &text, &[limit]);
        for encoding in ENCODINGS {
            let exact = reference(encoding).encode_ordinary(&text).len();
            let counter = TokenCounter::new(encoding);
            prop_assert_eq!(counter.exceeds(&text, limit), exact > limit);
            prop_assert_eq!(
                counter.count_up_to(&text, limit),
                (exact <= limit).then_some(exact)
            );
        }
    }
}
