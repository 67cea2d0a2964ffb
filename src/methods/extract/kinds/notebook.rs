//! Jupyter notebooks (`.ipynb`): a JSON document of cells, read as the document its reader sees.
//!
//! Rendered as JSON, a notebook spends its budget on what no reader looks at (each cell's
//! execution timestamps, output types, base64 images, the source split into one JSON string
//! per line) and cuts a cell's text to a one-line head. Read as a document instead, markdown
//! cells keep their headings, which frame sections; each code cell is a heading of its own
//! (`In [3]:`), with its source and its outputs as fenced lines under it; an error is its
//! `name: value` line and its traceback with the terminal colours taken out; a progress bar
//! redrawn with carriage returns is its last state, as a terminal shows it; and an image is one
//! line naming its type. The markdown reader then cuts and ranks that text like any document.

use serde_json::Value;

/// The largest notebook parsed when detection left it unparsed (it is over the size documents
/// are parsed whole at): a tree costs a few times its text, and a larger notebook is mostly
/// embedded images, which the JSON reader walks without building a tree.
pub(crate) const MAX_PARSED_BYTES: usize = 8 << 20;

/// The heading level of a code cell: deeper than any markdown heading a cell may hold, so that
/// a code cell nests in the section its notebook puts it in.
const CODE_CELL_HEADING: &str = "######";

/// Whether `value` is a notebook: an object whose `cells` are objects with a `cell_type` and a
/// `source`.
pub(crate) fn is_notebook(value: &Value) -> bool {
    value
        .get("cells")
        .and_then(Value::as_array)
        .is_some_and(|cells| {
            !cells.is_empty()
                && cells
                    .iter()
                    .all(|cell| cell.get("cell_type").is_some() && cell.get("source").is_some())
        })
}

/// Whether `text`, a JSON object too large to have been parsed, may be a notebook, told
/// without parsing it: the keys every notebook has.
pub(crate) fn may_be_notebook(text: &str) -> bool {
    text.len() <= MAX_PARSED_BYTES
        && text.trim_start().starts_with('{')
        && text.contains("\"cell_type\"")
        && text.contains("\"nbformat\"")
}

/// The notebook `value` as markdown text: its cells in order, each output under its cell.
pub(crate) fn to_text(value: &Value) -> String {
    let mut out = String::new();
    let cells = value.get("cells").and_then(Value::as_array);
    for cell in cells.into_iter().flatten() {
        let source = joined(cell.get("source"));
        match cell.get("cell_type").and_then(Value::as_str) {
            Some("code") => {
                let label = match cell.get("execution_count").and_then(Value::as_u64) {
                    Some(n) => format!("In [{n}]:"),
                    None => "In [ ]:".to_owned(),
                };
                push_line(&mut out, &format!("{CODE_CELL_HEADING} {label}"));
                push_fenced(&mut out, &source);
                let outputs = cell.get("outputs").and_then(Value::as_array);
                for output in outputs.into_iter().flatten() {
                    push_output(&mut out, output);
                }
            }
            // Markdown and raw cells are text already.
            _ => push_line(&mut out, &source),
        }
        out.push('\n');
    }
    push_notebook_metadata(&mut out, value);
    out
}

/// What the notebook records about itself (its kernel, its language and version, its format)
/// as a last section: asked about ("which Python ran it"), and small. Printed as the file
/// prints it, one member a line, so a member quoted from the file reads the same.
fn push_notebook_metadata(out: &mut String, value: &Value) {
    let Some(map) = value.as_object() else { return };
    let own: serde_json::Map<String, Value> = map
        .iter()
        .filter(|(key, _)| key.as_str() != "cells")
        .map(|(key, v)| (key.clone(), v.clone()))
        .collect();
    if own.is_empty() {
        return;
    }
    push_line(out, &format!("{CODE_CELL_HEADING} Notebook metadata"));
    let pretty = serde_json::to_string_pretty(&Value::Object(own)).unwrap_or_default();
    push_fenced(out, &pretty);
}

