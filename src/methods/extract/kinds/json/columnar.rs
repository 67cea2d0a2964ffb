//! Columnar result sets — a table sent as its column names once and its rows as arrays of
//! cells (`{"columns": ["name", "size"], "rows": [["a", 1], …]}`: a SQL API's result, a
//! dataframe split into columns and data, a database dump's tables) — read as records keyed
//! by the column names. Each row then is a record like any other, its cells named, instead of
//! a list of bare values whose meaning sits in a header far above it.

use serde_json::{Map, Value};

/// Fewer columns than this are no table worth naming (a pair is a point, not a row).
const MIN_COLUMNS: usize = 2;

/// `map` with its rows read as records, when it is a columnar result set (see [`layout`]):
/// the names' member is dropped, the rows' member holds the records, every other member stays
/// as it was. `None` when `map` is no such set.
pub(super) fn as_records(map: &Map<String, Value>) -> Option<Value> {
    Some(records_of(map, &layout(map)?))
}

/// Whether `map` is a columnar result set (see [`layout`]).
pub(super) fn is_set(map: &Map<String, Value>) -> bool {
    layout(map).is_some()
}

/// `map`, laid out as `layout` says, with its rows as records.
fn records_of(map: &Map<String, Value>, layout: &Layout<'_>) -> Value {
    let Layout {
        rows_key,
        names_key,
        names,
    } = layout;
    let mut records: Option<Vec<Value>> = map[*rows_key].as_array().map(|rows| {
        rows.iter()
            .filter_map(Value::as_array)
            .map(|cells| Value::Object(names.iter().cloned().zip(cells.iter().cloned()).collect()))
            .collect()
    });
    let reshaped = map
        .iter()
        .filter(|(k, _)| k != names_key)
        .map(|(k, v)| {
            let value = if k == rows_key {
                Value::Array(records.take().unwrap_or_default())
            } else {
                v.clone()
            };
            (k.clone(), value)
        })
        .collect();
    Value::Object(reshaped)
}

/// `items` with each columnar result set among them read as records, when at least half of
/// them are such sets (a dump of a database's tables, one object per table); `None` otherwise.
/// A set with no rows loses its column names too, as the others did: a table of none.
pub(super) fn reshape_items(items: &[Value]) -> Option<Vec<Value>> {
    let layouts: Vec<Option<Layout<'_>>> = (items.iter())
        .map(|item| item.as_object().and_then(layout))
        .collect();
    let sets = layouts.iter().flatten().count();
    if sets == 0 || sets * 2 < items.len() {
        return None;
    }
    let first = layouts.iter().flatten().next()?;
    let is_empty_set = |map: &Map<String, Value>| {
        map.get(first.rows_key)
            .and_then(Value::as_array)
            .is_some_and(Vec::is_empty)
            && map.get(first.names_key).is_some_and(Value::is_array)
    };
    let reshaped = items
        .iter()
        .zip(&layouts)
        .map(|(item, layout)| match (item.as_object(), layout) {
            (Some(map), Some(layout)) => records_of(map, layout),
            (Some(map), None) if is_empty_set(map) => Value::Object(
                (map.iter())
                    .filter(|(k, _)| *k != first.names_key)
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            ),
            _ => item.clone(),
        })
        .collect();
    Some(reshaped)
}

/// Where a columnar result set keeps its rows and its column names.
struct Layout<'m> {
    rows_key: &'m str,
    names_key: &'m str,
    names: Vec<String>,
}

/// The layout of `map` when it is a columnar result set: one member a list of column names
/// (strings, or objects that each give a `name`), another a list of rows, each an array of
/// exactly that many cells.
fn layout(map: &Map<String, Value>) -> Option<Layout<'_>> {
    // Cheap refusal first: most objects hold no array of arrays at all.
    let (rows_key, rows) = map.iter().find(|(_, v)| is_rows(v))?;
    let rows = rows.as_array()?;
    let width = rows.first()?.as_array()?.len();
    if !rows
        .iter()
        .all(|row| row.as_array().is_some_and(|cells| cells.len() == width))
    {
        return None;
    }
    let (names_key, names) = map
        .iter()
        .filter(|(k, _)| *k != rows_key)
        .find_map(|(k, v)| column_names(v, width).map(|names| (k, names)))?;
    Some(Layout {
        rows_key,
        names_key,
        names,
    })
}

/// Whether `value` is a non-empty list of rows: every item an array.
fn is_rows(value: &Value) -> bool {
    value
        .as_array()
        .is_some_and(|rows| !rows.is_empty() && rows.iter().all(Value::is_array))
}

/// The `width` column names `value` lists, distinct: strings (`"size"`), or objects that each
/// name their column (`{"name": "size", "type": "int"}`).
fn column_names(value: &Value, width: usize) -> Option<Vec<String>> {
    let columns = value.as_array()?;
    if columns.len() != width || width < MIN_COLUMNS {
        return None;
    }
    let names: Vec<String> = columns
        .iter()
        .map(|column| match column {
            Value::String(name) => Some(name.clone()),
            Value::Object(fields) => fields.get("name")?.as_str().map(str::to_owned),
            _ => None,
        })
        .collect::<Option<_>>()?;
    let mut sorted: Vec<&String> = names.iter().collect();
    sorted.sort();
    sorted.dedup();
    (sorted.len() == names.len() && names.iter().all(|n| !n.is_empty())).then_some(names)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn reshaped(value: Value) -> Option<Value> {
        as_records(value.as_object().unwrap())
    }

    #[test]
    fn rows_under_column_names_become_records() {
        // A database dump's table: its caption, its rows, the names of their cells.
        let table = json!({
            "caption": "NAT table",
            "data": [["198.51.100.2", "10.40.0.0/16", "snat"],
                     ["198.51.100.3", "10.40.2.20", "dnat_and_snat"]],
            "headings": ["external_ip", "logical_ip", "type"],
        });
        assert_eq!(
            reshaped(table),
            Some(json!({
                "caption": "NAT table",
                "data": [
                    {"external_ip": "198.51.100.2", "logical_ip": "10.40.0.0/16", "type": "snat"},
                    {"external_ip": "198.51.100.3", "logical_ip": "10.40.2.20",
                     "type": "dnat_and_snat"},
                ],
            }))
        );
    }

    #[test]
    fn columns_may_be_objects_that_name_them() {
        // A SQL endpoint's result: typed columns, then rows.
        let result = json!({
            "columns": [{"name": "host", "type": "text"}, {"name": "load", "type": "float"}],
            "rows": [["db-1", 0.5], ["db-2", 2.25]],
        });
        assert_eq!(
            reshaped(result),
            Some(json!({"rows": [{"host": "db-1", "load": 0.5}, {"host": "db-2", "load": 2.25}]}))
        );
    }

    #[test]
    fn other_arrays_of_arrays_stay_as_they_are() {
        // Coordinates with no names; rows of another width than the names; repeated names.
        assert_eq!(reshaped(json!({"points": [[1, 2], [3, 4]]})), None);
        assert_eq!(
            reshaped(json!({"names": ["a", "b", "c"], "rows": [[1, 2], [3, 4]]})),
            None
        );
        assert_eq!(
            reshaped(json!({"names": ["a", "b"], "rows": [[1, 2], [3, 4, 5]]})),
            None
        );
        assert_eq!(
            reshaped(json!({"names": ["a", "a"], "rows": [[1, 2]]})),
            None
        );
    }
}
