//! What the caller is looking for: the words of the query and the tool's arguments, and the
//! exact strings among them (identifiers, numbers, versions, paths, quoted text) that a kept
//! unit should contain verbatim.

use std::collections::HashMap;

use super::Hints;
use super::terms::{for_each_word, is_stopword};
use bounds::{bounds, without_threshold_numbers};
use columns::{names_one_of, words_named};
use phrases::{
    absent_words, asked_keys, asks_about_the_end, compound_words, ends_asked, negated_words,
    ranked_words, source_phrase, without_exclusions, without_self_description,
};
use tokens::{
    acronyms, called_name, collect_argument_values, initialisms, is_decimal_number,
    is_identifier_like, quoted_strings, run_together, status_class,
};
pub(crate) use word_hash::WordHash;

mod bounds;
pub(crate) use bounds::Bound;
mod columns;
mod phrases;
mod tokens;
mod word_hash;

/// The query as the scorer uses it.
#[derive(Debug, Default)]
pub(crate) struct Query {
    /// Stemmed words, each with its index into per-word statistics.
    pub(crate) words: HashMap<String, usize, WordHash>,
    /// Lowercased strings matched as substrings of a unit.
    pub(crate) exact: Vec<String>,
    /// The words and the shorter forms of long ones (`japan` for "Japanese", `europ` for
    /// "European"), each with the index of its word: a name and its adjective share a root the
    /// stemmer does not find. One map, so a text word costs one lookup.
    index: HashMap<String, usize, WordHash>,
    /// The words the query uses as words, outside its identifiers: "class" of "the class name",
    /// not of `make_class`. A definition named by words must be named by these.
    prose: std::collections::HashSet<String, WordHash>,
    /// Which end of a numeric column the query asks about ("the longest pause", "the
    /// smallest file"); both when it names neither or both.
    pub(crate) ends: Ends,
    /// The words next to a superlative ("the most bytes", "the largest area", "highest
    /// fertility rate in 2011"): a column they name is what the query ranks by.
    pub(crate) ranked: Ranked,
    /// The words of what the query asks records to lack ("which component declares no
    /// license"): a record whose field they name is empty answers.
    absent: std::collections::HashSet<String, WordHash>,
    /// The words the query negates ("dependencies not requested directly").
    negated: std::collections::HashSet<String, WordHash>,
    /// The short keys adjacent query words abbreviate to ("package URL" is `purl`, "process
    /// id" `pid`, "current working directory" `cwd`), stemmed as the query's words.
    acronyms: std::collections::HashSet<String, WordHash>,
    /// The keys its question words ask for: a "why" asks for a `reason` or a `cause`
    /// (`state_reason: DependencyNeverSatisfied` says why a job waits).
    asked_keys: &'static [&'static str],
    /// The initials values write for names the query spells out, each with the name's last
    /// word: (`nc`, `commercial`) of "non-commercial".
    initialisms: Vec<(String, String)>,
    /// Names the query writes as calls, `run()`, lowercased: a function it points at, however
    /// plain the word. Only definitions are matched by them, as a substring `run` is
    /// everywhere.
    called: Vec<String>,
    /// The classes of HTTP status the query writes as `5xx` or `4XX`, one bit per leading
    /// digit: a request whose status is in one answers, though no digit of it is written.
    status_classes: u8,
    /// The bounds the query sets on a column ("a PhD share above 100", "slower than 2s").
    pub(crate) bounds: Vec<Bound>,
    /// Whether the query asks about the end of the output ("what identified itself at the
    /// end", "the final pass/fail counts", "the last of those").
    pub(crate) asks_about_the_end: bool,
    /// The indices of the words only its opening phrase names the output by ("From the bzip2
    /// manual:"): they weigh [`SOURCE_WORD_WEIGHT`] of a word of the question.
    source_words: Vec<usize>,
}

/// How much a word that only names the output weighs against a word of the question.
const SOURCE_WORD_WEIGHT: f32 = 0.15;

/// The words next to the query's superlatives, normalized as the query's.
#[derive(Debug, Default)]
pub(crate) struct Ranked {
    /// Those after one: what it ranks by ("the largest area", "the highest fertility rate in
    /// 2011").
    after: std::collections::HashSet<String, WordHash>,
    /// Those just before one, or in a parenthesis after it: what is ranked ("which
    /// country-year has the lowest"), what to report of it ("the highest GDP (value and
    /// year)"), or what it ranks by when nothing after it names a column ("which directory is
    /// largest", "the largest (path and length)").
    around: std::collections::HashSet<String, WordHash>,
    /// The columns its superlative implies ("size" for "the largest"): what it ranks by
    /// when no word near it names a column.
    implied: std::collections::HashSet<String, WordHash>,
}

