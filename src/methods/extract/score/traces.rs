//! In a debug trace a request is named once, where it comes in, and what happens to it (the
//! bytes sent on, the answer that came back) follows in the entries after, which never name
//! it again: "what did the backend answer to request rsv-4471" is answered a few entries past
//! the only line holding `rsv-4471`.

use super::super::doc::{Doc, Level};
use super::super::kinds::log::is_raised_exception;
use super::super::query::Query;

/// An exact string the query names in at most this many entries marks where a request is
/// named; one found in more is matched wherever it matters.
const MAX_NAMING_ENTRIES: usize = 3;
/// Entries after a naming entry that gain from it.
const FOLLOWING_ENTRIES: usize = 16;
/// Entries before it (what was read just before a request was parsed).
const LEADING_ENTRIES: usize = 2;
/// The share of the naming entry's query score each of them gains.
const TRACE_SHARE: f32 = 0.5;

/// Raises the entries that follow (and just precede) an entry naming a rare exact string of
/// the query, by a share of that entry's query score.
pub(in super::super) fn raise_traced_entries(
    doc: &Doc<'_>,
    query: &Query,
    matches: &[(u32, u32)],
    query_scores: &[f32],
    scores: &mut [f32],
) {
    let n = doc.units.len();
    let words = query.words.len() as u32;
    let mut hits: Vec<Vec<u32>> = vec![Vec::new(); query.exact.len()];
    for &(u, term) in matches {
        if let Some(h) = term
            .checked_sub(words)
            .and_then(|t| hits.get_mut(t as usize))
        {
            h.push(u);
        }
    }
    let mut lift = vec![0.0f32; n];
    for h in hits
        .iter()
        .filter(|h| !h.is_empty() && h.len() <= MAX_NAMING_ENTRIES)
    {
        for &u in h {
            let u = u as usize;
            let gain = TRACE_SHARE * query_scores[u];
            let around = u.saturating_sub(LEADING_ENTRIES)..(u + FOLLOWING_ENTRIES + 1).min(n);
            for l in &mut lift[around] {
                *l = l.max(gain);
            }
        }
    }
    for (s, l) in scores.iter_mut().zip(lift) {
        *s += l;
    }
}

