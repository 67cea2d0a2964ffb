//! Fills the budget: chooses units by score (with their context), emits them in their original
//! order with a marker for every run of omitted units, and fits the result to the budget by the
//! exact counter. Sizes are estimated from bytes while choosing; only the emitted text is
//! counted.

use std::borrow::Cow;

use super::doc::Doc;
use crate::TokenCounter;

mod frames;
mod labels;
mod render;

use frames::RepeatedFrames;
use labels::TreeLabels;
use render::render;

/// Estimated tokens of one omission marker line (`[… 1,203 similar INFO lines omitted …]`).
const MARKER_TOKENS: f64 = 11.0;
/// How much exact text the bytes-per-token ratio is measured on.
const CALIBRATION_BYTES: usize = 3 * 1024;
/// Attempts at fitting before the last resort (cutting the emitted text).
const MAX_ATTEMPTS: usize = 5;
/// A fit that uses this share of the budget is good enough to stop refining.
const GOOD_FILL: f64 = 0.92;
/// Units up to this many bytes (a long line) are ranked by score alone; longer ones by score
/// per square root of their length in such lines.
const SHORT_UNIT_BYTES: f32 = 160.0;
/// A kept log line is marked with its omitted repeats when there are at least this many.
const MIN_FOLDED: usize = 3;
/// A top-up shorter than this says too little to be worth a cut unit.
const MIN_TOP_UP_BYTES: usize = 120;
/// Longest chain of context units pulled in with one unit.
const MAX_CONTEXT_DEPTH: usize = 12;

/// The emitted text and what it holds.
#[derive(Debug, Default)]
pub(crate) struct Filled {
    pub(crate) text: String,
    pub(crate) tokens: usize,
    pub(crate) kept_units: usize,
    pub(crate) omitted_units: usize,
}

/// What a unit of `bytes` costs against its score when units are chosen: 1 for a line, the
/// square root of its length in lines for a longer one.
pub(crate) fn length_cost(bytes: usize) -> f32 {
    let lines = bytes as f32 / SHORT_UNIT_BYTES;
    if lines > 1.0 { lines.sqrt() } else { 1.0 }
}

pub(crate) fn fill(doc: &Doc<'_>, scores: &[f32], budget: usize, counter: &TokenCounter) -> Filled {
    let n = doc.units.len();
    // Value per token: a unit much longer than a line has to score higher to be worth its
    // room, so one long line cannot crowd out many short ones of nearly the same score.
    let value: Vec<f32> = doc
        .units
        .iter()
        .zip(scores)
        .map(|(u, &s)| {
            if s > 0.0 {
                s / length_cost(u.span.len())
            } else {
                s
            }
        })
        .collect();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| {
        let (ua, ub) = (&doc.units[a], &doc.units[b]);
        ub.pinned
            .cmp(&ua.pinned)
            .then(value[b].total_cmp(&value[a]))
            .then(a.cmp(&b))
    });
    let bytes_per_token = calibrate(doc, &order, counter);
    let labels = TreeLabels::of(doc);
    let frames = RepeatedFrames::of(doc);
    let mut target = budget as f64 * 0.97;
    // The smallest target known to overflow: growing never goes past it.
    let mut too_big = f64::INFINITY;
    let mut best: Option<Filled> = None;
    let mut best_choice: Option<Choice> = None;
    let mut last = Filled::default();
    for _ in 0..MAX_ATTEMPTS {
        let choice = select(doc, &order, &labels, &frames, target, bytes_per_token);
        let text = render(doc, &labels, &frames, &choice, &|i| {
            Cow::Borrowed(doc.text(i))
        });
        let kept_units = choice.kept.iter().filter(|&&s| s).count();
        let everything = kept_units == n;
        // Counted once, in full: an attempt over the budget needs its size to scale the next.
        let tokens = counter.count(&text);
        let next = if tokens <= budget {
            let good = tokens as f64 >= budget as f64 * GOOD_FILL || everything;
            let grown = target * (budget as f64 / tokens.max(1) as f64).min(1.6) * 0.99;
            let filled = Filled {
                text,
                tokens,
                kept_units,
                omitted_units: n - kept_units,
            };
            if best.as_ref().is_none_or(|b| filled.tokens > b.tokens) {
                best = Some(filled);
                best_choice = Some(choice);
            }
            if good {
                break;
            }
            grown.min((target + too_big) / 2.0)
        } else {
            too_big = too_big.min(target);
            last = Filled {
                text,
                tokens,
                kept_units,
                omitted_units: n - kept_units,
            };
            target * budget as f64 / tokens.max(1) as f64 * 0.98
        };
        // Steps this small change nothing worth another count.
        if (next - target).abs() < target * 0.01 {
            break;
        }
        target = next;
    }
    if let (Some(b), Some(choice)) = (&mut best, best_choice)
        && (b.tokens as f64) < budget as f64 * GOOD_FILL
    {
        let room = Room {
            budget,
            bytes_per_token,
            counter,
            labels: &labels,
            frames: &frames,
        };
        if choice.kept.iter().all(|&s| s) {
            show_fuller(doc, &order, choice.with_overview, b, &room);
        } else {
            top_up(doc, &order, choice, b, &room);
        }
    }
    best.unwrap_or_else(|| {
        // Every attempt was over: keep the head of the last one, which is cut to fit exactly.
        let (text, tokens) = counter.prefix_within_counted(&last.text, budget);
        Filled {
            text: text.to_owned(),
            tokens,
            ..last
        }
    })
}

