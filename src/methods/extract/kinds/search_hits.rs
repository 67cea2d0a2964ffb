//! Search results with context lines (`grep -rn -C2`, `rg -n -C2`, `git grep -n -C2`): each
//! hit comes with the lines around it, `path:12:` on the hit and `path-11-` on its context,
//! and groups are set apart by `--` lines.
//!
//! What a hit means is often on its context lines: a warning's message continues on the line
//! after the one that matched, a call opens on the line before. Read as lines of one long
//! block, a hit is kept without them. Here each group is a block of its own, a record whose
//! lines explain one another.

use crate::methods::extract::doc::Doc;

/// A group longer than this is no hit with its context (`-C` is a few lines each side).
const MAX_GROUP_LINES: usize = 25;
/// Fewer separators than this is too little to call the text search results.
const MIN_GROUPS: usize = 3;

/// The path of a `grep -n` line with context: `path:12:text` on a hit, `path-12-text` on a
/// context line. A path holds no space.
fn hit_path(line: &str) -> Option<&str> {
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b' ' || b == b'\t' {
            return None;
        }
        if (b == b':' || b == b'-') && i > 0 {
            let digits = bytes[i + 1..]
                .iter()
                .take_while(|d| d.is_ascii_digit())
                .count();
            if digits > 0 && bytes.get(i + 1 + digits) == Some(&b) {
                return Some(&line[..i]);
            }
        }
        i += 1;
    }
    None
}

/// Makes each group of a search's hits with their context (the lines between two `--`
/// separators, all of one path) one block.
pub(crate) fn group_hits(doc: &mut Doc<'_>) {
    let n = doc.units.len();
    let separators: Vec<usize> = (0..n).filter(|&u| doc.text(u) == "--").collect();
    if separators.len() < MIN_GROUPS {
        return;
    }
    let mut groups = Vec::with_capacity(separators.len() + 1);
    let mut start = 0;
    for end in separators.iter().copied().chain([n]) {
        if start < end && end - start <= MAX_GROUP_LINES {
            let path = hit_path(doc.text(start));
            let one_path = path.is_some() && (start..end).all(|u| hit_path(doc.text(u)) == path);
            if one_path {
                groups.push(start..end);
            }
        }
        start = end + 1;
    }
    // Most of the text is groups of hits, or it is no search's output.
    if groups.len() * 2 < separators.len() + 1 {
        return;
    }
    let first_block = doc.next_block();
    for (block, group) in (first_block..).zip(groups) {
        for unit in &mut doc.units[group] {
            unit.block = Some(block);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::extract::kinds::lines;

    #[test]
    fn hit_and_context_lines_give_their_path() {
        assert_eq!(
            hit_path("/usr/lib/a-b.py:12:    x = 1"),
            Some("/usr/lib/a-b.py")
        );
        assert_eq!(
            hit_path("/usr/lib/a-b.py-13-    \"text\""),
            Some("/usr/lib/a-b.py")
        );
        assert_eq!(hit_path("src/x-1.2/y.rs-7-"), Some("src/x-1.2/y.rs"));
        assert_eq!(hit_path("plain text: 12: not a hit"), None);
        assert_eq!(hit_path("--"), None);
    }

    #[test]
    fn each_group_between_separators_is_one_block() {
        let mut text = String::new();
        for i in 0..6 {
            text.push_str(&format!(
                "lib/m{i}.py-10-    warnings.warn(\nlib/m{i}.py:11:        \"m{i} is deprecated\",\nlib/m{i}.py-12-        DeprecationWarning)\n--\n"
            ));
        }
        let mut doc = lines::build(&text, lines::Style::Text);
        group_hits(&mut doc);
        let block_of = |line: &str| {
            let u = (0..doc.units.len()).find(|&u| doc.text(u) == line).unwrap();
            doc.units[u].block
        };
        let warn = block_of("lib/m3.py-10-    warnings.warn(");
        assert!(warn.is_some());
        assert_eq!(block_of("lib/m3.py:11:        \"m3 is deprecated\","), warn);
        assert_eq!(block_of("lib/m3.py-12-        DeprecationWarning)"), warn);
        assert_ne!(block_of("lib/m4.py-10-    warnings.warn("), warn);
    }
}
