//! The phrases of a question that say how to read its words rather than what to look for:
//! what it sets aside ("besides the many line-length hits"), the words next to a superlative
//! ("the largest area"), which end of a column it asks about, and whether it asks about the
//! end of the output ("at the very end", "the final tally"); what it asks records to lack ("no
//! license") and the words it negates ("not declared").

use std::borrow::Cow;

use super::super::terms::{for_each_word, is_stopword, stem};
use super::{Ends, Ranked, WordHash};

/// Words that ask for the largest values of a column.
const HIGH_WORDS: &[&str] = &[
    "largest", "biggest", "highest", "longest", "slowest", "heaviest", "most", "maximum", "max",
    "greatest", "worst", "top", "peak", "exceeded", "exceeds", "exceed", "above", "over",
];
/// Words that ask for the smallest values of a column.
const LOW_WORDS: &[&str] = &[
    "smallest", "lowest", "shortest", "fastest", "lightest", "least", "minimum", "min", "fewest",
    "cheapest", "below", "under",
];

/// Words that set aside what follows them, to the end of the clause: "apart from the many
/// line-length hits, which …" asks about anything but those.
const EXCLUSIONS: &[&[&str]] = &[
    &["apart", "from"],
    &["aside", "from"],
    &["besides"],
    &["leaving", "aside"],
    &["setting", "aside"],
    &["putting", "aside"],
    &["other", "than"],
    &["ignoring"],
    &["excluding"],
    &["except", "for"],
    &["not", "counting"],
    &["not", "under"],
    // A relative clause that sets a kind of item aside ("the problems that are not
    // passive-voice warnings"), not a negated verb ("why is the build not passing") nor a
    // question ("which are not …").
    &["that", "are", "not"],
    &["that", "aren't"],
];

/// Items of a list an aside runs on over ("other than the MIT, ISC or BSD licenses"): at most
/// this many words each, none of them a question's.
const MAX_LIST_ITEM_WORDS: usize = 2;
const QUESTION_WORDS: &[&str] = &["which", "what", "why", "how", "where", "when", "who"];

/// The key words (stemmed) a question word asks for.
const WHY_KEYS: &[&str] = &["reason", "caus"];

/// The keys `text`'s question words ask for: [`WHY_KEYS`] when it asks why.
pub(super) fn asked_keys(text: &str) -> &'static [&'static str] {
    let asks_why = text
        .split(|c: char| !c.is_ascii_alphabetic())
        .any(|w| w.eq_ignore_ascii_case("why"));
    if asks_why { WHY_KEYS } else { &[] }
}

/// The marks that end a clause, at the end of a token.
pub(super) const CLAUSE_ENDS: [char; 7] = [',', ';', ':', '?', '.', '!', ')'];

/// A token as a bare lowercase word: `"(Weight_in_lbs)?"` → `weight_in_lbs`.
pub(super) fn bare(token: &str) -> String {
    token
        .trim_matches(|c: char| !c.is_ascii_alphanumeric())
        .to_ascii_lowercase()
}

/// `text` without the phrases it sets aside ("besides the many inline-HTML hits", "ignoring
/// the routine 404 lines"), each from its opening words to the end of its clause. A word the
/// query also uses outside them stays a query word.
pub(super) fn without_exclusions(text: &str) -> Cow<'_, str> {
    let tokens: Vec<&str> = text.split_whitespace().collect();
    let ends_clause = |t: &str| t.ends_with(CLAUSE_ENDS);
    let mut kept: Vec<&str> = Vec::with_capacity(tokens.len());
    let mut i = 0;
    let mut dropped = false;
    while i < tokens.len() {
        let opening = EXCLUSIONS.iter().find(|phrase| {
            phrase.len() <= tokens.len() - i
                && phrase.iter().enumerate().all(|(k, w)| {
                    bare(tokens[i + k]) == *w
                        && (k + 1 == phrase.len() || !ends_clause(tokens[i + k]))
                })
        });
        match opening {
            Some(phrase) if !ends_clause(tokens[i + phrase.len() - 1]) => {
                let mut end = i + phrase.len();
                while end < tokens.len() && !ends_clause(tokens[end]) {
                    end += 1;
                }
                end = list_end(&tokens, end);
                dropped = true;
                // The clause's closing mark stays: it still ends the words before it.
                if let Some(last) = tokens.get(end) {
                    let mark = &last[last.trim_end_matches(CLAUSE_ENDS).len()..];
                    kept.push(mark);
                }
                i = end + 1;
            }
            _ => {
                kept.push(tokens[i]);
                i += 1;
            }
        }
    }
    if dropped {
        Cow::Owned(kept.join(" "))
    } else {
        Cow::Borrowed(text)
    }
}

