//! Frames said once: the traces one framework logs repeat the same stack frames (twenty lines of
//! a web stack above every handler that failed), and each trace kept would spend its room on
//! them again. A run of indented lines already shown in a unit above is emitted as one marker,
//! and a unit is chosen at that cost, so the room goes to what each trace says of its own: its
//! entry, its message, its frames in the code that failed.
//!
//! ```text
//! 2026-11-30 15:28:02,174 ERROR asyncio Task exception was never retrieved
//! Traceback (most recent call last):
//!   File "/app/server.py", line 79, in run_asgi
//!   [… 8 lines as in a trace above …]
//!   File "/app/turbines.py", line 41, in efficiency
//! ```

use std::collections::{HashMap, HashSet};
use std::hash::BuildHasher;

use crate::methods::extract::detect::ContentKind;
use crate::methods::extract::doc::Doc;
use crate::methods::extract::query::WordHash;

/// Fewer repeated lines than this are shown as they are: their marker would save little.
const MIN_RUN: usize = 3;
/// Estimated tokens of one marker line.
const RUN_MARKER_TOKENS: f64 = 9.0;

/// The lines (by hash) already shown.
pub(super) type Shown = HashSet<u64, WordHash>;

/// An indented line of a unit that another unit has too.
#[derive(Debug, Clone, Copy)]
struct SharedLine {
    hash: u64,
    /// Its place among the unit's lines: a gap between two shared lines ends a run.
    index: u32,
    /// Its length with its newline.
    bytes: u32,
}

/// For each unit of a log, its indented lines that some other unit repeats.
#[derive(Debug, Default)]
pub(super) struct RepeatedFrames {
    shared: Vec<Vec<SharedLine>>,
}

impl RepeatedFrames {
    /// Finds the repeats of `doc`: only a log's entries carry traces.
    pub(super) fn of(doc: &Doc<'_>) -> Self {
        if doc.kind != ContentKind::Log {
            return Self::default();
        }
        let mut indented: Vec<Vec<SharedLine>> = vec![Vec::new(); doc.units.len()];
        // How many units hold each line, counted once per unit.
        let mut holders: HashMap<u64, u32, WordHash> = HashMap::default();
        let mut seen_in_unit = Shown::default();
        for (u, lines) in indented.iter_mut().enumerate() {
            let text = doc.text(u);
            if !text.contains('\n') {
                continue;
            }
            seen_in_unit.clear();
            for (index, line) in text.split('\n').enumerate() {
                if !is_indented(line) {
                    continue;
                }
                let hash = line_hash(line);
                lines.push(SharedLine {
                    hash,
                    index: index as u32,
                    bytes: line.len() as u32 + 1,
                });
                if seen_in_unit.insert(hash) {
                    *holders.entry(hash).or_default() += 1;
                }
            }
        }
        if holders.values().all(|&n| n < 2) {
            return Self::default();
        }
        for lines in &mut indented {
            lines.retain(|line| holders[&line.hash] >= 2);
            if lines.len() < MIN_RUN {
                lines.clear();
            }
        }
        RepeatedFrames { shared: indented }
    }

    /// Whether no unit repeats another's lines: nothing to say once.
    pub(super) fn is_empty(&self) -> bool {
        self.shared.is_empty()
    }

    /// Whether unit `u` has lines another unit repeats: only those can be said once, there
    /// or in the other.
    pub(super) fn repeats(&self, u: usize) -> bool {
        self.shared.get(u).is_some_and(|lines| !lines.is_empty())
    }

    /// The tokens unit `u` would not spend, at `bytes_per_token`, with `shown` already shown.
    pub(super) fn saved_tokens(&self, u: usize, shown: &Shown, bytes_per_token: f64) -> f64 {
        if !self.repeats(u) {
            return 0.0;
        }
        let mut saved = 0.0;
        for run in runs(&self.shared[u], shown) {
            let bytes: u32 = run.iter().map(|line| line.bytes).sum();
            saved += bytes as f64 / bytes_per_token - RUN_MARKER_TOKENS;
        }
        saved.max(0.0)
    }

    /// Marks unit `u`'s repeated lines as shown.
    pub(super) fn show(&self, u: usize, shown: &mut Shown) {
        if let Some(lines) = self.shared.get(u) {
            shown.extend(lines.iter().map(|line| line.hash));
        }
    }
}

/// The runs of at least [`MIN_RUN`] consecutive lines of `lines` that are all `shown`.
fn runs<'l>(lines: &'l [SharedLine], shown: &'l Shown) -> impl Iterator<Item = &'l [SharedLine]> {
    let is_shown = |line: &SharedLine| shown.contains(&line.hash);
    lines
        .chunk_by(move |a, b| b.index == a.index + 1 && is_shown(a) == is_shown(b))
        .filter(move |run| run.len() >= MIN_RUN && is_shown(&run[0]))
}