/// One output of a code cell: a stream's text, a result's plain text (or its markdown or
/// HTML), an image's type, or an error with its traceback.
fn push_output(out: &mut String, output: &Value) {
    match output.get("output_type").and_then(Value::as_str) {
        Some("stream") => push_fenced(out, &as_terminal_shows(&joined(output.get("text")))),
        Some("error") => {
            let name = output
                .get("ename")
                .and_then(Value::as_str)
                .unwrap_or("Error");
            let value = output.get("evalue").and_then(Value::as_str).unwrap_or("");
            push_line(out, &format!("{name}: {value}"));
            let traceback: Vec<String> = output
                .get("traceback")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(without_colours)
                .collect();
            push_fenced(out, &traceback.join("\n"));
        }
        Some(_) => {
            let Some(data) = output.get("data").and_then(Value::as_object) else {
                return;
            };
            if let Some(plain) = data.get("text/plain") {
                push_fenced(out, &joined(Some(plain)));
            } else if let Some(markdown) = data.get("text/markdown") {
                push_line(out, &joined(Some(markdown)));
            } else if let Some(html) = data.get("text/html") {
                push_line(out, &super::html::to_text(&joined(Some(html))));
            }
            for kind in data.keys().filter(|k| k.starts_with("image/")) {
                push_line(out, &format!("[{kind} output]"));
            }
        }
        None => {}
    }
}

/// A notebook's multi-line string: one string, or an array of lines that each keep their `\n`.
fn joined(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(lines)) => lines.iter().filter_map(Value::as_str).collect(),
        _ => String::new(),
    }
}

fn push_line(out: &mut String, text: &str) {
    out.push_str(text.trim_end_matches('\n'));
    out.push('\n');
}