/// Words that ask for what a record lacks: "which component declares no license".
const ABSENCE_WORDS: &[&str] = &["no", "without", "lacks", "lacking"];
/// Words read after one of them for what is lacking.
const MAX_ABSENT_WORDS: usize = 2;

/// The words, normalized as the query's, of what the query asks records to lack ("no license
/// at all", "without a description"): a record whose field of that name is empty answers.
pub(super) fn absent_words(text: &str) -> std::collections::HashSet<String, WordHash> {
    let tokens: Vec<&str> = text.split_whitespace().collect();
    let mut absent = std::collections::HashSet::default();
    let mut buf = String::new();
    for (i, token) in tokens.iter().enumerate() {
        if !ABSENCE_WORDS.contains(&bare(token).as_str()) || token.ends_with(CLAUSE_ENDS) {
            continue;
        }
        let mut taken = 0;
        for next in &tokens[i + 1..] {
            let word = bare(next);
            if !matches!(word.as_str(), "a" | "an" | "any" | "the") {
                for_each_word(next, &mut buf, |w| {
                    absent.insert(w.to_owned());
                });
                taken += 1;
            }
            if taken == MAX_ABSENT_WORDS || next.ends_with(CLAUSE_ENDS) {
                break;
            }
        }
    }
    absent
}

/// Words that negate the word after them ("not declared", "never used").
const NEGATIONS: &[&str] = &["not", "never"];
/// Words passed over between a negation and the word it negates ("not yet used").
const NEGATION_FILLERS: &[&str] = &["be", "been", "being", "yet", "ever", "even", "actually"];

/// The words, normalized as the query's, that the query negates ("imports that are not
/// declared", "dependencies never used"): an output names what they say with one word,
/// `undeclared`, `unused`.
pub(super) fn negated_words(text: &str) -> Vec<String> {
    let tokens: Vec<&str> = text.split_whitespace().collect();
    let mut negated = Vec::new();
    let mut buf = String::new();
    for (i, token) in tokens.iter().enumerate() {
        if !NEGATIONS.contains(&bare(token).as_str()) || token.ends_with(CLAUSE_ENDS) {
            continue;
        }
        let next = tokens[i + 1..]
            .iter()
            .find(|t| !NEGATION_FILLERS.contains(&bare(t).as_str()));
        if let Some(next) = next.filter(|t| {
            t.bytes()
                .all(|b| b.is_ascii_alphabetic() || b".,;:?!".contains(&b))
        }) {
            for_each_word(next, &mut buf, |w| negated.push(w.to_owned()));
        }
    }
    negated
}

/// Words an output may write as one that the query writes as two: "shut down" is
/// `Shutdown`, "time out" `timeout`, "host name" `hostname`. Each pair of neighbours in a
/// clause, letters only, the first no stopword and the second none either or a particle:
/// the first stemmed, and the two run together and stemmed.
pub(super) fn compound_words(text: &str) -> Vec<(String, String)> {
    /// The first word of a compound has at least this many letters.
    const MIN_FIRST: usize = 3;
    /// The stopwords that end compounds (`shutdown`, `setup`, `timeout`, `login`).
    const PARTICLES: &[&str] = &["down", "up", "out", "in", "on", "off", "over"];
    let tokens: Vec<&str> = text.split_whitespace().collect();
    let letters = |t: &str| {
        let word = bare(t);
        (!word.is_empty() && word.bytes().all(|b| b.is_ascii_alphabetic())).then_some(word)
    };
    let mut compounds = Vec::new();
    for pair in tokens.windows(2) {
        if pair[0].ends_with(CLAUSE_ENDS) {
            continue;
        }
        let (Some(first), Some(second)) = (letters(pair[0]), letters(pair[1])) else {
            continue;
        };
        if first.len() < MIN_FIRST
            || is_stopword(&first)
            || (is_stopword(&second) && !PARTICLES.contains(&second.as_str()))
        {
            continue;
        }
        let mut compound = first.clone() + &second;
        stem(&mut compound);
        let mut first = first;
        stem(&mut first);
        compounds.push((first, compound));
    }
    compounds
}

