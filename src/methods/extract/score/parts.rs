//! Questions of several parts: each part should get a unit of its own, not only the part
//! whose words are everywhere. The first paragraphs under a heading the query names (every
//! paragraph of a short section, or of a section the query singles out) gain from the heading,
//! as do the sections under a heading the query singles out and the entries a matching
//! paragraph introduces; the best unit holding a rare query word ranks among the first.

use super::super::doc::Doc;
use super::super::fill::length_cost;
use super::super::query::Query;

/// The share of a heading's query match its first paragraphs gain, in order.
const LEAD_SHARES: [f32; 3] = [0.6, 0.45, 0.3];
/// The share of a named heading's match a section under it gains as its own heading's.
const SUBSECTION_SHARE: f32 = 0.8;
/// A paragraph introduces entries the query asks for when its match is at least this share
/// of the best paragraph's; it reaches at most this many.
const INTRO_SHARE: f32 = 0.8;
const MAX_INTRODUCED_ENTRIES: usize = 40;
/// A heading is named when its match is at least this share of the best heading's, and at
/// most this many are.
const NAMED_SECTION_SHARE: f32 = 0.8;
const MAX_NAMED_SECTIONS: usize = 2;
/// The entry that matches best is the answer when every entry outside its section matches
/// less than this share of it; its section then reaches its entries with this share.
const ANSWER_MARGIN: f32 = 0.8;
const ANSWER_SECTION_SHARE: f32 = 0.5;
/// An entry of a reference is named when its own lines match at least this share of the best
/// entry's, and at most this many are: a question may name an entry for each of its parts.
const NAMED_ENTRY_SHARE: f32 = 0.5;
const MAX_NAMED_ENTRIES: usize = 3;
/// A section of at most this many units under a heading the query names is read whole.
const MAX_SHORT_SECTION: usize = 8;
/// The best unit holding a query word that at most [`MAX_RARE_WORD_UNITS`] units hold ranks
/// at least this high.
const RARE_WORD_RANK: usize = 16;
const MAX_RARE_WORD_UNITS: usize = 3;
const SOLE_WORD_RANK: usize = 4;
/// Shorter words are not raised so.
const MIN_RARE_WORD_LEN: usize = 5;
/// At most this many units are raised so.
const MAX_RAISED_UNITS: usize = 3;

/// The first paragraphs under a heading the query names say what the heading's subject is or
/// does ("what does `env_clear` do"): they gain part of the heading's match.
pub(super) fn pull_leads(doc: &Doc<'_>, query_scores: &[f32], scores: &mut [f32]) {
    // Per heading, how many units it heads directly: a short section (an option's entry in a
    // reference) is read whole, each of its paragraphs gaining at least the last share.
    let mut section_units = vec![0u32; doc.units.len()];
    for unit in &doc.units {
        if let Some(p) = unit.parent.get() {
            section_units[p] += 1;
        }
    }
    let (heading_match, reach) = named_section_matches(doc, query_scores, &section_units);
    let last_share = LEAD_SHARES[LEAD_SHARES.len() - 1];
    // Per heading, how many of its units came before: a section's units are interleaved with
    // its subsections' (a changelog's releases, each with its entries, under one title).
    let mut seen = vec![0usize; doc.units.len()];
    for (u, unit) in doc.units.iter().enumerate() {
        let Some(p) = unit.parent.get().filter(|&p| p < u) else {
            continue;
        };
        let lead = seen[p];
        seen[p] += 1;
        // Every entry of a section the query singles out (a release of a changelog, however
        // long its list) is that section's: the query's other words choose among them.
        let share = match LEAD_SHARES.get(lead) {
            Some(&share) => share,
            None if section_units[p] as usize <= MAX_SHORT_SECTION || reach[p] > 0.0 => last_share,
            None => 0.0,
        };
        scores[u] += share * heading_match[p];
    }
    // The items a paragraph introduces gain as the lead of a section would.
    for (u, &r) in reach.iter().enumerate() {
        if section_units[u] == 0 && r > 0.0 {
            scores[u] += LEAD_SHARES[0] * r;
        }
    }
}