impl Ranked {
    /// Whether the query has no superlative.
    pub(crate) fn is_empty(&self) -> bool {
        self.after.is_empty() && self.around.is_empty()
    }
}

/// The ends of a numeric column a query asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ends {
    pub(crate) high: bool,
    pub(crate) low: bool,
}

impl Default for Ends {
    fn default() -> Self {
        Ends {
            high: true,
            low: true,
        }
    }
}

/// Words and the short forms identifiers and settings write them in.
const ABBREVIATIONS: &[(&str, &str)] = &[
    ("minimum", "min"),
    ("maximum", "max"),
    ("length", "len"),
    ("directory", "dir"),
    ("configuration", "config"),
    ("temporary", "tmp"),
    ("message", "msg"),
    ("parameter", "param"),
    ("initial", "init"),
    ("information", "info"),
    ("environment", "env"),
    ("dependency", "dep"),
    ("destination", "dest"),
    ("address", "addr"),
    ("number", "num"),
    ("protocol", "proto"),
    ("connection", "conn"),
    ("description", "desc"),
    ("attribute", "attr"),
    ("request", "req"),
    ("response", "resp"),
    ("previous", "prev"),
    ("memory", "mem"),
];

/// Words a log writes for the same outcome: a query about refused logins finds "password
/// rejected for bob" and "access denied"; one about the mutants that survived finds
/// cargo-mutants' `MISSED` as well as mutmut's and Stryker's "survived", and killed ones are
/// `caught`; a dependency "never imported" (`unimported`, see [`negated_words`]) is what a
/// dependency checker calls `unused`.
const SYNONYMS: &[&[&str]] = &[
    &[
        "refused", "refuse", "rejected", "reject", "denied", "deny", "declined", "decline",
    ],
    &["survived", "survive", "missed", "undetected"],
    &["killed", "caught", "detected"],
    &["unused", "unimported", "unreferenced"],
];

/// Each of two words run together into a key is this long at least (`msg` of `errormsg`).
const MIN_COMPOUND_SPLIT: usize = 3;

/// Exact strings shorter than this match too much by accident.
const MIN_EXACT_LEN: usize = 3;
/// Words at least this long match text words that are their first letters …
const MIN_PREFIX_WORD: usize = 7;
/// A word ending in "ment" this long is a noun made of a verb (not "comment", "element").
const MIN_MENT_NOUN: usize = 10;
/// … of at least this many letters …
const MIN_PREFIX: usize = 5;
/// … missing at most this many letters.
const MAX_PREFIX_CUT: usize = 3;
/// Argument values longer than this are content, not search terms.
const MAX_ARGUMENT_LEN: usize = 200;

impl Query {
    /// The query of `hints`, or `None` when neither a query nor usable arguments are given.
    pub(crate) fn from_hints(hints: &Hints<'_>) -> Option<Query> {
        let mut query = Query::default();
        let mut compounds = Vec::new();
        if let Some(text) = hints.query {
            let text = without_exclusions(text);
            query.add_text(&without_threshold_numbers(&without_self_description(&text)));
            if let Some((phrase, rest)) = source_phrase(&text) {
                query.source_words = query.words_only_in(phrase, rest);
            }
            query.ends = ends_asked(&text);
            query.ranked = ranked_words(&text);
            query.absent = absent_words(&text);
            query.bounds = bounds(&text);
            query.asks_about_the_end = asks_about_the_end(&text);
            query.acronyms = acronyms(&text);
            query.asked_keys = asked_keys(&text);
            query.initialisms = initialisms(&text);
            // What the query negates, an output may write as one word: "not declared" is
            // `undeclared`; a word of its own, as rare as the output has it, not the word it
            // negates.
            for word in negated_words(&text) {
                if query.words.contains_key(&word) {
                    let next = query.words.len();
                    query.words.entry(format!("un{word}")).or_insert(next);
                }
                query.negated.insert(word);
            }
            compounds = compound_words(&text);
        }
        if let Some(arguments) = hints.arguments {
            let mut values = Vec::new();
            collect_argument_values(arguments, &mut values, 0);
            for value in values {
                query.add_exact(&value);
                query.add_words(&value);
            }
        }
        query.add_prefixes(&compounds);
        (!query.words.is_empty() || !query.exact.is_empty()).then_some(query)
    }

    /// How much the query word of index `i` weighs: less when only the phrase naming the
    /// output holds it.
    pub(crate) fn word_weight(&self, i: usize) -> f32 {
        if self.source_words.contains(&i) {
            SOURCE_WORD_WEIGHT
        } else {
            1.0
        }
    }

