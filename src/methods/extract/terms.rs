//! Words as the scorer sees them: split on punctuation and camelCase, ASCII-lowercased, lightly
//! stemmed, so that `BinaryDetection`, `binary_detection` and "binary data detected" meet.

/// Calls `f` with every word of `text`, lowercased and stemmed, in `buf` (reused to avoid an
/// allocation per word).
pub(crate) fn for_each_word(text: &str, buf: &mut String, mut f: impl FnMut(&str)) {
    for_each_word_sized(text, buf, &WordFilter::ALL, |w| {
        if let Some(w) = w {
            f(w)
        }
    });
}

/// The words a caller looks at, by what a word is before it is lowercased and stemmed: its
/// length and its first byte. Stemming only shortens a word at its end, so a word outside
/// both cannot become one of those the caller wants.
pub(crate) struct WordFilter {
    lengths: std::ops::Range<usize>,
    /// Per byte: whether a wanted word starts with it (lowercase ASCII, or any other byte).
    first: [bool; 256],
}

impl WordFilter {
    /// Every word.
    pub(crate) const ALL: WordFilter = WordFilter {
        lengths: 0..usize::MAX,
        first: [true; 256],
    };

    /// Words of raw length in `lengths` that could stem to one of `wanted` (each lowercased
    /// and stemmed).
    pub(crate) fn for_words<'w>(
        wanted: impl IntoIterator<Item = &'w str>,
        lengths: std::ops::Range<usize>,
    ) -> WordFilter {
        let mut first = [false; 256];
        for word in wanted {
            if let Some(&b) = word.as_bytes().first() {
                first[usize::from(b)] = true;
            }
        }
        WordFilter { lengths, first }
    }

    fn admits(&self, word: &str) -> bool {
        self.lengths.contains(&word.len())
            && self.first[usize::from(word.as_bytes()[0].to_ascii_lowercase())]
    }
}

/// Like [`for_each_word`], but only words `filter` admits are lowercased and stemmed; the
/// others are reported as `None` (counted, not looked at), which skips most of the work for a
/// caller that looks for a few words.
pub(crate) fn for_each_word_sized(
    text: &str,
    buf: &mut String,
    filter: &WordFilter,
    mut f: impl FnMut(Option<&str>),
) {
    let bytes = text.as_bytes();
    let mut start = None::<usize>;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let is_word = b.is_ascii_alphanumeric() || b >= 0x80;
        if is_word {
            match start {
                None => start = Some(i),
                // A lowercase letter followed by an uppercase one starts a new word (camelCase).
                Some(s) if i > s && b.is_ascii_uppercase() && bytes[i - 1].is_ascii_lowercase() => {
                    emit(&text[s..i], buf, filter, &mut f);
                    start = Some(i);
                }
                Some(_) => {}
            }
        } else if let Some(s) = start.take() {
            emit(&text[s..i], buf, filter, &mut f);
        }
        i += 1;
    }
    if let Some(s) = start {
        emit(&text[s..], buf, filter, &mut f);
    }
}

fn emit(word: &str, buf: &mut String, filter: &WordFilter, f: &mut impl FnMut(Option<&str>)) {
    // Single characters carry no meaning for ranking.
    if word.len() < 2 {
        return;
    }
    if !filter.lengths.contains(&word.len()) {
        f(None);
        return;
    }
    // `tty2`, `sha256`, `python3`: the letters alone are a word too.
    let letters = word.bytes().take_while(u8::is_ascii_alphabetic).count();
    let letters_too =
        letters >= 2 && letters < word.len() && word.as_bytes()[letters].is_ascii_digit();
    if !filter.admits(word) {
        // Counted as the words they would have been.
        f(None);
        if letters_too {
            f(None);
        }
        return;
    }
    buf.clear();
    buf.push_str(word);
    buf.make_ascii_lowercase();
    stem(buf);
    f(Some(buf));
    if letters_too {
        buf.clear();
        buf.push_str(&word[..letters]);
        buf.make_ascii_lowercase();
        f(Some(buf));
    }
}

/// Strips common English suffixes so that inflected forms share one key. Crude on purpose: it
/// only has to map a query word and a text word to the same key, not produce a real stem.
pub(crate) fn stem(word: &mut String) {
    if !word.is_ascii() || word.bytes().any(|b| b.is_ascii_digit()) {
        return;
    }
    if word.len() <= 4 {
        // A short plural after a consonant (`urls`, `ids`, `logs`, `jobs`) is its noun; `this`,
        // `does`, `was` and `less` end otherwise.
        let b = word.as_bytes();
        let n = b.len();
        if n >= 3 && b[n - 1] == b's' && !b"aeious".contains(&b[n - 2]) {
            word.truncate(n - 1);
        } else if n == 4 && b[3] == b'e' && !b"aeiou".contains(&b[2]) {
            // `wage`, `file`, `name` as their plurals are stemmed (`wages` → `wag`).
            word.truncate(3);
        }
        return;
    }
    for suffix in [
        "ations", "ation", "ings", "ing", "ions", "ion", "edly", "ed", "ies", "es", "ly", "s",
    ] {
        if word.len() > suffix.len() + 2 && word.ends_with(suffix) {
            word.truncate(word.len() - suffix.len());
            if suffix == "ies" {
                word.push('y');
            }
            break;
        }
    }
    // "transferred" → "transferr" → "transfer"; "replicate" → "replicat" (as "replicated").
    let b = word.as_bytes();
    let n = b.len();
    let doubled = b[n - 1] == b[n - 2] && !matches!(b[n - 1], b'l' | b's' | b'z');
    if n > 3 && (doubled || b[n - 1] == b'e') {
        word.truncate(n - 1);
    }
    american(word);
}

