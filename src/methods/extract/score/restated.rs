//! One failure restated for many things: `Error tagging host.a.mem: Error requesting …` for
//! each metric in turn, the same message with one word changed. Each line has a template of
//! its own (the word holds no digit to mask), so repeats of a template do not lower them, and
//! as errors each would be read in full. One or two say why; the rest take the room of the
//! failures the log holds besides. The lines of one message are lowered as a repeated
//! routine line is, the best first, when the changed word names a thing (`host.a.mem:`,
//! `[smallvec]:`): lines that differ in a plain word (`cache miss`, `cache error`) say how
//! it went, and are other messages.

use std::collections::HashMap;

use super::super::doc::{Doc, Level, Template};
use super::super::query::WordHash;
use super::REPEAT_DECAY;

/// A message this short changed in one word is another message (`connected to a`).
const MIN_WORDS: usize = 5;
/// A message restated for this many things is lowered; two lines that differ in one word
/// (`RLIMIT_NOFILE` and `RLIMIT_NPROC`) are two failures worth reading.
const MIN_RESTATED: usize = 3;
/// Only a line's first so many words are compared: the rest of a long one is its detail.
const MAX_WORDS: usize = 48;

/// Lowers the warnings and errors that restate one message with one word changed, the k-th
/// best of a message as the k-th repeat of a template is lowered.
pub(in super::super) fn decay_restated_failures(doc: &Doc<'_>, scores: &mut [f32]) {
    let failures: Vec<usize> = (0..doc.units.len())
        .filter(|&u| doc.units[u].level >= Level::Warn && doc.units[u].parent.get().is_none())
        .collect();
    if failures.len() < 3 {
        return;
    }
    // Union-find over the failures: two lines of as many words that differ in one place are
    // one message.
    let mut message: Vec<usize> = (0..failures.len()).collect();
    // The keys are hashes already: the fast hasher only spreads them over the table.
    let mut first_with: HashMap<u64, usize, WordHash> = HashMap::default();
    // Lines of one template are one message already: only the first of each is hashed.
    let mut first_of_template: HashMap<Template, usize, WordHash> = HashMap::default();
    let mut scratch = LeaveOneOut::default();
    for (f, &u) in failures.iter().enumerate() {
        if let Some(template) = doc.units[u].template {
            if let Some(&first) = first_of_template.get(&template) {
                union(&mut message, first, f);
                continue;
            }
            first_of_template.insert(template, f);
        }
        scratch.hash(first_line(doc.text(u)));
        for &key in &scratch.keys {
            match first_with.get(&key) {
                Some(&g) => union(&mut message, g, f),
                None => {
                    first_with.insert(key, f);
                }
            }
        }
    }
    let mut groups: HashMap<usize, Vec<usize>, WordHash> = HashMap::default();
    for (f, &u) in failures.iter().enumerate() {
        let root = find(&mut message, f);
        groups.entry(root).or_default().push(u);
    }
    let mut ordered: Vec<Vec<usize>> = groups
        .into_values()
        .filter(|g| distinct_templates(doc, g) >= MIN_RESTATED)
        .collect();
    ordered.sort_unstable_by_key(|g| g[0]);
    for mut members in ordered {
        members.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
        // The k-th template of the message, by its best line: its repeats are lowered as
        // repeats already, so each line of a template is lowered as its best one.
        let mut rank_of: HashMap<Option<Template>, usize, WordHash> = HashMap::default();
        for &u in &members {
            let next = rank_of.len();
            let k = *rank_of.entry(doc.units[u].template).or_insert(next);
            scores[u] /= 1.0 + REPEAT_DECAY * k as f32;
        }
    }
}

/// How many templates the lines of `group` have.
fn distinct_templates(doc: &Doc<'_>, group: &[usize]) -> usize {
    let mut templates: Vec<Option<Template>> =
        group.iter().map(|&u| doc.units[u].template).collect();
    templates.sort_unstable();
    templates.dedup();
    templates.len()
}

fn first_line(text: &str) -> &str {
    text.split('\n').next().unwrap_or(text)
}

/// The leave-one-out keys of one line at a time, its buffers kept from line to line.
#[derive(Default)]
struct LeaveOneOut<'a> {
    words: Vec<&'a str>,
    hashes: Vec<u64>,
    prefix: Vec<u64>,
    suffix: Vec<u64>,
    /// The keys of the last line hashed.
    keys: Vec<u64>,
}