    /// The indices of the query words `phrase` holds and `rest` does not.
    fn words_only_in(&self, phrase: &str, rest: &str) -> Vec<usize> {
        let mut buf = String::new();
        let mut in_rest = std::collections::HashSet::new();
        for_each_word(rest, &mut buf, |w| {
            in_rest.insert(w.to_owned());
        });
        let mut only = Vec::new();
        for_each_word(phrase, &mut buf, |w| {
            if let Some(&i) = self.words.get(w)
                && !in_rest.contains(w)
                && !only.contains(&i)
            {
                only.push(i);
            }
        });
        only
    }

    /// The index of the query word that `word` (lowercased, stemmed) is or is the root of.
    pub(crate) fn word_index(&self, word: &str) -> Option<usize> {
        self.index.get(word).copied()
    }

    /// Every word [`Query::word_index`] knows: the query's words and their roots.
    pub(crate) fn index_words(&self) -> impl Iterator<Item = &str> {
        self.index.keys().map(String::as_str)
    }

    /// Whether `name` has a word and every word of it is a query word (with `roots`, or the
    /// root of one: `listen` for "listener"): a block header, a file or an entry the query
    /// names whole. `buf` is scratch for the words.
    pub(crate) fn names_every_word(&self, name: &str, roots: bool, buf: &mut String) -> bool {
        let mut words = 0;
        let mut all = true;
        for_each_word(name, buf, |w| {
            words += 1;
            all &= if roots {
                self.index.contains_key(w)
            } else {
                self.words.contains_key(w)
            };
        });
        words > 0 && all
    }

    /// Whether `name` (a column, a member's key) has a word next to a superlative of the query
    /// ("the largest area", "the longest body"): the query may rank records by it.
    pub(crate) fn ranks(&self, name: &str) -> bool {
        names_one_of(name, &self.ranked.after) || names_one_of(name, &self.ranked.around)
    }

    /// Whether `name` (a column, a member's key) is what the query asks records to lack:
    /// `licenses[].license.id` of "which component declares no license".
    pub(crate) fn asks_lacking(&self, name: &str) -> bool {
        names_one_of(own_key(name), &self.absent)
    }

    /// Whether the query negates a word of `name`: `requested` of "not requested directly".
    pub(crate) fn negates(&self, name: &str) -> bool {
        names_one_of(own_key(name), &self.negated)
    }

    /// The bound the query sets on the column `name`, if a word of it is among the words just
    /// before one ("which rows have a PhD share above 100" bounds `PhD`).
    pub(crate) fn bound_on(&self, name: &str) -> Option<&Bound> {
        self.bounds.iter().find(|b| names_one_of(name, &b.words))
    }

    /// How many of the words of `bound` the column `name` names: of the columns a bound
    /// names, those naming the most are the ones it bounds.
    pub(crate) fn bound_words_named(&self, bound: &Bound, name: &str) -> usize {
        words_named(name, &bound.words)
    }

    /// Whether the column `name` names the word of `bound` next to it.
    pub(crate) fn bound_names_nearest(&self, bound: &Bound, name: &str) -> bool {
        names_one_of(name, &bound.nearest)
    }

    /// Whether the query names the column `name` by its own key: the last one, or a list's
    /// (`licenses` of `licenses[].license.id`, not the `id` of every license).
    pub(crate) fn names_column(&self, name: &str) -> bool {
        let own = own_key(name);
        let last = own.rsplit(['.', '/']).next().unwrap_or(own);
        let mut named = false;
        for_each_word(last, &mut String::new(), |w| {
            named |= self.names_key_word(w)
        });
        named
    }

    /// Whether `name` is a column a superlative of the query implies: `Length` or `size` of
    /// "the largest".
    pub(crate) fn ranks_implied(&self, name: &str) -> bool {
        names_one_of(name, &self.ranked.implied)
    }

    /// Whether `name` has a word after a superlative of the query: what it ranks by ("the
    /// lowest life expectancy"), not what it ranks ("which country-year has the lowest").
    pub(crate) fn ranks_after(&self, name: &str) -> bool {
        names_one_of(name, &self.ranked.after)
    }

    /// Whether a word of `text` is, or has the root of, a query word next to a superlative:
    /// a record of the European cars holds "Europe" of "the heaviest European car".
    pub(crate) fn ranks_a_word_of(&self, text: &str) -> bool {
        if self.ranked.is_empty() {
            return false;
        }
        let ranked: Vec<usize> = (self.ranked.after.iter())
            .chain(&self.ranked.around)
            .filter_map(|w| self.words.get(w).copied())
            .collect();
        let mut found = false;
        for_each_word(text, &mut String::new(), |w| {
            found |= self.index.get(w).is_some_and(|i| ranked.contains(i));
        });
        found
    }