/// Fills the room a short fit leaves (its units are few and big, so the next one does not fit
/// whole) with the head of the best unit left out whose context is kept, cut at a line or
/// word end and marked with `…`. `filled` is replaced only when the result fits the budget.
fn top_up(
    doc: &Doc<'_>,
    order: &[usize],
    mut choice: Choice,
    filled: &mut Filled,
    limits: &Room<'_>,
) {
    let (budget, counter) = (limits.budget, limits.counter);
    let kept = &choice.kept;
    let Some(&next) = order
        .iter()
        .find(|&&u| !kept[u] && doc.units[u].parent.get().is_none_or(|p| kept[p]))
    else {
        return;
    };
    let room = budget.saturating_sub(filled.tokens) as f64;
    choice.kept[next] = true;
    // The estimate of bytes per token is the document's average; a unit denser in tokens
    // (hashes, URLs, non-Latin text) overflows at that size, and a smaller head still fits.
    for share in TOP_UP_SHARES {
        let bytes = (room * limits.bytes_per_token * share) as usize;
        if bytes < MIN_TOP_UP_BYTES {
            return;
        }
        let text = render(doc, limits.labels, limits.frames, &choice, &|i| {
            if i == next {
                Cow::Owned(head_of(doc.text(i), bytes))
            } else {
                Cow::Borrowed(doc.text(i))
            }
        });
        if let Some(tokens) = counter.count_up_to(&text, budget) {
            if tokens > filled.tokens {
                *filled = Filled {
                    text,
                    tokens,
                    kept_units: filled.kept_units + 1,
                    omitted_units: filled.omitted_units.saturating_sub(1),
                };
            }
            return;
        }
    }
}

/// The shares of the room's estimated bytes a top-up tries, largest first.
const TOP_UP_SHARES: [f64; 3] = [0.85, 0.6, 0.4];

/// What a fit is measured against: the budget, the bytes-per-token estimate and the exact
/// counter.
struct Room<'c> {
    budget: usize,
    bytes_per_token: f64,
    counter: &'c TokenCounter,
    labels: &'c TreeLabels,
    frames: &'c RepeatedFrames,
}

/// Spends the room left when every unit fits (records cut to rows of a table: the whole
/// document is short) on the units' fuller renderings, in rank order: the records ranked
/// highest are shown whole, and the best one that does not fit whole shows its head. Each
/// fuller rendering starts with the unit's own text, so nothing shown before is lost.
/// `filled` is replaced only when the result fits the budget.
fn show_fuller(
    doc: &Doc<'_>,
    order: &[usize],
    with_overview: bool,
    filled: &mut Filled,
    limits: &Room<'_>,
) {
    let (budget, counter) = (limits.budget, limits.counter);
    if doc.fuller.is_empty() {
        return;
    }
    let every = Choice {
        kept: vec![true; doc.units.len()],
        brief: vec![false; doc.units.len()],
        with_overview,
    };
    let base = filled.tokens;
    let allowed = budget.saturating_sub(base) as f64;
    let mut room = allowed * limits.bytes_per_token * 0.95;
    // The smallest room known to overflow: growing never goes past it.
    let mut too_big = f64::INFINITY;
    for _ in 0..MAX_ATTEMPTS {
        let (whole, partial) = choose_fuller(doc, order, room as usize);
        if whole.is_empty() && partial.is_none() {
            return;
        }
        let text = render(
            doc,
            limits.labels,
            limits.frames,
            &every,
            &|i| match doc.fuller.get(i) {
                Some(fuller) => match partial {
                    Some((unit, bytes)) if unit == i => {
                        Cow::Owned(fuller_head(doc.text(i), fuller, bytes))
                    }
                    _ if whole.binary_search(&i).is_ok() => Cow::Borrowed(fuller),
                    _ => Cow::Borrowed(doc.text(i)),
                },
                None => Cow::Borrowed(doc.text(i)),
            },
        );
        // The room is scaled by how far the text it added fell short of, or overshot, the
        // budget: byte estimates of whole records are rough.
        let tokens = counter.count(&text);
        let next = if tokens <= budget {
            if tokens > filled.tokens {
                filled.text = text;
                filled.tokens = tokens;
            }
            if tokens as f64 >= budget as f64 * GOOD_FILL {
                return;
            }
            let added = tokens.saturating_sub(base).max(1) as f64;
            (room * allowed / added * 0.97).min((room + too_big) / 2.0)
        } else {
            too_big = too_big.min(room);
            let added = tokens.saturating_sub(base).max(1) as f64;
            room * allowed / added * 0.95
        };
        if (next - room).abs() < room * 0.01 {
            return;
        }
        room = next;
    }
}