/// Where a clause that ends with a comma at `end` ends when it is a list's first item: at the
/// list's last item, after its "or" or "and" ("the MIT, ISC, Apache-2.0 or BSD licenses").
/// Every item is a few words; otherwise the comma ends the clause.
fn list_end(tokens: &[&str], end: usize) -> usize {
    if !tokens.get(end).is_some_and(|t| t.ends_with(',')) {
        return end;
    }
    let mut at = end + 1;
    loop {
        let start = at;
        while at < tokens.len()
            && at - start < MAX_LIST_ITEM_WORDS
            && !tokens[at].ends_with(CLAUSE_ENDS)
            && !matches!(bare(tokens[at]).as_str(), "or" | "and")
        {
            at += 1;
        }
        if tokens[start..at]
            .iter()
            .any(|t| QUESTION_WORDS.contains(&bare(t).as_str()))
        {
            return end;
        }
        let Some(token) = tokens.get(at) else {
            return end;
        };
        match bare(token).as_str() {
            // The last item runs to the clause's end, a few words on.
            "or" | "and" if at > start || start > end + 1 => {
                let last = at + 1;
                return (last..tokens.len().min(last + MAX_LIST_ITEM_WORDS + 1))
                    .find(|&k| tokens[k].ends_with(CLAUSE_ENDS))
                    .unwrap_or(end);
            }
            _ if token.ends_with(',') && at - start < MAX_LIST_ITEM_WORDS => at += 1,
            _ => return end,
        }
    }
}

/// Words that rank by a column: the superlatives of [`HIGH_WORDS`] and [`LOW_WORDS`], not
/// their thresholds ("over 100", "below 5"), which may be about anything.
const SUPERLATIVES: &[&str] = &[
    "largest", "biggest", "highest", "longest", "slowest", "heaviest", "most", "maximum",
    "greatest", "worst", "top", "peak", "smallest", "lowest", "shortest", "fastest", "lightest",
    "least", "minimum", "fewest", "cheapest",
];
/// Words that after "how" ask for a peak, as a superlative does: "how high did the RSS get",
/// "how large did the queue grow".
const HOW_HIGH: &[&str] = &["high", "large", "big"];

/// Whether the word at `i` of `tokens` asks for a peak after "how".
fn asks_how_high(tokens: &[&str], i: usize) -> bool {
    i > 0 && bare(tokens[i - 1]) == "how" && HOW_HIGH.contains(&bare(tokens[i]).as_str())
}

/// The columns a superlative ranks by when the query names none ("which file is the largest"
/// of a listing with a `Length` column, "the slowest" of one with `duration`).
const IMPLIED_COLUMNS: &[(&[&str], &[&str])] = &[
    (
        &["largest", "biggest", "smallest"],
        &["size", "length", "bytes"],
    ),
    (&["slowest", "fastest"], &["duration", "time", "elapsed"]),
    // "The longest lines" a linter flags are measured in characters.
    (
        &["longest", "shortest"],
        &[
            "duration",
            "time",
            "elapsed",
            "length",
            "characters",
            "chars",
        ],
    ),
    (&["heaviest", "lightest"], &["weight", "mass"]),
    (&["cheapest"], &["price", "cost"]),
];
/// How far from a superlative, in words, the column it ranks by is named: after it ("the
/// highest fertility rate in 2011"), or just before ("bytes the most").
const RANKED_AFTER: usize = 6;
const RANKED_BEFORE: usize = 2;

