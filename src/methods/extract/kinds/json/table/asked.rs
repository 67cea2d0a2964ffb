//! What a record's row hides that the query asks for: a query word few of its siblings hold
//! outside the row singles the record out, and the members the query names that no column
//! shows are added to its row.

use std::cell::OnceCell;

use serde_json::Value;

use super::{HashSet, Table, key_named_share, list_of};
use crate::methods::extract::kinds::json::named::{
    query_key_words_in, query_values_in, query_words_in,
};
use crate::methods::extract::kinds::json::render::is_name_value_list;
use crate::methods::extract::query::Query;
use crate::methods::extract::terms::for_each_word;

/// A member's text this long is content a row leaves out (a finding's code, a message), not a
/// value a column would have shown (a date, a count).
const MIN_HIDDEN_TEXT_BYTES: usize = 40;

impl Table {
    /// Whether `item` holds a query word few of its siblings hold, outside its `row`: the
    /// query singles it out for something the row does not show.
    #[cfg(test)]
    pub(in super::super) fn singles_out(
        &self,
        item: &Value,
        query: Option<&Query>,
        row: &str,
    ) -> bool {
        self.singles_out_by(item, query, row, &OnceCell::new())
    }

    /// [`Table::singles_out`], with the rare query words in `item` found once for the calls that
    /// share `words`.
    pub(in super::super) fn singles_out_by(
        &self,
        item: &Value,
        query: Option<&Query>,
        row: &str,
        words: &OnceCell<HashSet<String>>,
    ) -> bool {
        let Some(q) = query.filter(|_| self.has_rare_words()) else {
            return false;
        };
        let mut shown = HashSet::default();
        for_each_word(row, &mut String::new(), |w| {
            shown.insert(w.to_owned());
        });
        words
            .get_or_init(|| self.query_words_in(item, q))
            .iter()
            .any(|w| !shown.contains(w))
    }

    /// Whether any query word is rare among the records, in their values or their keys.
    fn has_rare_words(&self) -> bool {
        !self.rare_words.is_empty() || !self.rare_key_words.is_empty()
    }

    /// The query words `item` holds that few of its siblings hold: in its values, or in its
    /// keys when fewer still have those.
    fn query_words_in(&self, item: &Value, q: &Query) -> HashSet<String> {
        let mut words: HashSet<String> = query_words_in(item, q)
            .into_iter()
            .filter(|w| self.rare_words.contains(w))
            .collect();
        if !self.rare_key_words.is_empty() {
            words.extend(
                query_key_words_in(item, q)
                    .into_iter()
                    .filter(|w| self.rare_key_words.contains(w)),
            );
        }
        words
    }

    /// The members of `item` its row hides that the query asks for: when `item` holds a query
    /// word few of its siblings hold, and a member the table leaves out whose key the query
    /// names (`code` of "on what code"), the query asks for that member of the few records it
    /// singles out, which their rows do not show. Empty otherwise.
    #[cfg(test)]
    pub(in super::super) fn hidden_asked_members<'v>(
        &self,
        item: &'v Value,
        query: Option<&Query>,
        key_named: &dyn Fn(&str) -> bool,
    ) -> Vec<(&'v str, &'v Value)> {
        self.hidden_asked_members_by(item, query, key_named, &OnceCell::new())
    }

    /// [`Table::hidden_asked_members`], with the rare query words in `item` found once for the
    /// calls that share `words`.
    pub(in super::super) fn hidden_asked_members_by<'v>(
        &self,
        item: &'v Value,
        query: Option<&Query>,
        key_named: &dyn Fn(&str) -> bool,
        words: &OnceCell<HashSet<String>>,
    ) -> Vec<(&'v str, &'v Value)> {
        let (Some(q), Value::Object(map)) = (query, item) else {
            return Vec::new();
        };
        let hidden: Vec<(&str, &Value)> = map
            .iter()
            .filter(|(k, v)| {
                // Text, with spaces: a link or an id the query names is no content of its own.
                let named_text = v
                    .as_str()
                    .is_some_and(|s| s.len() >= MIN_HIDDEN_TEXT_BYTES && s.contains(' '))
                    && key_named(k);
                // A name the query quotes in a list of names and values (a header of a
                // recorded response): its value is in no column.
                let named_pair = v.as_array().is_some_and(|items| {
                    is_name_value_list(items)
                        && items
                            .iter()
                            .step_by(2)
                            .any(|x| x.as_str().is_some_and(|s| q.mentions(s)))
                });
                // An object the query names by its key (a sink's `volume`, per channel): no
                // column shows it whole, nor any path under it when no column starts with it.
                let named_object = v.as_object().is_some_and(|m| !m.is_empty())
                    && key_named(k)
                    && !self.columns.iter().any(|c| {
                        c.strip_prefix(k.as_str())
                            .is_some_and(|r| r.starts_with('.'))
                    });
                // A list of short values the query names by its key (a currency's
                // `alternate_symbols`), when no column shows it.
                let named_list = v.as_array().is_some_and(|items| {
                    !items.is_empty() && items.iter().all(|x| !x.is_object() && !x.is_array())
                }) && key_named(k)
                    && !self.columns.iter().any(|c| {
                        c.strip_suffix("[]") == Some(k.as_str()) || list_of(c) == Some(k.as_str())
                    });
                // A member is a column by its own key, never by a path under it.
                (named_text || named_pair || named_object || named_list)
                    && !self.columns.iter().any(|c| c == *k)
            })
            .map(|(k, v)| (k.as_str(), v))
            .collect();
        let singled_out = !hidden.is_empty()
            && (query_values_in(item, q)
                .iter()
                .any(|w| self.rare_values.contains(w))
                || (self.has_rare_words()
                    && !words
                        .get_or_init(|| self.query_words_in(item, q))
                        .is_empty()));
        if !singled_out {
            return Vec::new();
        }
        // Beside them, the record's short values whose key names a word of the query
        // (`sample_specification` of "what sample format"), which no column shows.
        let partly_named = map
            .iter()
            .filter(|(k, v)| {
                !v.is_object()
                    && !v.is_array()
                    && key_named_share(k, q) > 0
                    && !self.columns.iter().any(|c| c == *k)
                    && !hidden.iter().any(|(h, _)| h == k)
            })
            .map(|(k, v)| (k.as_str(), v))
            .collect::<Vec<_>>();
        let mut asked = hidden;
        asked.extend(partly_named);
        asked
    }
}
