//! Which part of an original to return, and cutting it out.

use crate::error::RetrieveError;

/// Which part of an original to return.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Selection {
    /// All of it.
    #[default]
    All,
    /// Lines `start..=end`, 1-based; `end` past the last line means to the end.
    Lines {
        /// The first line, from 1.
        start: usize,
        /// The last line, inclusive.
        end: usize,
    },
    /// The lines containing `pattern` (case-insensitive), each with `context` lines around
    /// it, numbered, at most `max_matches` matches.
    Pattern {
        /// The text to look for.
        pattern: String,
        /// Lines of context before and after each match.
        context: usize,
        /// The most matches returned.
        max_matches: usize,
    },
}

/// Applies a selection to a text.
pub(crate) fn select(text: &str, selection: &Selection) -> Result<String, RetrieveError> {
    match selection {
        Selection::All => Ok(text.to_owned()),
        Selection::Lines { start, end } => {
            if *start == 0 || end < start {
                return Err(RetrieveError::BadSelection(format!(
                    "lines {start}..={end}: lines are numbered from 1 and the range must not be empty"
                )));
            }
            let total = text.lines().count();
            if *start > total {
                return Err(RetrieveError::BadSelection(format!(
                    "line {start} is past the end: the original has {total} lines"
                )));
            }
            let mut out = String::new();
            for line in text.lines().skip(start - 1).take(end - start + 1) {
                out.push_str(line);
                out.push('\n');
            }
            Ok(out)
        }
        Selection::Pattern {
            pattern,
            context,
            max_matches,
        } => {
            if pattern.is_empty() {
                return Err(RetrieveError::BadSelection("the pattern is empty".into()));
            }
            let needle = pattern.to_lowercase();
            let lines: Vec<&str> = text.lines().collect();
            let hits: Vec<usize> = lines
                .iter()
                .enumerate()
                .filter(|(_, line)| line.to_lowercase().contains(&needle))
                .map(|(i, _)| i)
                .collect();
            let mut out = String::new();
            let mut last_emitted: Option<usize> = None;
            for &hit in hits.iter().take(*max_matches) {
                let from = hit.saturating_sub(*context);
                let to = (hit + context).min(lines.len() - 1);
                let from = match last_emitted {
                    Some(last) if from <= last + 1 => last + 1,
                    Some(_) => {
                        out.push_str("--\n");
                        from
                    }
                    None => from,
                };
                for (i, line) in lines.iter().enumerate().take(to + 1).skip(from) {
                    out.push_str(&format!(
                        "{}{}{line}\n",
                        i + 1,
                        if i == hit { ':' } else { '-' }
                    ));
                }
                last_emitted = Some(to.max(last_emitted.unwrap_or(0)));
            }
            if hits.len() > *max_matches {
                out.push_str(&format!(
                    "[… {} more matches; narrow the pattern or raise the limit …]\n",
                    hits.len() - max_matches
                ));
            }
            if hits.is_empty() {
                out.push_str(&format!("[no line contains `{pattern}`]\n"));
            }
            Ok(out)
        }
    }
}