    /// Whether a key's `word` (lowercased, stemmed) names what the query asks for: is one of
    /// its words, or what adjacent ones abbreviate to (`purl` for "package URL").
    pub(crate) fn names_key_word(&self, word: &str) -> bool {
        self.words.contains_key(word)
            || self.acronyms.contains(word)
            || self.asked_keys.contains(&word)
            || self.compounds(word)
    }

    /// How many of `key`'s words the query names ([`Self::names_key_word`]), and how many
    /// words it has: `next`, `page` and `token` of `nextPageToken`, all three.
    pub(crate) fn key_words_named(&self, key: &str) -> (usize, usize) {
        let (mut named, mut words) = (0, 0);
        for_each_word(key, &mut String::new(), |w| {
            words += 1;
            named += usize::from(self.names_key_word(w));
        });
        (named, words)
    }

    /// Whether `word` runs two of the query's words, or their short forms, together with no
    /// separator: `errormsg` of "error message", `filesize` of "file size". Only the last
    /// part of `word` is stemmed, so its first is read stemmed too: `codeunits` of "code
    /// units" starts with `code`, whose stem is `cod`.
    fn compounds(&self, word: &str) -> bool {
        if word.len() < 2 * MIN_COMPOUND_SPLIT || !word.is_ascii() {
            return false;
        }
        let mut stemmed = String::new();
        (MIN_COMPOUND_SPLIT..=word.len() - MIN_COMPOUND_SPLIT).any(|at| {
            let (first, last) = word.split_at(at);
            self.index.contains_key(last)
                && (self.index.contains_key(first) || {
                    stemmed.clear();
                    stemmed.push_str(first);
                    super::terms::stem(&mut stemmed);
                    stemmed.len() < first.len() && self.index.contains_key(&stemmed)
                })
        })
    }

    /// Whether `word` (lowercased, stemmed) is a query word the query uses as a word, not only
    /// inside one of its identifiers.
    pub(crate) fn uses_as_word(&self, word: &str) -> bool {
        self.words.contains_key(word) && self.prose.contains(word)
    }

    /// Fills the index: the words, their short forms, synonyms and initials, `compounds`
    /// (pairs of neighbouring words run together, each with the first, see
    /// [`compound_words`]) and the first letters of long words.
    fn add_prefixes(&mut self, compounds: &[(String, String)]) {
        self.index = self.words.clone();
        // The short forms code and configuration write ("minimum response size" is
        // `MIN_LENGTH`, "the directory" `dir`).
        let mut stemmed = String::new();
        for &(word, short) in ABBREVIATIONS {
            stemmed.clear();
            stemmed.push_str(word);
            super::terms::stem(&mut stemmed);
            if let Some(&i) = self.words.get(&stemmed) {
                self.index.entry(short.to_owned()).or_insert(i);
            }
        }
        for group in SYNONYMS {
            let stems: Vec<String> = group
                .iter()
                .map(|w| {
                    stemmed.clear();
                    stemmed.push_str(w);
                    super::terms::stem(&mut stemmed);
                    stemmed.clone()
                })
                .collect();
            if let Some(i) = stems.iter().find_map(|w| self.words.get(w).copied()) {
                for w in stems {
                    self.index.entry(w).or_insert(i);
                }
            }
        }
        // Two words an output runs together ("shut down" of `Shutdown`) count as the first:
        // not as a word of their own, whose rarity would outweigh the query's words.
        for (first, compound) in compounds {
            if let Some(&i) = self.words.get(first) {
                self.index.entry(compound.clone()).or_insert(i);
            }
        }
        // A name's initials count as its last word: `NC` of `CC-BY-NC-4.0` is "non-commercial".
        for (initials, last) in &self.initialisms {
            if let Some(&i) = self.words.get(last) {
                self.index.entry(initials.clone()).or_insert(i);
            }
        }
        for (word, &i) in &self.words {
            if word.len() < MIN_PREFIX_WORD || !word.bytes().all(|b| b.is_ascii_lowercase()) {
                continue;
            }
            // A noun made of a verb ("advertisement", "deployment") names what the output's
            // identifiers write as the verb (`advertise-interval`, `deploy_id`).
            if word.len() >= MIN_MENT_NOUN
                && let Some(root) = word.strip_suffix("ment")
            {
                stemmed.clear();
                stemmed.push_str(root);
                super::terms::stem(&mut stemmed);
                self.index.entry(root.to_owned()).or_insert(i);
                self.index.entry(stemmed.clone()).or_insert(i);
            }
            let shortest = (word.len() - MAX_PREFIX_CUT).max(MIN_PREFIX);
            for len in shortest..word.len() {
                self.index.entry(word[..len].to_owned()).or_insert(i);
            }
        }
    }

