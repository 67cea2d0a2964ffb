//! Quantities a log writes into its messages as `name=value` (`rss=182MB`, `took=1.25s`,
//! `queue=41`): no column holds them, yet when the query ranks by one ("how high did the RSS
//! get", "the slowest fetch") the entries holding its largest or smallest values answer, as
//! a ranked column's ends do in a table.

use super::super::doc::{Doc, parse_quantity};
use super::super::query::Query;

/// The entries at a ranked quantity's asked end, best first, and the share of the weight
/// each gets: "how high did it get" reads on to the runners-up a little.
const SHARES: [f32; 4] = [1.0, 0.8, 0.6, 0.45];
/// A quantity written by fewer entries than this is no series to rank.
const MIN_ENTRIES: usize = 3;
/// The weight of the top entry when no entry matches the query's words.
const MIN_WEIGHT: f32 = 2.0;
/// Names are short identifiers (`rss`, `elapsed_ms`, `queue.depth`); a letter alone is a
/// URL's parameter more often than a quantity.
const MIN_NAME_BYTES: usize = 2;
const MAX_NAME_BYTES: usize = 32;

/// Raises the entries of `doc` holding the largest (or, when asked, smallest) values of each
/// `name=value` quantity the query ranks by, as much as its best match of words.
pub(in super::super) fn raise_ranked_quantities(
    doc: &Doc<'_>,
    query: &Query,
    query_scores: &[f32],
    scores: &mut [f32],
) {
    if query.ranked.is_empty() {
        return;
    }
    // Per quantity name: (unit, value) of every entry that writes it.
    let mut series: Vec<(&str, Vec<(usize, f64)>)> = Vec::new();
    for u in 0..doc.units.len() {
        for (name, value) in named_quantities(doc.text(u)) {
            let at = match series.iter().position(|(n, _)| *n == name) {
                Some(at) => at,
                None if query.ranks(name) => {
                    series.push((name, Vec::new()));
                    series.len() - 1
                }
                None => continue,
            };
            series[at].1.push((u, value));
        }
    }
    let best = query_scores.iter().copied().fold(0.0f32, f32::max);
    let weight = best.max(MIN_WEIGHT);
    let ends = query.ends;
    for (_, mut values) in series {
        if values.len() < MIN_ENTRIES {
            continue;
        }
        values.sort_by(|a, b| b.1.total_cmp(&a.1));
        let mut raise = |ordered: &mut dyn Iterator<Item = &(usize, f64)>| {
            for (&(u, _), share) in ordered.zip(SHARES) {
                scores[u] += weight * share;
            }
        };
        if ends.high {
            raise(&mut values.iter());
        }
        if ends.low {
            raise(&mut values.iter().rev());
        }
    }
}

/// The `name=value` pairs of `text` whose value is a number, with or without a unit
/// (`rss=182MB`, `deps=2`, `took=1.25s`), in a plain line or a JSON-escaped message.
fn named_quantities(text: &str) -> impl Iterator<Item = (&str, f64)> {
    let bytes = text.as_bytes();
    memchr::memchr_iter(b'=', bytes).filter_map(move |at| {
        let name_start = text[..at]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')))
            .map_or(0, |p| p + 1);
        let name = &text[name_start..at];
        if !(MIN_NAME_BYTES..=MAX_NAME_BYTES).contains(&name.len())
            || !name.starts_with(|c: char| c.is_ascii_alphabetic())
        {
            return None;
        }
        let rest = &text[at + 1..];
        let end = rest
            .find(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | '"' | '\\' | ')' | '&'))
            .unwrap_or(rest.len());
        let value = &rest[..end];
        value
            .starts_with(|c: char| c.is_ascii_digit())
            .then(|| parse_quantity(value))
            .flatten()
            .map(|v| (name, v))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_are_read_from_plain_and_escaped_messages() {
        let plain: Vec<_> = named_quantities("indexed accepts@2.0.0 deps=2 rss=53MB").collect();
        assert_eq!(plain, vec![("deps", 2.0), ("rss", 53e6)]);
        let escaped: Vec<_> =
            named_quantities(r#"{"message":"indexed amp deps=0 rss=55MB\n","type":"out"}"#)
                .collect();
        assert_eq!(escaped, vec![("deps", 0.0), ("rss", 55e6)]);
        assert_eq!(named_quantities("a == b, url=http://x?q=1").count(), 0);
    }

    #[test]
    fn the_peak_of_a_ranked_quantity_stands_out() {
        use crate::methods::extract::Hints;
        use crate::methods::extract::kinds::lines::{self, Style};
        let mut text = String::new();
        for i in 0..60 {
            text.push_str(&format!(
                "indexed pkg-{i}@1.0.{i} deps={} rss={}MB\n",
                i % 7,
                50 + i
            ));
            if i % 20 == 19 {
                text.push_str("indexer restarted by the watchdog\n");
            }
        }
        let doc = lines::build(&text, Style::Text);
        let query = Query::from_hints(
            &Hints::new()
                .with_query("why was the indexer restarted, and how high did its RSS get?"),
        )
        .unwrap();
        let scores = super::super::score(&doc, Some(&query));
        let peak = doc
            .units
            .iter()
            .position(|u| text[u.span.range()].contains("rss=109MB"));
        let peak = peak.unwrap();
        let above = scores.iter().filter(|&&s| s > scores[peak]).count();
        assert!(above <= 3, "{above} lines rank above the peak");
    }
}
