//! Paths said once: a JSON unit is labelled by its whole path (`a.members.b.parameters[2]:`),
//! so that it reads alone wherever it is found. Emitted under its parent, which is kept with it,
//! it repeats the parent's label; in a deep tree (an API dump, a schema, a syntax tree) those
//! repeats cost more than the values the query asks for. A unit kept under its parent is shown
//! with only what its label adds, indented a step under the parent, the way the tree reads:
//!
//! ```text
//! pkg.members.Hasher.members.__init__: {"kind":"function","lineno":25,…}
//!   .parameters: 7 records; keys: annotation, default, kind, name
//!     [2]: {"default":"DEFAULT_MEMORY_COST","name":"memory_cost"}
//! ```

use crate::methods::extract::detect::ContentKind;
use crate::methods::extract::doc::Doc;
use crate::methods::extract::kinds::json::{Strings, is_naming_key};

/// One step of indentation under a parent.
const STEP: &str = "  ";
/// What stands for an array's items in a brief line.
const ELIDED_ARRAY: &str = "[…]";
/// Bodies this short are shown whole even as context: a brief line would save nothing.
const MIN_BRIEF_BODY: usize = 48;
/// A brief object keeps its short scalar members (`"name":"express"`, `"kind":"class"`), which
/// say which one it is, within this many bytes; each at most [`MAX_BRIEF_VALUE`] long.
const MAX_BRIEF_MEMBERS: usize = 80;
const MAX_BRIEF_VALUE: usize = 32;

/// For each unit of a labelled tree: how many bytes at the start of its text repeat its
/// parent's label, and how long its brief form is (`label: {"name":"express",…}`, its short
/// scalar members), which stands for it while it is kept only as the context of a unit under
/// it (0: none, or not a labelled tree).
#[derive(Debug, Default)]
pub(super) struct TreeLabels {
    repeated: Vec<u32>,
    brief_len: Vec<u32>,
}

impl TreeLabels {
    /// Measures the repeats of `doc`: only JSON trees label their units by path.
    pub(super) fn of(doc: &Doc<'_>) -> Self {
        if doc.kind != ContentKind::Json {
            return TreeLabels::default();
        }
        let repeated = (0..doc.units.len())
            .map(|u| {
                doc.units[u]
                    .parent
                    .get()
                    .map_or(0, |p| repeated_label(doc.text(p), doc.text(u)) as u32)
            })
            .collect();
        // Only a parent is ever kept as another's context: the rest need no brief form.
        let mut is_parent = vec![false; doc.units.len()];
        for p in doc.units.iter().filter_map(|unit| unit.parent.get()) {
            is_parent[p] = true;
        }
        let brief_len = (0..doc.units.len())
            .map(|u| {
                is_parent[u]
                    .then(|| brief(doc.text(u)))
                    .flatten()
                    .map_or(0, |b| b.len() as u32)
            })
            .collect();
        TreeLabels {
            repeated,
            brief_len,
        }
    }

    /// Whether unit `u` has a brief form.
    pub(super) fn has_brief(&self, u: usize) -> bool {
        self.brief_len.get(u).is_some_and(|&b| b > 0)
    }

    /// Bytes of unit `u`'s brief form (0 when it has none).
    pub(super) fn brief_len(&self, u: usize) -> usize {
        self.brief_len.get(u).map_or(0, |&b| b as usize)
    }

    /// Bytes at the start of unit `u` that repeat its parent's label, left out when both are
    /// shown (the indent said instead costs about a token).
    pub(super) fn repeated(&self, u: usize) -> usize {
        self.repeated.get(u).map_or(0, |&r| r as usize)
    }

    /// Renders `text`, unit `u`'s, relative to its parent when the parent is kept: returns the
    /// unit's depth under the nearest unit shown whole (0 for that one) and the text to emit.
    pub(super) fn relative<'t>(
        &self,
        doc: &Doc<'_>,
        u: usize,
        text: &'t str,
        selected: &[bool],
        depths: &[u16],
    ) -> (u16, std::borrow::Cow<'t, str>) {
        let repeated = self.repeated(u);
        let parent = doc.units[u].parent.get();
        match parent {
            Some(p) if repeated > 0 && selected[p] && text.len() >= repeated => {
                let depth = depths[p].saturating_add(1);
                let rest = &text[repeated..];
                // A member line of a map (`path: "KEY": value`) reads as the original prints
                // it (`"KEY": value`) once its path is said above.
                let rest = rest.strip_prefix(": ").unwrap_or(rest);
                let indent = STEP.repeat(usize::from(depth));
                (depth, format!("{indent}{rest}").into())
            }
            _ => (0, text.into()),
        }
    }
}

/// The label of a unit's `text` (its path, before `: `), if it has one.
fn label_of(text: &str) -> Option<&str> {
    let label = &text[..text.find(": ")?];
    // A path never holds a line break or starts a JSON value: the text is then unlabelled.
    (!label.is_empty() && !label.contains('\n') && !label.starts_with(['{', '[', '"']))
        .then_some(label)
}