/// Each heading's query match, as the sections under it gain from it. The heading the query
/// singles out reaches the sections under it too: "the breaking changes in v0.18.0" names
/// `# v0.18.0`, and the `## Bugfixes` under it is that release's, though its own words match
/// nothing. Only a heading that matches far better than all but one other, over a part of the
/// document (not its title, over all of it), is such a heading. Also returns how far that
/// match reaches each unit (0 for most), with the entries a paragraph introduces (see
/// [`reach_introduced_entries`]).
fn named_section_matches(
    doc: &Doc<'_>,
    query_scores: &[f32],
    section_units: &[u32],
) -> (Vec<f32>, Vec<f32>) {
    let n = doc.units.len();
    let mut heading_match: Vec<f32> = (0..n)
        .map(|u| {
            if section_units[u] > 0 {
                query_scores[u]
            } else {
                0.0
            }
        })
        .collect();
    let mut reach = vec![0.0f32; n];
    let best = heading_match.iter().copied().fold(0.0f32, f32::max);
    let named: Vec<usize> = (0..n)
        .filter(|&u| best > 0.0 && heading_match[u] >= NAMED_SECTION_SHARE * best)
        .collect();
    let held = units_held(doc);
    if !named.is_empty() && named.len() <= MAX_NAMED_SECTIONS {
        for &h in &named {
            if held[h] * 2 <= n {
                reach[h] = heading_match[h];
            }
        }
    }
    reach_answer_section(doc, query_scores, section_units, &held, &mut reach);
    reach_named_parts_of_named_sections(doc, query_scores, section_units, &mut reach);
    reach_introduced_entries(doc, query_scores, section_units, &mut reach);
    // Parents come before their children: one pass in order carries the match down.
    for u in 0..n {
        if section_units[u] > 0
            && let Some(p) = doc.units[u].parent.get().filter(|&p| p < u)
            && reach[p] > 0.0
        {
            reach[u] = reach[u].max(SUBSECTION_SHARE * reach[p]);
        }
        if section_units[u] > 0 {
            heading_match[u] = heading_match[u].max(reach[u]);
        }
    }
    (heading_match, reach)
}

/// How many units each unit's section holds, itself and its subsections' included: children
/// come after their parents, so one pass from the end.
fn units_held(doc: &Doc<'_>) -> Vec<usize> {
    let n = doc.units.len();
    let mut held = vec![1usize; n];
    for u in (0..n).rev() {
        if let Some(p) = doc.units[u].parent.get().filter(|&p| p < u) {
            held[p] += held[u];
        }
    }
    held
}

/// "Which release added `shell()`, and what else did it change about shells": the entry that
/// matches the query best, far better than any entry outside its section, is the answer, and
/// the section around it (the release) is where the rest of the answer is. The outermost
/// section holding it, short of the whole document, reaches its entries with a share of that
/// match.
fn reach_answer_section(
    doc: &Doc<'_>,
    query_scores: &[f32],
    section_units: &[u32],
    held: &[usize],
    reach: &mut [f32],
) {
    let n = doc.units.len();
    let Some((best, top)) = best_entry(query_scores, section_units) else {
        return;
    };
    // The outermost heading above the best entry that is not the document's title.
    let mut section = None;
    let mut at = best;
    while let Some(p) = doc.units[at].parent.get().filter(|&p| p < at) {
        if held[p] * 2 <= n {
            section = Some(p);
        }
        at = p;
    }
    let Some(section) = section else { return };
    // A section's units follow its heading: its subtree is the run of units it holds.
    let within = section..section + held[section];
    // Far better than every entry elsewhere: one answer, not one of many alike.
    let rival = (0..n)
        .filter(|&u| section_units[u] == 0 && !within.contains(&u))
        .map(|u| query_scores[u])
        .fold(0.0f32, f32::max);
    if rival < ANSWER_MARGIN * top {
        reach[section] = reach[section].max(ANSWER_SECTION_SHARE * top);
    }
}

