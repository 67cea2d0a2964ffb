//! Glob matching of tool names against `[[tools]] match` patterns.

/// Matches a tool name against a glob: `*` any run (possibly empty), `?` one character,
/// `[abc]` / `[a-z]` / `[!abc]` a set, `\x` a literal `x`. Anything else matches itself, so a
/// tool name holding glob characters can be matched by escaping them.
pub fn glob_matches(pattern: &str, name: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let name: Vec<char> = name.chars().collect();
    // Iterative matching with single-star backtracking: linear-ish, no recursion.
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some('*') => {
                star = Some((p, n));
                p += 1;
                continue;
            }
            Some('?') => {
                p += 1;
                n += 1;
                continue;
            }
            Some('[') => {
                if let Some((matched, next)) = match_set(&pattern, p, name[n]) {
                    if matched {
                        p = next;
                        n += 1;
                        continue;
                    }
                } else if name[n] == '[' {
                    p += 1;
                    n += 1;
                    continue;
                }
            }
            Some('\\') if p + 1 < pattern.len() && pattern[p + 1] == name[n] => {
                p += 2;
                n += 1;
                continue;
            }
            // An escaped character that differs: no match here (not a literal backslash).
            Some('\\') if p + 1 < pattern.len() => {}
            Some(&c) if c == name[n] => {
                p += 1;
                n += 1;
                continue;
            }
            _ => {}
        }
        match star {
            Some((sp, sn)) => {
                p = sp + 1;
                n = sn + 1;
                star = Some((sp, sn + 1));
            }
            None => return false,
        }
    }
    pattern[p..].iter().all(|&c| c == '*')
}

/// Matches `c` against the set starting at `pattern[start] == '['`: whether it matched and the
/// index after the set, or `None` when the set is not closed (then `[` is a literal).
fn match_set(pattern: &[char], start: usize, c: char) -> Option<(bool, usize)> {
    let mut i = start + 1;
    let negated = matches!(pattern.get(i), Some('!') | Some('^'));
    if negated {
        i += 1;
    }
    let mut matched = false;
    let mut first = true;
    while i < pattern.len() {
        let lo = pattern[i];
        if lo == ']' && !first {
            return Some((matched != negated, i + 1));
        }
        first = false;
        if i + 2 < pattern.len() && pattern[i + 1] == '-' && pattern[i + 2] != ']' {
            if lo <= c && c <= pattern[i + 2] {
                matched = true;
            }
            i += 3;
        } else {
            if lo == c {
                matched = true;
            }
            i += 1;
        }
    }
    None
}