/// The brief form of a unit's `text`, a labelled one-line object or array long enough for one
/// to save something: its label, and of its body an object's short scalar members or nothing
/// of an array's items.
pub(super) fn brief(text: &str) -> Option<String> {
    let label = label_of(text)?;
    let head = &text[..label.len() + 2];
    let body = &text[head.len()..];
    if body.len() < MIN_BRIEF_BODY || body.contains('\n') {
        return None;
    }
    if body.starts_with('[') && body.ends_with(']') {
        return Some(format!("{head}{ELIDED_ARRAY}"));
    }
    let members = body.strip_prefix('{')?.strip_suffix('}')?;
    let mut out = format!("{head}{{");
    let mut kept = 0;
    let mut dropped = false;
    // The members that name the object (`name`, `title`) first, wherever they sit: its keys
    // may come in alphabetical order.
    let (naming, rest): (Vec<&str>, Vec<&str>) = top_level_members(members)
        .partition(|member| member_key(member).is_some_and(is_naming_key));
    for member in naming.into_iter().chain(rest) {
        let value = member_value(member);
        let scalar = !value.starts_with(['{', '[']) && !value.is_empty();
        if scalar && value.len() <= MAX_BRIEF_VALUE && kept + member.len() <= MAX_BRIEF_MEMBERS {
            out.push_str(member);
            out.push(',');
            kept += member.len() + 1;
        } else {
            dropped = true;
        }
    }
    out.push_str("…}");
    // An object of short members only is its own brief form.
    dropped.then_some(out)
}

/// The members of an object's body (what is between its braces), split at its own commas,
/// never at one inside a string or a nested value.
fn top_level_members(members: &str) -> impl Iterator<Item = &str> {
    let mut depth = 0i32;
    let mut strings = Strings::default();
    let mut start = 0;
    let mut cuts = Vec::new();
    for (i, b) in members.bytes().enumerate() {
        if strings.holds(b) {
            continue;
        }
        match b {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth -= 1,
            b',' if depth == 0 => {
                cuts.push(start..i);
                start = i + 1;
            }
            _ => {}
        }
    }
    cuts.push(start..members.len());
    cuts.into_iter().map(move |r| &members[r])
}

/// The key of one member (`"key": value`), without its quotes, when it has no escapes.
fn member_key(member: &str) -> Option<&str> {
    let key = member.strip_prefix('"')?;
    let key = &key[..key.find('"')?];
    (!key.contains('\\')).then_some(key)
}

/// The value of one member (`"key": value`), after its key and colon.
fn member_value(member: &str) -> &str {
    let mut escaped = false;
    for (i, b) in member.bytes().enumerate().skip(1) {
        match b {
            _ if escaped => escaped = false,
            b'\\' => escaped = true,
            b'"' => {
                let rest = member[i + 1..].trim_start();
                return rest.strip_prefix(':').map_or("", str::trim_start);
            }
            _ => {}
        }
    }
    ""
}

/// How many bytes at the start of `child` repeat `parent`'s label (its text up to `: `), when
/// the child's label extends it (`.key`, `[i]`, or the parent's own path before a member).
fn repeated_label(parent: &str, child: &str) -> usize {
    let Some(label) = label_of(parent) else {
        return 0;
    };
    match child.strip_prefix(label) {
        Some(rest) if rest.starts_with(['.', '[']) || rest.starts_with(": ") => label.len(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::{brief, repeated_label};

    #[test]
    fn a_child_repeats_its_parents_label_only_where_its_path_extends_it() {
        let parent = "a.members.b: {\"kind\":\"function\"}";
        assert_eq!(
            repeated_label(parent, "a.members.b.parameters: 2 records"),
            11
        );
        assert_eq!(repeated_label(parent, "a.members.b[3]: {}"), 11);
        assert_eq!(repeated_label(parent, "a.members.b: \"KEY\":1"), 11);
        // A sibling whose name merely starts the same is not under it.
        assert_eq!(repeated_label(parent, "a.members.bb: {}"), 0);
        // An unlabelled parent (the document's own line) lends nothing.
        assert_eq!(repeated_label("{\"a\": {…3 keys}}", "a: {}"), 0);
        assert_eq!(repeated_label("[0]", "[0].x: 1"), 0);
    }

    #[test]
    fn a_brief_object_keeps_the_short_scalars_that_say_which_one_it_is() {
        let object = format!(
            "deps.express: {{\"version\": \"5.3.0\",\"integrity\":\"sha512-{}\",\"name\":\"express\",\"engines\":{{\"node\":\">= 18\"}},\"note\":\"a, b: c\"}}",
            "q".repeat(60)
        );
        assert_eq!(
            brief(&object).unwrap(),
            "deps.express: {\"name\":\"express\",\"version\": \"5.3.0\",\"note\":\"a, b: c\",…}"
        );
        // The name comes first, however late its key sorts.
        let torrent = r#"torrents[4]: {"activityDate":0,"addedDate":1795981298,"bandwidthPriority":0,"corruptEver":0,"creator":"Transmission/3.00","name":"tcllib-1.21-subset","percentDone":0.9338}"#;
        assert!(
            brief(torrent)
                .unwrap()
                .starts_with(r#"torrents[4]: {"name":"tcllib-1.21-subset","activityDate":0,"#)
        );
        let array = format!("a.c: [{}]", "1,".repeat(30) + "1");
        assert_eq!(brief(&array).unwrap(), "a.c: […]");
        // A schema line, a short object, an unlabelled document line: shown as they are.
        assert_eq!(brief("a.d: 7 records; keys: name:str, size:int"), None);
        assert_eq!(brief("a.e: {\"kind\":\"module\"}"), None);
        let short_members =
            "a.f: {\"kind\":\"module\",\"name\":\"x\",\"lineno\":25,\"runtime\":true}";
        assert_eq!(brief(short_members), None);
        assert_eq!(brief(&format!("{{\"a\": {}}}", "1".repeat(80))), None);
    }
}
