//! Schema validation and `CONDENSE_…` environment overrides.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde_json::Value;

use super::{CONFIG_SCHEMA, excerpt};
use crate::error::ConfigError;

/// Environment variables, from the process or given (for tests and embedding).
#[derive(Debug)]
pub(super) struct EnvVars(Option<BTreeMap<String, String>>);

impl EnvVars {
    pub(super) fn process() -> Self {
        EnvVars(None)
    }

    pub(super) fn none() -> Self {
        EnvVars(Some(BTreeMap::new()))
    }

    pub(super) fn from_pairs(pairs: impl IntoIterator<Item = (String, String)>) -> Self {
        EnvVars(Some(pairs.into_iter().collect()))
    }

    pub(super) fn get(&self, name: &str) -> Option<String> {
        match &self.0 {
            None => std::env::var(name).ok(),
            Some(map) => map.get(name).cloned(),
        }
    }
}

fn schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| serde_json::from_str(CONFIG_SCHEMA).expect("the shipped schema is JSON"))
}

/// The validator of everything but the schema's `pattern`s, which [`pattern_mismatch`] checks
/// only where the document has a value: compiling them was half of building the validator,
/// most of a millisecond of every start.
fn validator() -> &'static jsonschema::Validator {
    static VALIDATOR: OnceLock<jsonschema::Validator> = OnceLock::new();
    VALIDATOR.get_or_init(|| {
        let mut schema = schema().clone();
        remove_patterns(&mut schema);
        jsonschema::validator_for(&schema).expect("the shipped schema is a valid JSON Schema")
    })
}

fn remove_patterns(node: &mut Value) {
    match node {
        Value::Object(map) => {
            map.remove("pattern");
            map.values_mut().for_each(remove_patterns);
        }
        Value::Array(items) => items.iter_mut().for_each(remove_patterns),
        _ => {}
    }
}

/// The first string of `doc` that the `pattern` of its place in the schema does not match: its
/// JSON pointer and the message. Each pattern is compiled only for a value it checks.
fn pattern_mismatch(doc: &Value) -> Option<(String, String)> {
    fn walk(node: &Value, value: &Value, pointer: &str) -> Option<(String, String)> {
        let node = resolve_ref(node);
        if let (Some(pattern), Some(text)) =
            (node.get("pattern").and_then(Value::as_str), value.as_str())
        {
            let regex = regex::Regex::new(pattern).expect("the schema's patterns compile");
            if !regex.is_match(text) {
                return Some((
                    pointer.to_owned(),
                    format!("{value} does not match \"{pattern}\""),
                ));
            }
        }
        if let (Some(properties), Some(map)) = (
            node.get("properties").and_then(Value::as_object),
            value.as_object(),
        ) {
            for (key, property) in properties {
                if let Some(value) = map.get(key)
                    && let Some(found) = walk(property, value, &format!("{pointer}/{key}"))
                {
                    return Some(found);
                }
            }
        }
        if let (Some(items), Some(values)) = (node.get("items"), value.as_array()) {
            for (i, value) in values.iter().enumerate() {
                if let Some(found) = walk(items, value, &format!("{pointer}/{i}")) {
                    return Some(found);
                }
            }
        }
        None
    }
    walk(schema(), doc, "")
}

/// Keys of `[defaults]` that have no environment variable: they shape what a client is shown
/// (the proxy's tool listing and a result's structured copy), so they are set in the file only.
const FILE_ONLY_RULE_KEYS: [&str; 2] = ["query_argument", "structured_content"];