impl<'a> LeaveOneOut<'a> {
    /// For a line of [`MIN_WORDS`] words or more, one key per word that names a thing: the
    /// hash of the line's other words, with any word holding a digit masked (a timestamp, a
    /// count, an address), and of the position and word count. Two lines share one when they
    /// differ in that word only.
    fn hash(&mut self, line: &'a str) {
        self.keys.clear();
        self.words.clear();
        self.words
            .extend(line.split_ascii_whitespace().take(MAX_WORDS));
        let n = self.words.len();
        if n < MIN_WORDS {
            return;
        }
        self.hashes.clear();
        self.hashes.extend(self.words.iter().map(|w| {
            if w.bytes().any(|b| b.is_ascii_digit()) {
                0
            } else {
                xxhash_rust::xxh3::xxh3_64(w.as_bytes())
            }
        }));
        if !(0..n).any(|i| self.hashes[i] != 0 && is_name(self.words[i])) {
            return;
        }
        let mix = |h: u64, w: u64| (h ^ w).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29);
        // prefix[i] hashes words[..i]; suffix[i] hashes words[i..].
        self.prefix.clear();
        self.prefix.push(0);
        for i in 0..n {
            self.prefix.push(mix(self.prefix[i], self.hashes[i]));
        }
        self.suffix.clear();
        self.suffix.resize(n + 1, 0);
        for i in (0..n).rev() {
            self.suffix[i] = mix(self.suffix[i + 1], self.hashes[i]);
        }
        let (words, hashes, prefix, suffix) =
            (&self.words, &self.hashes, &self.prefix, &self.suffix);
        self.keys.extend(
            (0..n)
                .filter(|&i| hashes[i] != 0 && is_name(words[i]))
                .map(|i| {
                    mix(
                        mix(prefix[i], suffix[i + 1].rotate_left(17)),
                        (n * 64 + i) as u64,
                    )
                }),
        );
    }
}

/// Whether `word` names a thing (`host.a.mem:`, `[smallvec]:`, `` `RLIMIT_NOFILE` ``,
/// `KernelStack`) rather than says how it went: a word of letters alone, once its outer
/// punctuation is set aside (`miss`, `error,`), is an outcome, and lines that differ in it
/// differ in what happened.
fn is_name(word: &str) -> bool {
    let core = word.trim_matches(|c: char| matches!(c, ',' | ';' | ':' | '.' | '!' | '?'));
    let mut letters = core.chars().filter(char::is_ascii_alphabetic);
    let inner_case = letters.clone().skip(1).any(|c| c.is_ascii_uppercase())
        && letters.any(|c| c.is_ascii_lowercase());
    inner_case || !core.chars().all(|c| c.is_ascii_alphabetic())
}

fn find(parent: &mut [usize], mut x: usize) -> usize {
    while parent[x] != x {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    x
}

fn union(parent: &mut [usize], a: usize, b: usize) {
    let (ra, rb) = (find(parent, a), find(parent, b));
    if ra != rb {
        parent[ra.max(rb)] = ra.min(rb);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::extract::Hints;
    use crate::methods::extract::kinds::log;
    use crate::methods::extract::query::Query;

    /// A metrics daemon whose tagging fails for every metric in turn, and which rejects a few
    /// lines of input besides.
    fn daemon_log() -> String {
        let mut text = String::new();
        let metrics = [
            "Committed",
            "Dirty",
            "Mapped",
            "Shmem",
            "Slab",
            "Bounce",
            "Percpu",
            "Active",
            "Inactive",
            "Buffers",
            "Cached",
            "Writeback",
        ];
        for (i, metric) in metrics.iter().enumerate() {
            text.push_str(&format!(
                "2026-11-30 21:58:{i:02} [updates] wrote 1 datapoints for host.mem.{metric}\n"
            ));
            text.push_str(&format!(
                "2026-11-30 21:58:{i:02} [tagdb] Error tagging host.mem.{metric}: Error requesting http://127.0.0.1:80/tags: connection refused\n"
            ));
            if i == 6 {
                text.push_str("2026-11-30 21:58:06 [listener] error: invalid line received, ignoring [bad.metric notanumber]\n");
            }
        }
        text
    }

    #[test]
    fn a_failure_restated_for_each_thing_gives_way_to_the_other_failures() {
        let text = daemon_log();
        let doc = log::build(&text);
        let query = Query::from_hints(
            &Hints::new().with_query("why is tagging failing, and what input was rejected?"),
        )
        .unwrap();
        let scores = super::super::score(&doc, Some(&query));
        let rejected = (0..doc.units.len())
            .find(|&u| doc.text(u).contains("invalid line"))
            .unwrap();
        let above = (0..doc.units.len())
            .filter(|&u| scores[u] > scores[rejected] && doc.text(u).contains("Error tagging"))
            .count();
        // Without the rule all twelve do.
        assert!(
            above <= 6,
            "{above} restated failures rank above the rejected input"
        );
    }

    #[test]
    fn lines_differing_in_an_outcome_word_are_not_one_message() {
        let shared = |a: &str, b: &str| {
            let mut keys = LeaveOneOut::default();
            keys.hash(b);
            let b = keys.keys.clone();
            keys.hash(a);
            keys.keys.iter().any(|k| b.contains(k))
        };
        assert!(shared(
            "[tagdb] Error tagging host.mem.Slab: Error requesting /tags",
            "[tagdb] Error tagging host.mem.Dirty: Error requesting /tags"
        ));
        assert!(!shared(
            "DEBUG sccache::server [o.o]: compile result: cache error",
            "DEBUG sccache::server [o.o]: compile result: cache miss"
        ));
        assert!(!shared("connected to host a", "connected to host b"));
    }
}
