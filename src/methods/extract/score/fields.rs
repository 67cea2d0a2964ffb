//! A field every record of a tree has, asked for of the records the query names: `Total:`
//! under each `Class:` of a report, `Status:` under each unit of a status dump. The key
//! repeats in every record, so it names none of them and scores as little as any repeat; the
//! records the query names score well. The field of a named record is read with it, so it
//! scores nearly as its record does.

use std::collections::HashMap;

use super::super::doc::Doc;
use super::super::query::Query;
use super::settings::setting_key;

/// A key is a field of records when this many lines hold it.
const MIN_RECORDS: usize = 3;
/// A field the query names scores this share of its record's score, when that is more.
const FIELD_SHARE: f32 = 0.9;

/// Raises each `key: value` line whose key the query names, and which many records hold, to
/// [`FIELD_SHARE`] of the score of the line that heads its record. Run after repeats are
/// lowered: the record's own rank, not the field's rank among its repeats, decides.
pub(in super::super) fn raise_fields_of_named_records(
    doc: &Doc<'_>,
    query: &Query,
    scores: &mut [f32],
) {
    let mut fields: Vec<(usize, usize, &str)> = Vec::new();
    for u in 0..doc.units.len() {
        let Some(head) = doc.units[u].parent.get().filter(|&p| p < u) else {
            continue;
        };
        if let Some(key) = setting_key(doc.text(u)) {
            fields.push((u, head, key));
        }
    }
    let mut holders: HashMap<&str, usize> = HashMap::new();
    for &(_, _, key) in &fields {
        *holders.entry(key).or_default() += 1;
    }
    let mut named: HashMap<&str, bool> = HashMap::new();
    for (u, head, key) in fields {
        if holders[key] < MIN_RECORDS {
            continue;
        }
        let is_named = *named.entry(key).or_insert_with(|| {
            let (named, words) = query.key_words_named(key);
            words > 0 && named == words
        });
        if is_named {
            scores[u] = scores[u].max(FIELD_SHARE * scores[head]);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::methods::extract::Hints;
    use crate::methods::extract::kinds::lines::{self, Style};
    use crate::methods::extract::query::Query;

    /// A cohesion report: per module, its classes; per class, its methods and its total.
    fn report() -> String {
        let mut text = String::new();
        for module in [
            "pools",
            "connection",
            "messaging",
            "serialization",
            "entity",
        ] {
            text.push_str(&format!("File: shop/{module}.py\n"));
            for (c, class) in ["Producer", "Consumer", "Queue", "Exchange"]
                .iter()
                .enumerate()
            {
                let class = if (module, c) == ("connection", 2) {
                    "Connection"
                } else {
                    class
                };
                text.push_str(&format!("  Class: {class} ({}:0)\n", 30 + c * 200));
                for f in 0..6 {
                    text.push_str(&format!("    Function: {module}_{f} {f}/6 {}.00%\n", f * 9));
                }
                let total = if class == "Connection" {
                    "5.13"
                } else {
                    "12.5"
                };
                text.push_str(&format!("    Total: {total}%\n"));
            }
        }
        text
    }

    #[test]
    fn the_field_of_a_named_record_comes_with_it() {
        let text = report();
        let doc = lines::build(&text, Style::Text);
        let query = Query::from_hints(
            &Hints::new().with_query("What total cohesion does the Connection class get?"),
        )
        .unwrap();
        let scores = super::super::score(&doc, Some(&query));
        let at = |line: &str| {
            doc.units
                .iter()
                .position(|u| text[u.span.range()].contains(line))
                .unwrap()
        };
        let total = at("Total: 5.13%");
        let rank = scores.iter().filter(|&&s| s > scores[total]).count();
        // Without the rule it ranks with the other totals, past every method line.
        assert!(rank <= 4, "the named class's total ranks {rank}");
    }
}
