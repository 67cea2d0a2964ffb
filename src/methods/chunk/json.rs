//! JSON chunking: a parsed document cut at element boundaries, each chunk with the path of
//! the group it came from.

use serde_json::Value;

use super::{CONTEXT_SEPARATOR_TOKENS, Chunk, split_at_tokens};
use crate::TokenCounter;

/// Chunks a parsed JSON document at element boundaries.
pub(super) struct JsonChunker<'c> {
    limit: usize,
    overlap: usize,
    counter: &'c TokenCounter,
    out: Vec<Chunk>,
}

impl<'c> JsonChunker<'c> {
    pub(super) fn new(limit: usize, overlap: usize, counter: &'c TokenCounter) -> Self {
        JsonChunker {
            limit,
            overlap,
            counter,
            out: Vec::new(),
        }
    }

    pub(super) fn run(mut self, value: &Value) -> Vec<Chunk> {
        let compact = value.to_string();
        if self.counter.count_up_to(&compact, self.limit).is_some() {
            self.push("$".to_owned(), compact);
        } else {
            self.walk(value, "$");
        }
        self.out
    }

    fn walk(&mut self, value: &Value, path: &str) {
        match value {
            Value::Array(items) => {
                let members: Vec<(String, String, &Value)> = items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| (format!("{path}[{i}]"), item.to_string(), item))
                    .collect();
                self.group(path, members, items.len(), true);
            }
            Value::Object(map) => {
                let members: Vec<(String, String, &Value)> = map
                    .iter()
                    .map(|(key, item)| {
                        let key_json = Value::String(key.clone()).to_string();
                        (child_path(path, key), format!("{key_json}:{item}"), item)
                    })
                    .collect();
                self.group(path, members, map.len(), false);
            }
            scalar => {
                // One value larger than a chunk: only token boundaries are left.
                let text = scalar.to_string();
                let context = format!("{path} (part of one value)");
                let context_tokens = self.counter.count(&context) + CONTEXT_SEPARATOR_TOKENS;
                let limit = self.limit.saturating_sub(context_tokens).max(1);
                let mut atoms = Vec::new();
                split_at_tokens(
                    &text,
                    0..text.len(),
                    limit,
                    self.overlap,
                    self.counter,
                    &mut atoms,
                );
                for atom in atoms {
                    self.push(context.clone(), text[atom.range].to_owned());
                }
            }
        }
    }

    /// Packs consecutive members of one container into valid JSON bodies that fit, walking into
    /// any member too large for a chunk of its own.
    fn group(
        &mut self,
        path: &str,
        members: Vec<(String, String, &Value)>,
        total: usize,
        array: bool,
    ) {
        // The longest context this container can produce, so every group's context fits.
        let widest = group_context(
            path,
            total.saturating_sub(1),
            total.saturating_sub(1),
            total,
            array,
        );
        let cap = self
            .limit
            .saturating_sub(self.counter.count(&widest) + CONTEXT_SEPARATOR_TOKENS + 2)
            .max(1);
        let mut pending: Vec<(usize, String, usize)> = Vec::new();
        let mut pending_tokens = 0;
        for (i, (child, text, value)) in members.into_iter().enumerate() {
            // +1: the comma and newline between members.
            let tokens = self.counter.count_up_to(&text, cap).map(|t| t + 1);
            match tokens {
                Some(tokens) => {
                    if pending_tokens + tokens > cap && !pending.is_empty() {
                        self.emit(path, std::mem::take(&mut pending), total, array);
                        pending_tokens = 0;
                    }
                    pending.push((i, text, tokens));
                    pending_tokens += tokens;
                }
                None => {
                    if !pending.is_empty() {
                        self.emit(path, std::mem::take(&mut pending), total, array);
                        pending_tokens = 0;
                    }
                    self.walk(value, &child);
                }
            }
        }
        if !pending.is_empty() {
            self.emit(path, pending, total, array);
        }
    }

    /// Emits one group as a chunk, halving it when the exact count is over the limit.
    fn emit(&mut self, path: &str, group: Vec<(usize, String, usize)>, total: usize, array: bool) {
        let (first, last) = (group[0].0, group[group.len() - 1].0);
        let context = group_context(path, first, last, total, array);
        let inner: Vec<&str> = group.iter().map(|(_, text, _)| text.as_str()).collect();
        let (open, close) = if array { ("[", "]") } else { ("{", "}") };
        let body = format!("{open}{}{close}", inner.join(",\n"));
        let tokens =
            self.counter.count(&body) + self.counter.count(&context) + CONTEXT_SEPARATOR_TOKENS;
        if tokens > self.limit && group.len() > 1 {
            let mut head = group;
            let tail = head.split_off(head.len() / 2);
            self.emit(path, head, total, array);
            self.emit(path, tail, total, array);
            return;
        }
        self.push(context, body);
    }

    fn push(&mut self, context: String, body: String) {
        let mut chunk = Chunk::new(0, context, body);
        chunk.tokens = self.counter.count(&chunk.text());
        if chunk.tokens > self.limit {
            // Only a context that cannot fit beside a body gets here; the body fits alone.
            chunk.context.clear();
            chunk.tokens = self.counter.count(&chunk.body);
        }
        self.out.push(chunk);
    }
}

/// `$.key` for identifier-like keys, `$["odd key"]` for the rest.
fn child_path(path: &str, key: &str) -> String {
    let plain = !key.is_empty()
        && !key.starts_with(|c: char| c.is_ascii_digit())
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain {
        format!("{path}.{key}")
    } else {
        format!("{path}[{}]", Value::String(key.to_owned()))
    }
}

/// The context of a group of members `first..=last` out of `total`.
fn group_context(path: &str, first: usize, last: usize, total: usize, array: bool) -> String {
    let unit = if array { "elements" } else { "members" };
    if first == 0 && last + 1 == total {
        format!("{path} (all {total} {unit})")
    } else if array {
        format!(
            "{path}[{first}..={last}] ({} of {total} {unit})",
            last - first + 1
        )
    } else {
        format!("{path} ({unit} {}..={} of {total})", first + 1, last + 1)
    }
}
