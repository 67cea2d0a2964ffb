//! Runs of short values, which no one line holds: a map of many shown a member a line under a
//! line that counts its keys, and an array's scalars shown in chunks.

use crate::methods::extract::doc::Unit;

use super::Builder;
use super::raw::{Element, Item};
use super::render::{self, json_string, labelled};

impl Builder<'_> {
    /// The object's line as a count of its keys, then a line for each of its short members
    /// (those not in `big`, which are walked on their own) under it. Returns the object's line.
    pub(super) fn member_lines<E: Element>(
        &mut self,
        members: &[(&str, E)],
        big: &[usize],
        path: &str,
        parent: Option<usize>,
        depth: usize,
    ) -> usize {
        let head = labelled(path, &format!("{{…{} keys}}", members.len()));
        let unit = self.push(
            &head,
            Unit {
                parent: parent.into(),
                pinned: depth <= 1,
                ..Unit::default()
            },
        );
        for (i, (k, v)) in members.iter().enumerate() {
            if big.contains(&i) {
                continue;
            }
            let item = v.item();
            let value = match &item {
                Item::Parsed(value) => value
                    .as_str()
                    .and_then(|s| render::elided_member_digest(k, s, self.query))
                    .unwrap_or_else(|| item.compact()),
                Item::Raw(_) => item.compact(),
            };
            let text = labelled(path, &format!("{}:{value}", json_string(k)));
            self.push(
                &text,
                Unit {
                    parent: Some(unit).into(),
                    ..Unit::default()
                },
            );
        }
        unit
    }

    /// A run of an array's scalar items, from item `start`, as one line.
    pub(super) fn scalar_chunk(
        &mut self,
        path: &str,
        start: usize,
        items: &[Item<'_>],
        parent: Option<usize>,
    ) {
        if items.is_empty() {
            return;
        }
        let body: Vec<String> = items.iter().map(Item::compact).collect();
        let label = format!("{path}[{start}..{}]", start + items.len());
        let text = labelled(&label, &format!("[{}]", body.join(",")));
        let unit = self.push(
            &text,
            Unit {
                parent: parent.into(),
                ..Unit::default()
            },
        );
        self.units[unit].weight = items.len() as u32;
    }
}