/// The exception a long Python trace raised (`KeyError: 'HX-999'`) is a unit of its own under
/// its entry's first line, and what an answer quotes of the entry: it ranks with that line,
/// never below it. Below, it would cost the room of a whole entry of frames to show, and
/// lose to shorter entries, though the line above it was kept.
pub(in super::super) fn raise_raised_exceptions(doc: &Doc<'_>, scores: &mut [f32]) {
    for u in 0..doc.units.len() {
        let unit = &doc.units[u];
        if let Some(head) = unit.parent.get().filter(|&p| p < u)
            && unit.level == Level::Error
            && is_raised_exception(doc.text(u))
        {
            scores[u] = scores[u].max(scores[head]);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::methods::extract::Hints;
    use crate::methods::extract::kinds::log;
    use crate::methods::extract::query::Query;
    use crate::methods::extract::score::score;

    #[test]
    fn what_follows_the_one_entry_naming_a_request_is_its_answer() {
        // A proxy's debug trace: each request is named once, by its id, where it is parsed;
        // what the backend answered comes entries later without the id.
        let mut text = String::new();
        for i in 0..30 {
            let status = if i % 3 == 0 { "409 Conflict" } else { "200 OK" };
            text.push_str(&format!(
                "10:00:{i:02}: recv(5, 32768) returns {}\n\
                 10:00:{i:02}: parse_request(POST /reserve, X-Request-Id: req-{i:04})\n\
                 10:00:{i:02}: epoll_wait returns 1\n\
                 10:00:{i:02}: fd = 6 => conn = 0\n\
                 10:00:{i:02}: copy_down: recv(6, 32768) returns {}\n\
                 10:00:{i:02}: {}: HTTP/1.1 {status}\n\
                 10:00:{i:02}: close_conn: closing connection 0\n",
                200 + i,
                100 + i,
                100 + i,
            ));
        }
        let doc = log::build(&text);
        let query = Query::from_hints(
            &Hints::new().with_query("what did the backend answer to request req-0012?"),
        );
        let scores = score(&doc, query.as_ref());
        let answer = (0..doc.units.len())
            .find(|&u| doc.text(u).contains(": 112: HTTP/1.1"))
            .unwrap();
        let other_answers = (0..doc.units.len())
            .filter(|&u| u != answer && doc.text(u).contains("HTTP/1.1"))
            .map(|u| scores[u])
            .fold(f32::MIN, f32::max);
        assert!(
            scores[answer] > other_answers,
            "{} <= {other_answers}",
            scores[answer]
        );
    }

    #[test]
    fn the_exception_a_long_trace_raised_ranks_with_its_entry() {
        // An asyncio server's log: each failed message logs a long trace of framework frames,
        // the exception last.
        let mut text = String::new();
        for i in 0..6 {
            text.push_str(&format!(
                "2026-11-29 22:47:5{i}.596 ERROR   [asyncio] Exception in callback process()\n\
                 Traceback (most recent call last):\n"
            ));
            for f in 0..12 {
                text.push_str(&format!(
                    "  File \"/usr/lib/python3/dist-packages/ws/protocol.py\", line {}, in step{f}\n    self.step{}()\n",
                    100 + f,
                    f + 1
                ));
            }
            text.push_str(&format!("KeyError: 'HX-{i}'\n"));
            for k in 0..20 {
                text.push_str(&format!(
                    "2026-11-29 22:47:5{i}.7{k:02} DEBUG   [ws] frame {k} received from peer\n"
                ));
            }
        }
        let doc = log::build(&text);
        let query = Query::from_hints(&Hints::new().with_query("which exceptions were raised?"));
        let scores = score(&doc, query.as_ref());
        let raised = (0..doc.units.len())
            .find(|&u| doc.text(u) == "KeyError: 'HX-3'")
            .expect("the exception is a unit of its own");
        let head = doc.units[raised].parent.get().expect("under its entry");
        assert!(doc.text(head).contains("Exception in callback"));
        assert!(
            scores[raised] >= scores[head],
            "{} < {}",
            scores[raised],
            scores[head]
        );
    }

    #[test]
    fn a_trace_retried_word_for_word_yields_to_distinct_exceptions() {
        // A music server's log: every retry of one stream logs the same connection failure
        // through a long trace; a few calls raise their own validation errors once each.
        let trace = |text: &mut String, raised: &str| {
            text.push_str("Traceback (most recent call last):\n");
            for f in 0..8 {
                text.push_str(&format!(
                    "  File \"/usr/lib/python3/dist-packages/app/mod{f}.py\", line {}, in f{f}\n    g{f}()\n",
                    10 + f
                ));
            }
            text.push_str(raised);
            text.push('\n');
        };
        let mut text = String::new();
        for i in 0..20 {
            text.push_str(&format!(
                "DEBUG    2026-11-30 08:51:{i:02},616 [StreamBackend] app.http\n  Download exception details\n"
            ));
            trace(
                &mut text,
                "requests.exceptions.ConnectionError: Max retries exceeded with url: /radio/harbor.mp3",
            );
            text.push_str(&format!(
                "WARNING  2026-11-30 08:51:{i:02},617 [Core] app.tracklist\n  Track is not playable: /radio/harbor.mp3\n"
            ));
            let distinct = [
                "Expected a boolean, not 'yes'",
                "Expected an integer, not 'abc'",
                "Expected a list of URIs, not 'notalist'",
                "start must be smaller than end",
            ];
            if i % 5 == 2 {
                text.push_str(&format!(
                    "INFO     2026-11-30 08:51:{i:02},630 [Core] pykka\n  Exception returned to caller:\n"
                ));
                trace(
                    &mut text,
                    &format!("app.exceptions.ValidationError: {}", distinct[i / 5]),
                );
            }
        }
        let doc = log::build(&text);
        let query = Query::from_hints(&Hints::new().with_query(
            "Which calls raised exceptions, with what messages? Why was the radio stream not played?",
        ));
        let scores = score(&doc, query.as_ref());
        let mut retries: Vec<f32> = (0..doc.units.len())
            .filter(|&u| {
                doc.text(u)
                    .starts_with("requests.exceptions.ConnectionError")
            })
            .map(|u| scores[u])
            .collect();
        retries.sort_by(|a, b| b.total_cmp(a));
        let distinct = (0..doc.units.len())
            .filter(|&u| doc.text(u).starts_with("app.exceptions.ValidationError"))
            .map(|u| scores[u])
            .fold(f32::MAX, f32::min);
        // The first retry and the last may stand for the run; the third is a repeat.
        assert!(distinct > retries[2], "{distinct} <= {:?}", &retries[..4]);
    }
}
