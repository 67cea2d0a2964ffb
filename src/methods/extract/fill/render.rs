//! Rendering a choice: the kept units in source order, a marker for each run of omitted ones,
//! repeated frames said once, and how many repeats of a log template were left out.

use std::borrow::Cow;
use std::collections::HashMap;

use super::frames::{self, RepeatedFrames};
use super::labels::{self, TreeLabels};
use super::{Choice, MIN_FOLDED};
use crate::methods::extract::detect::ContentKind;
use crate::methods::extract::doc::{Doc, Level, Template};
use crate::methods::extract::kinds::log::thousands;

/// The kept units in source order, each as `text_of` gives it (relative to its parent's label
/// when the parent is kept too), with a marker for each run of omitted ones.
pub(super) fn render<'d>(
    doc: &'d Doc<'_>,
    labels: &TreeLabels,
    frames: &RepeatedFrames,
    choice: &Choice,
    text_of: &dyn Fn(usize) -> Cow<'d, str>,
) -> String {
    let selected = &choice.kept;
    let mut out = String::new();
    if let Some(overview) = doc.overview.as_ref().filter(|_| choice.with_overview) {
        out.push_str(overview);
        out.push('\n');
    }
    let mut folded = fold_counts(doc, selected);
    let mut i = 0;
    let n = doc.units.len();
    let mut depths = vec![0u16; n];
    let mut emitted = frames::Shown::default();
    while i < n {
        if selected[i] {
            let brief = choice.brief[i]
                .then(|| labels::brief(doc.text(i)))
                .flatten();
            let text = if let Some(brief) = brief {
                Cow::Owned(brief)
            } else {
                text_of(i)
            };
            let text = if frames.repeats(i) {
                frames::said_once(&text, &mut emitted).map_or(text, Cow::Owned)
            } else {
                text
            };
            let (depth, text) = labels.relative(doc, i, &text, selected, &depths);
            depths[i] = depth;
            // The first kept line of a template says how many of its repeats were left out:
            // at the end of the entry's line, not of the trace under it.
            match doc.units[i].template.and_then(|t| folded.remove(&t)) {
                Some(omitted) => {
                    let (line, rest) = text.split_once('\n').unwrap_or((&text, ""));
                    out.push_str(line);
                    out.push_str(&format!(" [+{} similar omitted]", thousands(omitted)));
                    if !rest.is_empty() {
                        out.push('\n');
                        out.push_str(rest);
                    }
                }
                None => out.push_str(&text),
            }
            out.push('\n');
            i += 1;
            continue;
        }
        let start = i;
        while i < n && !selected[i] {
            i += 1;
        }
        let neighbours = [start.checked_sub(1), (i < n).then_some(i)];
        out.push_str(&marker(doc, start..i, neighbours));
        out.push('\n');
    }
    if out.ends_with('\n') {
        out.pop();
    }
    out
}

/// For logs: templates with at least `MIN_FOLDED` omitted repeats, and how many were omitted.
fn fold_counts(doc: &Doc<'_>, selected: &[bool]) -> HashMap<Template, usize> {
    let mut counts: HashMap<Template, (usize, usize)> = HashMap::new();
    if doc.kind != ContentKind::Log {
        return HashMap::new();
    }
    for (unit, &kept) in doc.units.iter().zip(selected) {
        if let Some(t) = unit.template {
            let entry = counts.entry(t).or_default();
            entry.0 += unit.weight as usize;
            if kept {
                entry.1 += unit.weight as usize;
            }
        }
    }
    counts
        .into_iter()
        .filter(|&(_, (total, kept))| kept > 0 && total - kept >= MIN_FOLDED)
        .map(|(t, (total, kept))| (t, total - kept))
        .collect()
}

/// `[… 1,203 similar INFO lines omitted …]`: how many, and what they have in common ("similar":
/// the same template as a kept neighbour).
fn marker(doc: &Doc<'_>, run: std::ops::Range<usize>, kept_around: [Option<usize>; 2]) -> String {
    let units = &doc.units[run];
    let count: usize = units.iter().map(|u| u.weight as usize).sum();
    let template = units[0].template;
    let similar = template.is_some()
        && units.len() > 1
        && units.iter().all(|u| u.template == template)
        && kept_around
            .iter()
            .flatten()
            .any(|&k| doc.units[k].template == template);
    let level = units[0].level;
    let level = (doc.kind == ContentKind::Log
        && level != Level::None
        && units.iter().all(|u| u.level == level))
    .then(|| level.label())
    .flatten();
    let noun = if count == 1 {
        doc.noun.trim_end_matches('s')
    } else {
        doc.noun
    };
    let mut text = format!("[… {}", thousands(count));
    if similar {
        text.push_str(" similar");
    }
    if let Some(level) = level {
        text.push(' ');
        text.push_str(level);
    }
    text.push(' ');
    text.push_str(noun);
    text.push_str(" omitted …]");
    text
}