/// Sets every `CONDENSE_…` variable that names a schema key into the document, typed by the
/// schema. Returns, per JSON pointer set, the variable it came from, so validation errors can
/// name the variable instead of the file.
pub(super) fn apply_env_overrides(
    doc: &mut Value,
    env: &EnvVars,
) -> Result<BTreeMap<String, String>, ConfigError> {
    let mut set = BTreeMap::new();
    let schema = schema();
    let sections = schema["properties"].as_object().into_iter().flatten();
    for (section, section_schema) in sections {
        let Some(keys) = section_schema.get("properties").and_then(Value::as_object) else {
            continue;
        };
        for (key, key_schema) in keys {
            if section == "defaults" && FILE_ONLY_RULE_KEYS.contains(&key.as_str()) {
                continue;
            }
            let var = if section == "defaults" {
                format!("CONDENSE_{}", key.to_uppercase())
            } else {
                format!("CONDENSE_{}_{}", section.to_uppercase(), key.to_uppercase())
            };
            let Some(raw) = env.get(&var) else { continue };
            let key_schema = resolve_ref(key_schema);
            let value = typed_env_value(&raw, key_schema).ok_or_else(|| ConfigError::Env {
                var: var.clone(),
                message: format!(
                    "`{raw}` is not a valid {}",
                    key_schema["type"].as_str().unwrap_or("value")
                ),
            })?;
            if !doc.is_object() {
                *doc = Value::Object(Default::default());
            }
            let section_value = doc
                .as_object_mut()
                .expect("made an object above")
                .entry(section.clone())
                .or_insert_with(|| Value::Object(Default::default()));
            if let Some(map) = section_value.as_object_mut() {
                map.insert(key.clone(), value);
                set.insert(format!("/{section}/{key}"), var);
            }
        }
    }
    Ok(set)
}

fn resolve_ref(schema_node: &Value) -> &Value {
    match schema_node.get("$ref").and_then(Value::as_str) {
        Some(reference) => reference
            .strip_prefix("#/$defs/")
            .and_then(|name| schema()["$defs"].get(name))
            .unwrap_or(schema_node),
        None => schema_node,
    }
}

fn typed_env_value(raw: &str, key_schema: &Value) -> Option<Value> {
    let raw = raw.trim();
    match key_schema.get("type").and_then(Value::as_str) {
        Some("integer") => raw.parse::<u64>().ok().map(Value::from),
        Some("number") => raw.parse::<f64>().ok().map(Value::from),
        Some("boolean") => raw.parse::<bool>().ok().map(Value::from),
        // A list in one variable: comma-separated, as in `PATH`-like settings.
        Some("array") => Some(Value::Array(
            raw.split(',')
                .map(str::trim)
                .filter(|item| !item.is_empty())
                .map(|item| Value::String(item.to_owned()))
                .collect(),
        )),
        _ => Some(Value::String(raw.to_owned())),
    }
}

pub(super) fn validate(
    doc: &Value,
    origin: &str,
    overridden: &BTreeMap<String, String>,
) -> Result<(), ConfigError> {
    let (pointer, mut message, error) = match validator().iter_errors(doc).next() {
        Some(error) => (
            error.instance_path().to_string(),
            error.to_string(),
            Some(error),
        ),
        None => match pattern_mismatch(doc) {
            Some((pointer, message)) => (pointer, message, None),
            None => return Ok(()),
        },
    };
    let mut key = pointer_to_key(&pointer);
    // The schema's message quotes the offending value: shown short and redacted.
    message = excerpt(&message);
    // An unknown key is reported at its parent; name the key itself.
    if let Some(jsonschema::error::ValidationErrorKind::AdditionalProperties { unexpected }) =
        error.as_ref().map(|error| error.kind())
        && let Some(name) = unexpected.first()
    {
        key = if key.is_empty() {
            name.clone()
        } else {
            format!("{key}.{name}")
        };
        message = format!("unknown key `{name}`");
    }
    // A variable sets a whole key; an error inside it (a list's item) is still the variable's.
    let var = overridden.iter().find_map(|(set, var)| {
        let inside = pointer
            .strip_prefix(set.as_str())
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'));
        inside.then_some(var)
    });
    if let Some(var) = var {
        return Err(ConfigError::Env {
            var: var.clone(),
            message,
        });
    }
    Err(ConfigError::Invalid {
        origin: origin.to_owned(),
        key,
        message,
    })
}

/// `/tools/0/mode` → `tools[0].mode`.
fn pointer_to_key(pointer: &str) -> String {
    let mut key = String::new();
    for part in pointer.split('/').filter(|p| !p.is_empty()) {
        if part.chars().all(|c| c.is_ascii_digit()) {
            key.push_str(&format!("[{part}]"));
        } else {
            if !key.is_empty() {
                key.push('.');
            }
            key.push_str(&part.replace("~1", "/").replace("~0", "~"));
        }
    }
    key
}