/// Which units to show fuller within about `room` more bytes: those that fit whole, by rank
/// (sorted by index), and the best one that does not, with the bytes left for its head.
fn choose_fuller(
    doc: &Doc<'_>,
    order: &[usize],
    room: usize,
) -> (Vec<usize>, Option<(usize, usize)>) {
    let mut left = room;
    let mut whole = Vec::new();
    let mut first_cut = None;
    for &u in order {
        let Some(fuller) = doc.fuller.get(u) else {
            continue;
        };
        let extra = fuller.len().saturating_sub(doc.text(u).len()) + 1;
        if extra <= left {
            left -= extra;
            whole.push(u);
        } else if first_cut.is_none() {
            first_cut = Some(u);
        }
    }
    let partial = first_cut
        .filter(|_| left >= MIN_TOP_UP_BYTES)
        .map(|u| (u, left));
    whole.sort_unstable();
    (whole, partial)
}

/// `text` whole and, after it, the head (about `bytes`) of what `fuller` adds to it: a unit's
/// fuller rendering starts with its own text, which is never cut.
fn fuller_head(text: &str, fuller: &str, bytes: usize) -> String {
    match fuller.strip_prefix(text) {
        Some(rest) => format!("{text}{}", head_of(rest, bytes)),
        None => text.to_owned(),
    }
}

/// Bytes per token of the units most likely to be emitted, measured exactly.
fn calibrate(doc: &Doc<'_>, order: &[usize], counter: &TokenCounter) -> f64 {
    let mut sample = String::new();
    for &u in order {
        if sample.len() >= CALIBRATION_BYTES {
            break;
        }
        sample.push_str(doc.text(u));
        sample.push('\n');
    }
    if sample.is_empty() {
        return 3.0;
    }
    let tokens = counter.count(&sample).max(1);
    (sample.len() as f64 / tokens as f64).clamp(1.0, 8.0)
}

/// Which units an attempt keeps: each kept one whole, or, when it is kept only as the context
/// of another and has a brief form, briefly.
struct Choice {
    kept: Vec<bool>,
    brief: Vec<bool>,
    with_overview: bool,
}