/// British spellings meet American ones: a query about a "licence" or a "colour space" finds
/// the `license` and `ColorSpace` of an output, and the other way round. Runs on stems, so
/// `initialised` and `initialize` (`initialis`, `initializ`) meet too.
fn american(stem: &mut String) {
    let n = stem.len();
    if n < 5 {
        return;
    }
    if stem.ends_with("our") {
        // colour, behaviour, favour, neighbour
        stem.replace_range(n - 3.., "or");
    } else if stem.ends_with("enc") {
        // licence, defence, offence
        stem.replace_range(n - 1.., "s");
    } else if stem.ends_with("is") && n >= 6 {
        // serialise, initialised, organisation
        stem.replace_range(n - 1.., "z");
    } else if stem.ends_with("tr") {
        // centre, metre, litre
        stem.replace_range(n - 2.., "ter");
    } else if stem.ends_with("ogu") {
        // catalogue, dialogue
        stem.truncate(n - 1);
    }
}

/// Words too common in questions to say anything about which part of an output matters.
pub(crate) fn is_stopword(word: &str) -> bool {
    const STOPWORDS: &[&str] = &[
        "a", "about", "above", "after", "again", "all", "also", "am", "an", "and", "any", "are",
        "as", "at", "be", "been", "before", "being", "below", "between", "both", "but", "by",
        "can", "could", "did", "do", "does", "doing", "down", "during", "each", "else", "ever",
        "exact", "exactly", "few", "for", "from", "further", "giv", "give", "had", "has", "have",
        "having", "he", "her", "here", "hers", "him", "his", "how", "if", "in", "into", "is", "it",
        "its", "itself", "just", "let", "list", "me", "mor", "more", "most", "my", "no", "nor",
        "not", "now", "of", "off", "on", "once", "one", "only", "or", "other", "our", "out",
        "over", "own", "pleas", "please", "sam", "same", "she", "should", "show", "so", "som",
        "some", "such", "tell", "than", "that", "the", "their", "them", "then", "there", "thes",
        "these", "they", "this", "thos", "those", "through", "to", "too", "under", "until", "up",
        "us", "very", "was", "we", "wer", "were", "what", "when", "wher", "where", "which", "whil",
        "while", "who", "whom", "why", "will", "with", "would", "you", "your", "below", "abov",
        "given", "get", "find", "name", "nam", "both", "among", "per",
    ];
    STOPWORDS.contains(&word)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut buf = String::new();
        for_each_word(text, &mut buf, |w| out.push(w.to_owned()));
        out
    }

    #[test]
    fn camel_case_and_snake_case_split_into_the_same_words() {
        assert_eq!(words("BinaryDetection"), words("binary_detection"));
    }

    #[test]
    fn inflections_share_a_stem() {
        assert_eq!(words("replicated"), words("replicate"));
        assert_eq!(words("transferred"), words("transfer"));
        assert_eq!(words("detection"), words("detected"));
        assert_eq!(words("flags"), words("flag"));
        assert_eq!(words("URLs"), words("url"));
        assert_eq!(words("ids"), words("id"));
        assert_eq!(words("logs"), words("log"));
        assert_eq!(words("this"), vec!["this"]);
        assert_eq!(words("does"), vec!["does"]);
        assert_eq!(words("keys"), words("key"));
        assert_eq!(words("wages"), words("wage"));
        assert_eq!(words("files"), words("file"));
        assert_eq!(words("names"), words("name"));
        assert_eq!(words("true"), vec!["true"]);
    }

    #[test]
    fn british_spellings_meet_american_ones() {
        assert_eq!(words("licence"), words("license"));
        assert_eq!(words("ColourSpace"), words("color_space"));
        assert_eq!(words("behaviour"), words("behavior"));
        assert_eq!(words("initialised"), words("initialized"));
        assert_eq!(words("serialisation"), words("serialization"));
        assert_eq!(words("centre"), words("center"));
        assert_eq!(words("catalogue"), words("catalog"));
        // Words that only look alike stay apart.
        assert_ne!(words("license"), words("licensee"));
        assert_eq!(words("this"), vec!["this"]);
    }

    #[test]
    fn a_filter_looks_only_at_words_it_could_want_and_counts_every_word() {
        let text = "Revert caching tty2 defaultSSLContext in sessions";
        let mut buf = String::new();
        let (mut all, mut looked) = (0, Vec::new());
        for_each_word_sized(text, &mut buf, &WordFilter::ALL, |_| all += 1);
        let filter = WordFilter::for_words(["cach", "tty"], 0..usize::MAX);
        let mut counted = 0;
        for_each_word_sized(text, &mut buf, &filter, |w| {
            counted += 1;
            looked.extend(w.map(str::to_owned));
        });
        assert_eq!(counted, all);
        assert_eq!(looked, ["cach", "tty2", "tty"]);
    }

    #[test]
    fn letters_before_digits_are_a_word_too() {
        assert_eq!(words("tty2"), vec!["tty2".to_owned(), "tty".to_owned()]);
    }

    #[test]
    fn single_characters_and_punctuation_are_not_words() {
        assert_eq!(words("a + b = 10"), vec!["10".to_owned()]);
    }

    #[test]
    fn non_ascii_text_is_kept_whole() {
        assert_eq!(
            words("Grüße welt"),
            vec!["grüße".to_owned(), "welt".to_owned()]
        );
    }
}