/// `text` between fences, so that the markdown reader reads it as lines and never takes a
/// `# comment` for a heading.
fn push_fenced(out: &mut String, text: &str) {
    let text = text.trim_end_matches('\n');
    if text.trim().is_empty() {
        return;
    }
    out.push_str("```\n");
    for line in text.lines() {
        // A fence inside the text would end the block early.
        if line.trim_start().starts_with("```") || line.trim_start().starts_with("~~~") {
            out.push(' ');
            out.push_str(line.trim_start().trim_start_matches(['`', '~']));
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out.push_str("```\n");
}

/// Each line as a terminal leaves it: a line redrawn with carriage returns (a progress bar)
/// is its last drawing.
fn as_terminal_shows(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split('\n') {
        let line = line.trim_end_matches('\r');
        out.push_str(line.rsplit('\r').next().unwrap_or(line));
        out.push('\n');
    }
    out.truncate(out.trim_end_matches('\n').len());
    out
}

/// `text` without ANSI escape sequences (`ESC [ … letter`), which colour a traceback.
fn without_colours(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        if chars.peek() == Some(&'[') {
            chars.next();
            // Parameters and intermediates, then one final byte in `@`..=`~`.
            for c in chars.by_ref() {
                if ('@'..='~').contains(&c) {
                    break;
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Cells as `jupyter nbconvert --execute` writes them (trimmed from a real executed
    /// notebook): a markdown cell, a code cell with a progress bar on stderr and a result,
    /// and a code cell that raised.
    const SAMPLE: &str = r###"{
 "cells": [
  {"cell_type": "markdown", "metadata": {}, "source": ["## Downloads\n", "\n", "Progress of a transfer."]},
  {"cell_type": "code", "execution_count": 3,
   "metadata": {"execution": {"iopub.execute_input": "2026-11-24T14:01:56.574369Z"}},
   "outputs": [
    {"name": "stderr", "output_type": "stream", "text": ["\r0.00B [00:00, ?B/s]\r75.2MB [00:00, 115MB/s]\n"]},
    {"data": {"image/png": "iVBORw0KGgo=", "text/plain": ["<Figure size 640x480 with 1 Axes>"]},
     "execution_count": 3, "metadata": {}, "output_type": "execute_result"}
   ],
   "source": ["# count the bytes\n", "!seq 9999999 | tqdm --bytes | wc -l"]},
  {"cell_type": "code", "execution_count": 4, "metadata": {},
   "outputs": [
    {"ename": "AttributeError", "evalue": "module 'urllib' has no attribute 'urlretrieve'",
     "output_type": "error",
     "traceback": ["\u001b[0;31mAttributeError\u001b[0m                            Traceback (most recent call last)",
                   "Cell \u001b[0;32mIn[4], line 1\u001b[0m\n\u001b[0;32m----> 1\u001b[0m urllib\u001b[38;5;241m.\u001b[39murlretrieve(url)"]}
   ],
   "source": "urllib.urlretrieve(url)"}
 ],
 "metadata": {"kernelspec": {"name": "python3"}},
 "nbformat": 4,
 "nbformat_minor": 2
}"###;

    #[test]
    fn a_notebook_reads_as_its_cells_and_outputs() {
        let value: Value = serde_json::from_str(SAMPLE).unwrap();
        assert!(is_notebook(&value));
        assert!(may_be_notebook(SAMPLE));
        let text = to_text(&value);
        assert!(text.starts_with("## Downloads\n\nProgress of a transfer.\n"));
        assert!(text.contains("###### In [3]:\n```\n# count the bytes\n"));
        // The progress bar's last drawing, not each redraw.
        assert!(text.contains("\n75.2MB [00:00, 115MB/s]\n"));
        assert!(!text.contains("0.00B"));
        // An image is named, not embedded; what the notebook notes about a run is not shown.
        assert!(text.contains("[image/png output]"));
        assert!(!text.contains("iVBORw0KGgo"));
        assert!(!text.contains("iopub"));
        // An error is its line and its traceback without colours.
        assert!(text.contains("AttributeError: module 'urllib' has no attribute 'urlretrieve'\n"));
        assert!(text.contains("----> 1 urllib.urlretrieve(url)"));
        assert!(!text.contains('\u{1b}'));
        // What the notebook records about itself closes it, a member a line.
        let metadata = text.split("###### Notebook metadata\n").nth(1).unwrap();
        assert!(metadata.contains("\"name\": \"python3\""), "{metadata}");
        assert!(metadata.contains("\"nbformat_minor\": 2"), "{metadata}");
    }

    #[test]
    fn a_small_notebook_with_big_images_fills_its_budget_with_its_json() {
        use crate::TokenCounter;
        use crate::methods::extract::{Hints, extract_with_stats};
        // Two cells of text and an image of about 60 KB: the reader's view is a few lines.
        let image = "iVBORw0KGgoAAAANSUhEUgAAAJgAAABWCAYAAAAzIF".repeat(1500);
        let notebook = serde_json::json!({
            "cells": [
                {"cell_type": "markdown", "metadata": {}, "source": ["# Errors\n"]},
                {"cell_type": "code", "execution_count": 2, "metadata": {},
                 "source": ["def matrix_calc(L=None):\n", "    raise Exception(\"message\")\n"],
                 "outputs": [{"data": {"image/png": image, "text/plain": ["<Figure>"]},
                              "execution_count": 2, "metadata": {}, "output_type": "execute_result"}]}
            ],
            "metadata": {"kernelspec": {"name": "python3"}},
            "nbformat": 4,
            "nbformat_minor": 2
        });
        let text = serde_json::to_string_pretty(&notebook).unwrap();
        let hints = Hints::new().with_query("what does matrix_calc raise?");
        let counter = TokenCounter::default();
        let out = extract_with_stats(&text, &hints, 800, &counter);
        assert!(out.stats.tokens <= 800);
        // The view first, decoded; then the cell as the file holds it.
        let (view, source) = out
            .text
            .split_once("[… the JSON it was read from, in part: …]")
            .unwrap();
        assert!(
            view.contains("    raise Exception(\"message\")\n"),
            "{view}"
        );
        assert!(
            source.contains(r#"raise Exception(\"message\")"#),
            "{source}"
        );
        // A view that does not fit whole has no tail.
        let out = extract_with_stats(&text, &hints, 40, &counter);
        assert!(
            !out.text.contains("the JSON it was read from"),
            "{}",
            out.text
        );
    }

    #[test]
    fn other_json_is_not_a_notebook() {
        for other in [
            r#"{"cells": []}"#,
            r#"{"cells": [{"id": 1}]}"#,
            r#"[{"cell_type": "code", "source": ""}]"#,
        ] {
            assert!(
                !is_notebook(&serde_json::from_str(other).unwrap()),
                "{other}"
            );
        }
    }

    #[test]
    fn a_fence_inside_a_cell_does_not_end_its_block() {
        let value = serde_json::json!({"cells": [
            {"cell_type": "code", "execution_count": 1, "source": "s = '''\n```\n'''", "outputs": []}
        ]});
        let text = to_text(&value);
        assert_eq!(text.matches("```").count(), 2, "{text}");
    }
}