/// `text` with each run of at least [`MIN_RUN`] indented lines already `emitted` replaced by one
/// marker, indented as the run was; `None` when nothing is replaced. Its indented lines are
/// `emitted` after.
pub(super) fn said_once(text: &str, emitted: &mut Shown) -> Option<String> {
    if !text.contains('\n') {
        return None;
    }
    let lines: Vec<&str> = text.split('\n').collect();
    let repeated: Vec<bool> = lines
        .iter()
        .map(|line| is_indented(line) && emitted.contains(&line_hash(line)))
        .collect();
    emitted.extend(
        lines
            .iter()
            .filter(|line| is_indented(line))
            .map(|line| line_hash(line)),
    );
    let mut out: Option<String> = None;
    let mut i = 0;
    while i < lines.len() {
        let run = repeated[i..].iter().take_while(|&&r| r).count();
        if run < MIN_RUN {
            if let Some(out) = out.as_mut() {
                out.push_str(lines[i]);
                out.push('\n');
            }
            i += 1;
            continue;
        }
        let out = out.get_or_insert_with(|| {
            let mut head = lines[..i].join("\n");
            if i > 0 {
                head.push('\n');
            }
            head
        });
        let indent = &lines[i][..lines[i].len() - lines[i].trim_start().len()];
        out.push_str(&format!("{indent}[… {run} lines as in a trace above …]\n"));
        i += run;
    }
    out.map(|mut out| {
        out.pop();
        out
    })
}

/// Whether `line` is indented and holds something: a frame, or the code line under it.
fn is_indented(line: &str) -> bool {
    line.starts_with([' ', '\t']) && !line.trim().is_empty()
}

fn line_hash(line: &str) -> u64 {
    WordHash::default().hash_one(line.trim_end())
}

#[cfg(test)]
mod tests {
    use super::{RepeatedFrames, Shown, said_once};
    use crate::methods::extract::kinds::log;

    /// Two failed requests under one framework: the same six frames, then each handler's own.
    const TWO_TRACES: &str = "\
2026-11-30 15:28:01,176 ERROR asyncio Task exception was never retrieved
Traceback (most recent call last):
  File \"/srv/http3_server.py\", line 79, in run_asgi
    await app(self.scope, self.receive, self.send)
  File \"/srv/venv/starlette/applications.py\", line 96, in __call__
    await self.middleware_stack(scope, receive, send)
  File \"/srv/venv/starlette/middleware/errors.py\", line 186, in __call__
    raise exc
  File \"/srv/turbines.py\", line 41, in hub_heights
    return [float(h) for h in row['hub_height'].split(',')]
ValueError: could not convert string to float: '90;102'
2026-11-30 15:28:02,174 ERROR asyncio Task exception was never retrieved
Traceback (most recent call last):
  File \"/srv/http3_server.py\", line 79, in run_asgi
    await app(self.scope, self.receive, self.send)
  File \"/srv/venv/starlette/applications.py\", line 96, in __call__
    await self.middleware_stack(scope, receive, send)
  File \"/srv/venv/starlette/middleware/errors.py\", line 186, in __call__
    raise exc
  File \"/srv/turbines.py\", line 63, in efficiency
    return curve[speeds.index(speed)]
ValueError: '7.3' is not in list";

    #[test]
    fn frames_shown_above_are_said_once_and_each_trace_keeps_its_own() {
        let mut emitted = Shown::default();
        let (first, second) = TWO_TRACES.split_at(TWO_TRACES.find("\n2026").unwrap());
        assert_eq!(said_once(first, &mut emitted), None, "nothing shown yet");
        let second = said_once(second.trim_start(), &mut emitted).expect("repeats replaced");
        assert!(
            second.contains("  [… 6 lines as in a trace above …]\n"),
            "{second}"
        );
        assert!(!second.contains("starlette"), "{second}");
        // What this trace says of its own stays: its entry, its frame and its exception.
        for own in [
            "ERROR asyncio Task exception was never retrieved",
            "line 63, in efficiency",
            "return curve[speeds.index(speed)]",
            "ValueError: '7.3' is not in list",
        ] {
            assert!(second.contains(own), "{own}: {second}");
        }
    }

    #[test]
    fn a_unit_is_chosen_at_the_cost_of_what_it_adds() {
        let doc = log::build(TWO_TRACES);
        let frames = RepeatedFrames::of(&doc);
        assert!(!frames.is_empty());
        let traces: Vec<usize> = (0..doc.units.len())
            .filter(|&u| doc.text(u).contains("Traceback"))
            .collect();
        assert_eq!(traces.len(), 2, "{:?}", doc.units);
        let mut shown = Shown::default();
        assert_eq!(frames.saved_tokens(traces[1], &shown, 4.0), 0.0);
        frames.show(traces[0], &mut shown);
        let saved = frames.saved_tokens(traces[1], &shown, 4.0);
        assert!(saved > 40.0, "{saved}");
        // Short repeats (one frame) are shown as they are.
        let short = "x\n  File \"a.py\", line 1, in f\n    f()\n";
        assert_eq!(said_once(short, &mut shown.clone()), None);
    }
}