/// The words, normalized as the query's, within a few words of a superlative in its
/// clause: those after it, what it ranks by ("the largest area"), apart from those around
/// it, just before it ("which directory is largest") or in a parenthesis after it, which
/// mostly says what to report ("the highest GDP (value and year)"). "At least" and "at most"
/// are bounds, not superlatives.
pub(super) fn ranked_words(text: &str) -> Ranked {
    let tokens: Vec<&str> = text.split_whitespace().collect();
    let ends_sentence = |t: &str| t.ends_with(CLAUSE_ENDS) && !t.ends_with([':', ')']);
    let mut ranked = Ranked::default();
    let mut buf = String::new();
    for (i, token) in tokens.iter().enumerate() {
        let word = bare(token);
        let bound =
            i > 0 && bare(tokens[i - 1]) == "at" && matches!(word.as_str(), "least" | "most");
        if !(SUPERLATIVES.contains(&word.as_str()) || asks_how_high(&tokens, i)) || bound {
            continue;
        }
        let mut from = i;
        while from > 0 && i - from < RANKED_BEFORE && !ends_sentence(tokens[from - 1]) {
            from -= 1;
        }
        // A parenthesis runs on over its commas ("the largest (path, length and CRC)").
        let mut to = i;
        let mut open = false;
        while to + 1 < tokens.len() && to - i < RANKED_AFTER {
            open = (open || tokens[to].starts_with('(')) && !tokens[to].contains(')');
            if !open && ends_sentence(tokens[to]) {
                break;
            }
            to += 1;
        }
        for token in &tokens[from..i] {
            for_each_word(token, &mut buf, |w| {
                ranked.around.insert(w.to_owned());
            });
        }
        if let Some((_, columns)) = IMPLIED_COLUMNS
            .iter()
            .find(|(s, _)| s.contains(&word.as_str()))
        {
            for column in *columns {
                for_each_word(column, &mut buf, |w| {
                    ranked.implied.insert(w.to_owned());
                });
            }
        }
        let mut in_parenthesis = false;
        for token in &tokens[i..=to] {
            in_parenthesis |= token.starts_with('(');
            let words = if in_parenthesis {
                &mut ranked.around
            } else {
                &mut ranked.after
            };
            for_each_word(token, &mut buf, |w| {
                words.insert(w.to_owned());
            });
            in_parenthesis &= !token.contains(')');
        }
    }
    ranked
}

/// Nouns that name a tool output as a whole: "this restaurant inspection table", "these nova
/// logs".
const OUTPUT_NOUNS: &[&str] = &[
    "table",
    "log",
    "logs",
    "report",
    "output",
    "listing",
    "dump",
    "file",
    "csv",
    "json",
    "changelog",
    "page",
    "manual",
    "schema",
    "dataset",
    "data",
    "trace",
    "model",
    "diff",
    "document",
    "export",
    "run",
];
/// How many words may describe an output between "this" and its noun.
const MAX_DESCRIPTION_WORDS: usize = 4;

/// Words that open a phrase naming where the answer is to be found ("In the Calendar
/// discovery document, …", "From the bzip2 manual: …").
const SOURCE_OPENERS: &[&str] = &["in", "from", "among", "within", "inside", "according"];
/// The longest phrase, in words, read as naming the source.
const MAX_SOURCE_WORDS: usize = 14;

/// The phrase that opens `text` by naming the output it asks about ("From the bzip2 1.0.8
/// manual:", "In the Google Calendar v3 discovery document,"), and the rest of `text`: the
/// phrase says where to look, so the parts of the output that repeat its words (the program's
/// name on every other line of its manual) are no more the answer than the rest.
pub(super) fn source_phrase(text: &str) -> Option<(&str, &str)> {
    let text = text.trim_start();
    let end = text.find([',', ':']).filter(|&at| {
        text[at + 1..]
            .chars()
            .next()
            .is_none_or(char::is_whitespace)
    })?;
    let (phrase, rest) = (&text[..end], &text[end + 1..]);
    let tokens: Vec<String> = phrase.split_whitespace().map(bare).collect();
    let opens = tokens
        .first()
        .is_some_and(|t| SOURCE_OPENERS.contains(&t.as_str()));
    // "In which file …" is a question of its own.
    let asks = tokens
        .iter()
        .any(|t| QUESTION_WORDS.contains(&t.as_str()) || t == "whether");
    let sentence_ends = phrase.contains(['.', '?', '!', ';'])
        && phrase
            .split_whitespace()
            .any(|t| t.ends_with(['.', '?', '!', ';']));
    (opens
        && !asks
        && !sentence_ends
        && tokens.len() <= MAX_SOURCE_WORDS
        && !rest.trim().is_empty())
    .then_some((phrase, rest))
}

