//! Rules about test reports: a failure's assertion lines carry the answer, while the query's
//! words (the test file, the test's name) sit in the lines that locate the failure.

use super::super::doc::Doc;

/// The share of a failure location's query match the failure's `E` lines gain.
const ASSERTION_SHARE: f32 = 0.8;
/// How many lines above its location line a failure's `E` lines are looked for.
const MAX_FAILURE_LINES: usize = 40;

/// pytest ends each failure with its location (`test_addr.py:307: AttributeError`) under the
/// `E   …` lines that say what failed: when the query names that file or error, those lines
/// gain most of the location's match, so the failures the query asks about keep their
/// assertions rather than the tracebacks of other failures.
pub(super) fn raise_failure_assertions(doc: &Doc<'_>, query_scores: &mut [f32]) {
    for u in 0..doc.units.len() {
        let share = ASSERTION_SHARE * query_scores[u];
        if share <= 0.0 || !is_failure_location(doc.text(u)) {
            continue;
        }
        for above in (u.saturating_sub(MAX_FAILURE_LINES)..u).rev() {
            let line = doc.text(above);
            // The failure's `____ Test.name ____` header, or the one before it, ends it.
            if line.starts_with("___") || is_failure_location(line) {
                break;
            }
            if is_assertion_line(line) {
                query_scores[above] = query_scores[above].max(share);
            }
        }
    }
}

/// Whether `line` is pytest's failure location: `path.py:LINE: ErrorName`.
fn is_failure_location(line: &str) -> bool {
    let mut parts = line.trim_end().splitn(3, ':');
    let (Some(path), Some(number), Some(error)) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    let error = error.strip_prefix(' ').unwrap_or_default();
    !path.is_empty()
        && !path.contains(' ')
        && path.contains('.')
        && !number.is_empty()
        && number.bytes().all(|b| b.is_ascii_digit())
        && !error.is_empty()
        && error
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
}

/// Whether `line` is one of pytest's `E   …` lines.
fn is_assertion_line(line: &str) -> bool {
    line.strip_prefix('E')
        .is_some_and(|rest| rest.starts_with("  "))
}

#[cfg(test)]
mod tests {
    use super::super::tests::scored;
    use super::*;

    #[test]
    fn the_assertions_of_a_failure_the_query_names_outrank_other_failures() {
        // The shape of pytest's failures section: two failures of two files.
        let text = "___________ CalendarTest.test_html ___________\n\
                    \x20   def test_html(self):\n\
                    E       ValueError: invalid month 'html'\n\
                    test_cal.py:88: ValueError\n\
                    ___________ AddressTest.test_mapped ___________\n\
                    \x20   def test_mapped(self):\n\
                    E       AttributeError: 'Addr' object has no attribute 'mapped'\n\
                    test_addr.py:307: AttributeError\n";
        let s = scored(
            text,
            "which tests in test_addr.py failed and with which errors",
        );
        assert!(s[6] > s[2], "{s:?}");
        assert!(is_failure_location("test_addr.py:307: AttributeError"));
        assert!(is_failure_location("lib/x/capture.py:229: OSError"));
        assert!(!is_failure_location("test_shlex.py:166: "));
        assert!(!is_failure_location("2024-05-01 10:00:01 started"));
    }
}