/// "Which return codes can `pam_chauthtok` give": a reference repeats one subsection under
/// every entry (`RETURN VALUES`, `Parameters`, `Examples`), whose title the query names, but
/// which entry's it asks for only the entry says (its synopsis names `pam_chauthtok`). The
/// repeated subsections whose title matches, under the entries whose own lines match best,
/// reach their units with both matches.
fn reach_named_parts_of_named_sections(
    doc: &Doc<'_>,
    query_scores: &[f32],
    section_units: &[u32],
    reach: &mut [f32],
) {
    /// A title is repeated when this many headings share it.
    const MIN_REPEATS: usize = 3;
    let n = doc.units.len();
    let headings: Vec<usize> = (0..n).filter(|&u| section_units[u] > 0).collect();
    let mut titles: std::collections::HashMap<&str, usize> = Default::default();
    for &h in &headings {
        *titles.entry(bare_title(doc.text(h))).or_default() += 1;
    }
    // Per heading, the best match among its own lines (not its subsections').
    let mut own_match = vec![0.0f32; n];
    for u in 0..n {
        if section_units[u] == 0
            && let Some(p) = doc.units[u].parent.get().filter(|&p| p < u)
        {
            own_match[p] = own_match[p].max(query_scores[u]);
        }
    }
    let repeated: Vec<usize> = headings
        .iter()
        .copied()
        .filter(|&h| query_scores[h] > 0.0 && titles[bare_title(doc.text(h))] >= MIN_REPEATS)
        .collect();
    // The titles that match best (`RETURN VALUES` of "return codes"), not those that share a
    // word of the query's subject with it (`PAM_SUCCESS` of "pam_chauthtok").
    let best_title = repeated
        .iter()
        .map(|&h| query_scores[h])
        .fold(0.0f32, f32::max);
    let parts: Vec<(usize, f32)> = repeated
        .iter()
        .filter(|&&h| query_scores[h] >= NAMED_SECTION_SHARE * best_title)
        .filter_map(|&h| {
            let p = doc.units[h].parent.get().filter(|&p| p < h)?;
            Some((h, own_match[p]))
        })
        .collect();
    let best = parts.iter().map(|&(_, m)| m).fold(0.0f32, f32::max);
    if best <= 0.0 {
        return;
    }
    let named: Vec<&(usize, f32)> = parts
        .iter()
        .filter(|&&(_, m)| m >= NAMED_ENTRY_SHARE * best)
        .collect();
    if named.len() > MAX_NAMED_ENTRIES {
        return;
    }
    for &&(h, m) in &named {
        reach[h] = reach[h].max(SUBSECTION_SHARE * (m + query_scores[h]));
    }
}

/// A heading's title without its marks and numbering: `#### 3.1.10.2. RETURN VALUES` is
/// `RETURN VALUES`.
fn bare_title(heading: &str) -> &str {
    heading
        .trim_start_matches('#')
        .trim_start()
        .trim_start_matches(|c: char| c.is_ascii_digit() || c == '.')
        .trim()
}

/// The entry (a unit heading nothing) that matches the query best, and its match, when one
/// matches at all.
fn best_entry(query_scores: &[f32], section_units: &[u32]) -> Option<(usize, f32)> {
    (0..query_scores.len())
        .filter(|&u| section_units[u] == 0)
        .map(|u| (u, query_scores[u]))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .filter(|&(_, score)| score > 0.0)
}

