//! A parsed value as the walk reads it: strings of JSON as their trees ([`embedded`]),
//! rich-text trees as their text ([`rich_text`]).

use serde_json::Value;

use super::{embedded, rich_text};

/// Rewrites `value` in place as the walk reads it.
pub(super) fn read_in_place(value: &mut Value) {
    embedded::decode(value);
    rich_text::flatten(value);
}

/// A copy of `value` as the walk reads it, when that differs from `value`; `None` when it is
/// read as it is, so a parsed document borrowed from a caller is copied only then. A JSON text
/// with no escaped quote holds no string of JSON: `may_hold_json_strings` is then false and
/// the tree is not searched for one.
pub(super) fn copy_if_read_otherwise(value: &Value, may_hold_json_strings: bool) -> Option<Value> {
    let differs =
        (may_hold_json_strings && embedded::contains(value)) || rich_text::contains(value);
    differs.then(|| {
        let mut copy = value.clone();
        read_in_place(&mut copy);
        copy
    })
}
