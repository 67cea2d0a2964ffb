//! The cells of one record: its scalars at the top and one level down, its lists of
//! scalars, and the fields of its lists of small objects, each with its text; and the row
//! they make.

use serde_json::Value;

use crate::methods::extract::tree::noise::opaque_share;

/// The depths, in keys below a list's one object, whose scalars are the record's cells: the
/// shallower ones are the list's cells already (`labels[].name`, `licenses[].license.id`), and
/// deeper ones are detail no row needs.
const IN_LIST_OBJECT: Depths = Depths { min: 3, max: 4 };
/// The same below the one object a record wraps (`{"version": …, "image": {…}}`): its
/// members are the record's own (its cells one level down), and so are theirs
/// (`image.properties.signature`).
const IN_WRAPPED_OBJECT: Depths = Depths { min: 2, max: 3 };
/// A record is a wrapper of its one object member when its other members are scalars, at
/// most this many (a format's `version` beside the thing described).
const MAX_WRAPPER_SCALARS: usize = 2;

/// The depths, in keys below an object, whose scalars are cells.
#[derive(Clone, Copy)]
struct Depths {
    min: usize,
    max: usize,
}

/// A value in a cell is cut to this many bytes.
const MAX_CELL_BYTES: usize = 100;

/// One cell's source: a scalar, or the names gathered from a list.
pub(super) enum Cell<'v> {
    Scalar(&'v Value),
    List,
}

/// A list of this many equal scalars or more is shown as one and its count.
const MIN_REPEATS_COUNTED: usize = 4;

/// The cell of a list of scalars: its items joined by commas, or, when they are all the same
/// (hyperfine's 45 `exit_codes` of a run), the one item and how many times it repeats, `0×45`.
pub(super) fn list_text(items: &[Value]) -> String {
    match items {
        [first, rest @ ..]
            if items.len() >= MIN_REPEATS_COUNTED && rest.iter().all(|x| x == first) =>
        {
            format!("{}×{}", cell_text(first), items.len())
        }
        _ => items.iter().map(cell_text).collect::<Vec<_>>().join(","),
    }
}

/// Calls `f` with every candidate cell of `item`: scalars at the top and one level down
/// (`user.login`), and lists at the top — of scalars (`tags[]`), or of small objects by each
/// of their text fields (`labels[].name`, `licenses[].license.id`), and a list's one object by
/// its deeper scalars too — with the cell's text.
pub(super) fn for_each_cell<'v>(item: &'v Value, f: &mut dyn FnMut(&str, Cell<'v>, String)) {
    let Value::Object(map) = item else { return };
    let wrapper = map.values().filter(|v| v.is_object()).count() == 1
        && !map.values().any(Value::is_array)
        && map.len() <= MAX_WRAPPER_SCALARS + 1;
    for (k, v) in map {
        match v {
            Value::Object(inner) => {
                for (ik, x) in inner {
                    if !x.is_object() && !x.is_array() && !x.is_null() {
                        f(&format!("{k}.{ik}"), Cell::Scalar(x), cell_text(x));
                    }
                }
                if wrapper {
                    for_each_deep_scalar(v, &mut k.clone(), 0, IN_WRAPPED_OBJECT, f);
                }
            }
            Value::Array(items) => {
                if items.iter().all(|x| !x.is_object() && !x.is_array()) {
                    f(&format!("{k}[]"), Cell::List, list_text(items));
                } else if items.iter().all(Value::is_object) {
                    // Each text member of the items, and of an object they wrap (CycloneDX's
                    // `licenses[].license.id`).
                    let mut keys: Vec<(&String, Option<&String>)> = Vec::new();
                    for x in items {
                        for (ik, value) in x.as_object().into_iter().flatten() {
                            let mut add = |key| {
                                if !keys.contains(&key) {
                                    keys.push(key);
                                }
                            };
                            match value {
                                Value::String(_) => add((ik, None)),
                                Value::Object(inner) => inner
                                    .iter()
                                    .filter(|(_, v)| v.is_string())
                                    .for_each(|(iik, _)| add((ik, Some(iik)))),
                                _ => {}
                            }
                        }
                    }
                    // One object in a list is the record's own, wrapped (a finding's one
                    // location): its values deeper than a list's names read (a SARIF result's
                    // `locations[0].physicalLocation.artifactLocation.uri`) are the record's.
                    if let [only] = items.as_slice() {
                        let mut path = format!("{k}[0]");
                        for_each_deep_scalar(only, &mut path, 0, IN_LIST_OBJECT, f);
                    }
                    for (ik, iik) in keys {
                        let text: Vec<&str> = items
                            .iter()
                            .filter_map(|x| {
                                let v = x.get(ik)?;
                                iik.map_or(Some(v), |iik| v.get(iik))?.as_str()
                            })
                            .collect();
                        // The list's text is one cell: its links and digests make it no column.
                        if text
                            .iter()
                            .any(|t| t.contains("://") || opaque_share(t) >= 0.5)
                        {
                            continue;
                        }
                        let path = match iik {
                            Some(iik) => format!("{k}[].{ik}.{iik}"),
                            None => format!("{k}[].{ik}"),
                        };
                        f(&path, Cell::List, text.join(","));
                    }
                }
            }
            Value::Null => {}
            x => f(k, Cell::Scalar(x), cell_text(x)),
        }
    }
}

/// Calls `f` with each scalar of `object` at `depths` keys below it (shallower ones are cells
/// already), its path `path` and those keys.
fn for_each_deep_scalar<'v>(
    object: &'v Value,
    path: &mut String,
    depth: usize,
    depths: Depths,
    f: &mut dyn FnMut(&str, Cell<'v>, String),
) {
    let Value::Object(map) = object else { return };
    for (k, v) in map {
        let len = path.len();
        path.push('.');
        path.push_str(k);
        match v {
            Value::Object(_) if depth + 1 < depths.max => {
                for_each_deep_scalar(v, path, depth + 1, depths, f)
            }
            Value::Object(_) | Value::Array(_) | Value::Null => {}
            x if depth + 1 >= depths.min => f(path, Cell::Scalar(x), cell_text(x)),
            _ => {}
        }
        path.truncate(len);
    }
}

fn cell_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => super::super::compact(other),
    }
}

/// A record's `row` followed by `members` its columns leave out, each `key: value` as
/// compact JSON: `harbor_pa | Harbor-PA | volume: {"front-left":…}`.
pub(in super::super) fn row_with_members(row: &str, members: &[(&str, &Value)]) -> String {
    let mut text = row.to_owned();
    for (key, value) in members {
        text.push_str(" | ");
        text.push_str(key);
        text.push_str(": ");
        text.push_str(&super::super::compact(value));
    }
    text
}

/// A record's `cells` (see [`super::Table::cells`]) as its row, `|`-separated; a missing value is
/// left empty.
pub(in super::super) fn row_of(cells: &[String]) -> String {
    cells.join(" | ")
}

/// `text` as a cell shows it: on one line, with no `|` of the row's own, and shortened.
pub(super) fn shown_cell(text: &str) -> String {
    let text = text.replace('|', "/").replace('\n', " ");
    if text.len() <= MAX_CELL_BYTES {
        return text;
    }
    let cut = crate::tokens::floor_char_boundary(&text, MAX_CELL_BYTES);
    format!("{}…", &text[..cut])
}