/// "It takes an object holding configuration options. These are recognized:": a paragraph
/// that ends by introducing what follows, and that matches the query as well as any
/// paragraph, lends its match to the entries it introduces (the `<dt>` of each option, an
/// item of a list: the siblings after it, up to the next other paragraph).
fn reach_introduced_entries(
    doc: &Doc<'_>,
    query_scores: &[f32],
    section_units: &[u32],
    reach: &mut [f32],
) {
    let n = doc.units.len();
    let Some((_, best_paragraph)) = best_entry(query_scores, section_units) else {
        return;
    };
    for intro in 0..n {
        if section_units[intro] > 0
            || query_scores[intro] < INTRO_SHARE * best_paragraph
            || !doc.text(intro).trim_end().ends_with(':')
        {
            continue;
        }
        let parent = doc.units[intro].parent.get();
        let mut entries = 0;
        for u in intro + 1..n {
            let p = doc.units[u].parent.get();
            if p != parent {
                // Inside an entry (under a later sibling), or past the section.
                if p.is_some_and(|p| p > intro) {
                    continue;
                }
                break;
            }
            let is_entry = section_units[u] > 0 || is_list_item(doc.text(u));
            if !is_entry || entries == MAX_INTRODUCED_ENTRIES {
                break;
            }
            reach[u] = reach[u].max(SUBSECTION_SHARE * query_scores[intro]);
            entries += 1;
        }
    }
}

fn is_list_item(text: &str) -> bool {
    let t = text.trim_start();
    t.starts_with("- ") || t.starts_with("* ")
}

/// A query word few units hold is one part of what is asked ("which value rotates on
/// Mondays", beside a class name every paragraph holds): the best unit holding it ranks
/// among the first [`RARE_WORD_RANK`], so that each part of a question of several is answered,
/// not only the part whose words are everywhere.
pub(super) fn raise_rare_word_units(
    doc: &Doc<'_>,
    query: &Query,
    matches: &[(u32, u32)],
    scores: &mut [f32],
) {
    let n = scores.len();
    let words = query.words.len();
    if n <= RARE_WORD_RANK || words == 0 {
        return;
    }
    // Short words ("case", "long", "must") are the question's own, not what it is about.
    let mut content = vec![false; words];
    for (word, &i) in &query.words {
        content[i] =
            word.len() >= MIN_RARE_WORD_LEN && word.bytes().all(|b| b.is_ascii_alphabetic());
    }
    // Per word, its first few holders; a word held by more is no longer looked at.
    let mut holders: Vec<Vec<u32>> = vec![Vec::new(); words];
    for &(u, term) in matches {
        if let Some(h) = holders.get_mut(term as usize)
            && content[term as usize]
            && h.len() <= MAX_RARE_WORD_UNITS
        {
            h.push(u);
        }
    }
    // The rarest words first, and only a few raised: each costs the room of a unit.
    holders.retain(|units| !units.is_empty() && units.len() <= MAX_RARE_WORD_UNITS);
    if holders.is_empty() {
        return;
    }
    holders.sort_by_key(Vec::len);
    let (cost, mut ranked) = by_score_per_length(doc, scores);
    let (_, &mut floor, _) = ranked.select_nth_unstable_by(RARE_WORD_RANK, |a, b| b.total_cmp(a));
    let (_, &mut sole_floor, _) =
        ranked.select_nth_unstable_by(SOLE_WORD_RANK, |a, b| b.total_cmp(a));
    let mut raised = 0;
    for units in holders {
        if raised == MAX_RAISED_UNITS {
            break;
        }
        let best = units
            .iter()
            .map(|&u| u as usize)
            .max_by(|&a, &b| scores[a].total_cmp(&scores[b]).then(b.cmp(&a)))
            .expect("not empty");
        let floor = if units.len() == 1 { sole_floor } else { floor };
        if scores[best] < floor * cost[best] {
            scores[best] = (floor + 0.01) * cost[best];
            raised += 1;
        }
    }
}

/// Each unit's length cost, and its score per cost: units are ranked so as the budget is
/// filled. A unit that should rank at least `k`-th scores the `k`-th ratio times its cost.
pub(super) fn by_score_per_length(doc: &Doc<'_>, scores: &[f32]) -> (Vec<f32>, Vec<f32>) {
    let cost: Vec<f32> = doc
        .units
        .iter()
        .map(|u| length_cost(u.span.len()))
        .collect();
    let ranked = scores.iter().zip(&cost).map(|(s, c)| s / c).collect();
    (cost, ranked)
}

#[cfg(test)]
mod tests;