/// Chooses units by `order` while the estimate stays within `target` tokens; says whether the
/// overview line fits too (it is cheap, and skipped only under a tiny budget). A unit pulled in
/// only as another's context is kept in its brief form when it has one, and whole once its own
/// rank comes and the whole fits.
fn select(
    doc: &Doc<'_>,
    order: &[usize],
    labels: &TreeLabels,
    frames: &RepeatedFrames,
    target: f64,
    bytes_per_token: f64,
) -> Choice {
    let n = doc.units.len();
    let mut kept = vec![false; n];
    let mut brief = vec![false; n];
    // A unit is kept with its parent, so a label repeating the parent's is never emitted.
    let estimate = |u: usize, briefly: bool| {
        let bytes = if briefly {
            labels.brief_len(u)
        } else {
            doc.units[u].span.len()
        };
        bytes.saturating_sub(labels.repeated(u)) as f64 / bytes_per_token + 1.0
    };
    let overview = doc
        .overview
        .as_ref()
        .map_or(0.0, |o| o.len() as f64 / bytes_per_token + 1.0);
    let with_overview = doc.overview.is_some() && overview <= target * 0.1;
    // With nothing chosen, everything is one omitted run.
    let mut used = if with_overview { overview } else { 0.0 };
    if n > 0 {
        used += MARKER_TOKENS;
    }
    let mut chain = Vec::with_capacity(MAX_CONTEXT_DEPTH);
    // The repeated frames of the units kept so far: shown once, they cost a marker after.
    let mut shown = frames::Shown::default();
    for &u in order {
        if used >= target - 2.0 {
            break;
        }
        if kept[u] {
            // Kept briefly as context: shown whole now, if the rest fits.
            let extra = estimate(u, false) - estimate(u, true);
            if brief[u] && used + extra <= target {
                brief[u] = false;
                used += extra;
            }
            continue;
        }
        chain.clear();
        let mut next = Some(u);
        while let Some(c) = next {
            if kept[c] || chain.len() >= MAX_CONTEXT_DEPTH {
                break;
            }
            chain.push(c);
            next = doc.units[c].parent.get();
        }
        let mut cost = 0.0;
        let mut gap_delta = 0.0;
        for (k, &c) in chain.iter().enumerate() {
            kept[c] = true;
            brief[c] = k > 0 && labels.has_brief(c);
            cost += estimate(c, brief[c]);
            gap_delta += gap_change(&kept, c);
        }
        if !frames.is_empty() {
            cost -= chain
                .iter()
                .map(|&c| frames.saved_tokens(c, &shown, bytes_per_token))
                .sum::<f64>();
        }
        if used + cost + gap_delta * MARKER_TOKENS <= target {
            used += cost + gap_delta * MARKER_TOKENS;
            for &c in &chain {
                frames.show(c, &mut shown);
            }
        } else {
            for &c in &chain {
                kept[c] = false;
                brief[c] = false;
            }
        }
    }
    // A lone omitted unit between two kept ones costs about what its marker costs: keep it
    // instead when the budget allows, which reads better and loses nothing.
    for u in 1..n.saturating_sub(1) {
        let lone = !kept[u] && kept[u - 1] && kept[u + 1];
        let context_kept = doc.units[u].parent.get().is_none_or(|p| kept[p]);
        let extra = estimate(u, false) - MARKER_TOKENS;
        if lone && context_kept && used + extra <= target {
            kept[u] = true;
            used += extra;
        }
    }
    Choice {
        kept,
        brief,
        with_overview,
    }
}

/// How the number of omitted runs changes when unit `u` (just marked) is kept.
fn gap_change(selected: &[bool], u: usize) -> f64 {
    let left = u == 0 || selected[u - 1];
    let right = u + 1 >= selected.len() || selected[u + 1];
    match (left, right) {
        (true, true) => -1.0,
        (false, false) => 1.0,
        _ => 0.0,
    }
}

/// The head of `text` within `bytes`, cut at a line or word end when one is near, and marked
/// with `…` when anything is cut.
fn head_of(text: &str, bytes: usize) -> String {
    if text.len() <= bytes {
        return text.to_owned();
    }
    let cut = crate::tokens::floor_char_boundary(text, bytes.saturating_sub(4));
    let head = &text[..cut];
    let at = head
        .rfind(['\n', ' ', ','])
        .filter(|&i| i * 4 >= cut * 3)
        .unwrap_or(cut);
    format!("{}…", &text[..at])
}

#[cfg(test)]
mod tests {
    use super::{fuller_head, head_of};

    #[test]
    fn a_cut_fuller_rendering_keeps_the_whole_row() {
        let row = "[3]: https://example.org/issues/3 | 3 | Parser rejects a trailing comma | open";
        let fuller = format!(
            "{row}\n[3]: {{\"title\":\"Parser rejects a trailing comma\",\"body\":\"{}\"}}",
            "word ".repeat(80)
        );
        let head = fuller_head(row, &fuller, 60);
        assert!(head.starts_with(row), "{head}");
        assert!(head.ends_with('…'), "{head}");
        assert!(head.len() < row.len() + 70, "{head}");
        // A rendering that does not start with the row is never shown in its place.
        assert_eq!(fuller_head(row, "something else", 60), row);
    }

    #[test]
    fn a_cut_unit_ends_at_a_word_and_says_it_was_cut() {
        let text = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda";
        let head = head_of(text, 30);
        assert!(head.ends_with('…'), "{head}");
        assert!(head.len() <= 30 + '…'.len_utf8(), "{head}");
        assert!(text.starts_with(head.trim_end_matches('…')), "{head}");
        assert!(!head.trim_end_matches('…').ends_with("de"), "{head}");
        assert_eq!(head_of("short", 30), "short");
    }
}