    fn add_text(&mut self, text: &str) {
        // A decimal number (`0.25 s`, a threshold) is one quantity: its digit groups read as
        // words would match every `25.3` and `12.25` of a numeric dump. It stays an exact term.
        let words: Vec<&str> = text
            .split_whitespace()
            .filter(|token| !is_decimal_number(token))
            .collect();
        self.add_words(&words.join(" "));
        let mut buf = String::new();
        for token in &words {
            let token = token.trim_matches(|c: char| !c.is_alphanumeric() && !"_/@~$-".contains(c));
            if !is_identifier_like(token) {
                for_each_word(token, &mut buf, |w| {
                    self.prose.insert(w.to_owned());
                });
            }
        }
        for quoted in quoted_strings(text) {
            self.add_exact(quoted);
        }
        for token in text.split_whitespace() {
            if let Some(name) = called_name(token)
                && !self.called.iter().any(|c| c == &name)
            {
                self.called.push(name);
            }
            let token = token.trim_matches(|c: char| !c.is_alphanumeric() && !"_/@~$-".contains(c));
            // "4xx/5xx" names two classes.
            if let Some(classes) = token
                .split('/')
                .map(status_class)
                .collect::<Option<Vec<_>>>()
            {
                for class in classes {
                    self.status_classes |= 1 << class;
                }
            } else if is_identifier_like(token) {
                self.add_exact(token);
                if let Some(joined) = run_together(token) {
                    self.add_exact(&joined);
                }
            }
        }
    }

    /// Whether the query names classes of HTTP status (`5xx`).
    pub(crate) fn asks_status_class(&self) -> bool {
        self.status_classes != 0
    }

    /// Whether `status` is in a class the query names (`502` for "5xx").
    pub(crate) fn asks_status(&self, status: u16) -> bool {
        (1..=5).contains(&(status / 100)) && self.status_classes & (1 << (status / 100)) != 0
    }

    /// Whether the query writes `name` as a call (`run()` for `run`), case folded.
    pub(crate) fn calls(&self, name: &str) -> bool {
        self.called.iter().any(|c| c.eq_ignore_ascii_case(name))
    }

    fn add_words(&mut self, text: &str) {
        let mut buf = String::new();
        for_each_word(text, &mut buf, |w| {
            if !is_stopword(w) {
                let next = self.words.len();
                self.words.entry(w.to_owned()).or_insert(next);
            }
        });
    }

    fn add_exact(&mut self, text: &str) {
        let text = text.trim();
        if text.len() >= MIN_EXACT_LEN {
            let lower = text.to_ascii_lowercase();
            if !self.exact.contains(&lower) {
                self.exact.push(lower);
            }
        }
    }

    /// Whether `text` contains one of the exact strings.
    pub(crate) fn mentions(&self, text: &str) -> bool {
        let lower = text.to_ascii_lowercase();
        self.exact.iter().any(|e| lower.contains(e.as_str()))
    }

    /// Whether `text` contains one of the exact strings whose index `counts` accepts.
    pub(crate) fn mentions_where(&self, text: &str, counts: impl Fn(usize) -> bool) -> bool {
        let lower = text.to_ascii_lowercase();
        self.exact
            .iter()
            .enumerate()
            .any(|(i, e)| counts(i) && lower.contains(e.as_str()))
    }

    /// Calls `f` with the index of every exact string `text` contains.
    pub(crate) fn for_each_exact_in(&self, text: &str, mut f: impl FnMut(usize)) {
        let lower = text.to_ascii_lowercase();
        for (i, e) in self.exact.iter().enumerate() {
            if lower.contains(e.as_str()) {
                f(i);
            }
        }
    }

    /// The byte offset of the first exact string in `text`, if any.
    pub(crate) fn first_exact_match(&self, text: &str) -> Option<usize> {
        let lower = text.to_ascii_lowercase();
        self.exact
            .iter()
            .filter_map(|e| lower.find(e.as_str()))
            .min()
    }
}

/// The key a column is named by: a list's own key, not its items' fields (`licenses` of
/// `licenses[].license.id`, not the `id` of every license).
fn own_key(name: &str) -> &str {
    name.split_once("[]").map_or(name, |(list, _)| list)
}

#[cfg(test)]
mod tests;
