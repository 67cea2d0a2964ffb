//! Structured text that is not JSON, read as a tree of records and fields.
//!
//! Configuration and lock files (TOML, INI, systemd units, `poetry.lock`, normalised
//! `Cargo.toml`) put their structure in section headers at the margin rather than in
//! indentation, so read line by line a field such as `version = "1.2.0"` has lost the record
//! it belongs to. Here every line keeps its place in the tree: a field's context is its
//! record's identity (the section header, and for a repeated `[[table]]` its first field, the
//! record's name), and a value that spans lines hangs under its key. Kept lines are emitted
//! byte for byte, so a fact quoted from the file is still there verbatim.
//!
//! Indented trees (YAML, `dpkg -s` stanzas, indented XML) already get their context from
//! indentation in the line reader; what this module adds is the part indentation cannot show.

pub(crate) mod noise;
mod sections;

pub(crate) use sections::{build as build_sections, looks_like_sections};