/// `text` without the words that describe the output as a whole ("From this restaurant
/// inspection table, list …"): they are what every part of it is about, so the parts that
/// happen to repeat them (the rows of restaurants among bakeries and delis) are no more the
/// answer than the rest.
pub(super) fn without_self_description(text: &str) -> Cow<'_, str> {
    let tokens: Vec<&str> = text.split_whitespace().collect();
    let mut dropped = vec![false; tokens.len()];
    for (i, token) in tokens.iter().enumerate() {
        if !matches!(bare(token).as_str(), "this" | "these") {
            continue;
        }
        for j in i + 1..tokens.len().min(i + 2 + MAX_DESCRIPTION_WORDS) {
            // A description is names and modifiers: "these is the failed run" is a sentence.
            if tokens[j - 1].ends_with(CLAUSE_ENDS) || is_stopword(&bare(tokens[j])) {
                break;
            }
            if OUTPUT_NOUNS.contains(&bare(tokens[j]).as_str()) {
                dropped[i + 1..=j].fill(true);
                break;
            }
        }
    }
    if !dropped.contains(&true) {
        return Cow::Borrowed(text);
    }
    let kept: Vec<&str> = (tokens.iter().zip(&dropped))
        .map(|(t, &d)| {
            // The clause's closing mark stays: it still ends the words before it.
            if d {
                &t[t.trim_end_matches(CLAUSE_ENDS).len()..]
            } else {
                t
            }
        })
        .filter(|t| !t.is_empty())
        .collect();
    Cow::Owned(kept.join(" "))
}

/// Which ends of a column `text` asks about: only the high end when it has a word for the
/// largest and none for the smallest, and the other way round; otherwise both.
pub(super) fn ends_asked(text: &str) -> Ends {
    let mut high = false;
    let mut low = false;
    let mut previous = String::new();
    for word in text.split(|c: char| !c.is_ascii_alphabetic()) {
        if word.is_empty() {
            continue;
        }
        let word = word.to_ascii_lowercase();
        // "At least 120" asks for what is over a bound, "at most 5" for what is under one.
        match (previous.as_str(), word.as_str()) {
            ("at", "least") => high = true,
            ("at", "most") => low = true,
            ("how", w) if HOW_HIGH.contains(&w) => high = true,
            _ => {
                high |= HIGH_WORDS.contains(&word.as_str());
                low |= LOW_WORDS.contains(&word.as_str());
            }
        }
        previous = word;
    }
    if high == low {
        Ends::default()
    } else {
        Ends { high, low }
    }
}

/// Words before "end" that make it the end of the output: "at the (very) end", "near the end".
const END_PLACES: &[&str] = &["at", "by", "near", "towards", "toward"];
/// Words that ask for what comes last by themselves: "the final tally", "the latest restart".
const FINAL_WORDS: &[&str] = &["final", "finally", "latest"];

/// Whether `text` asks about the end of the output: "at the (very) end", "the final pass/fail
/// counts", "the latest", "the most recent", "the last of those". "Last" as an adverb ("which
/// commit last changed it") names no place in the output; "the last" does.
pub(super) fn asks_about_the_end(text: &str) -> bool {
    let words: Vec<String> = text.split_whitespace().map(bare).collect();
    let word = |i: usize| words.get(i).map_or("", String::as_str);
    (0..words.len()).any(|i| match word(i) {
        w if FINAL_WORDS.contains(&w) => true,
        "end" => {
            let the = if word(i.wrapping_sub(1)) == "very" {
                i.wrapping_sub(2)
            } else {
                i.wrapping_sub(1)
            };
            word(the) == "the" && END_PLACES.contains(&word(the.wrapping_sub(1)))
        }
        "last" => word(i.wrapping_sub(1)) == "the",
        "recent" | "recently" => word(i.wrapping_sub(1)) == "most",
        _ => false,
    })
}
