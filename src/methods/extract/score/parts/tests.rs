use super::*;
use crate::methods::extract::Hints;
use crate::methods::extract::detect::ContentKind;
use crate::methods::extract::kinds::{lines, markdown};
use crate::methods::extract::score::score;

#[test]
fn the_repeated_subsection_the_query_names_is_read_under_the_entry_it_names() {
    // A reference: every function has its synopsis, a description, and return values.
    let mut text = String::from("# Reference\n\n");
    for (f, codes) in [
        (
            "pam_start",
            ["PAM_ABORT", "PAM_BUF_ERR", "PAM_SUCCESS", "PAM_SYSTEM_ERR"],
        ),
        (
            "pam_chauthtok",
            [
                "PAM_AUTHTOK_ERR",
                "PAM_AUTHTOK_LOCK_BUSY",
                "PAM_SUCCESS",
                "PAM_TRY_AGAIN",
            ],
        ),
        (
            "pam_end",
            ["PAM_BUF_ERR", "PAM_SUCCESS", "PAM_SYSTEM_ERR", "PAM_ABORT"],
        ),
        (
            "pam_open_session",
            ["PAM_ABORT", "PAM_BUF_ERR", "PAM_SUCCESS", "PAM_SESSION_ERR"],
        ),
    ] {
        text.push_str(&format!(
            "## A call\n\nint {f}(pam_handle_t *pamh, int flags);\n\n### Description\n\n\
             The {f} function does its part of the work.\n\n### Return values\n\n"
        ));
        for code in codes {
            text.push_str(&format!(
                "#### {code}\n\nWhat {code} means for the caller.\n\n"
            ));
        }
    }
    let doc = markdown::build(text.as_str().into(), ContentKind::Markdown);
    let q =
        Query::from_hints(&Hints::new().with_query("which return codes can pam_chauthtok give?"));
    let s = score(&doc, q.as_ref());
    let at = |t: &str| (0..doc.units.len()).find(|&i| doc.text(i) == t).unwrap();
    // PAM_SUCCESS of pam_chauthtok's return values, over pam_end's.
    let success: Vec<usize> = (0..doc.units.len())
        .filter(|&i| doc.text(i) == "#### PAM_SUCCESS")
        .collect();
    assert!(s[success[1]] > s[success[2]] + 1.0, "{s:?}");
    assert!(
        s[at("#### PAM_AUTHTOK_LOCK_BUSY")] > s[at("#### PAM_SESSION_ERR")] + 1.0,
        "{s:?}"
    );
}

#[test]
fn the_lead_paragraph_of_a_heading_the_query_names_is_raised() {
    let text = "# Methods\n\n## env_clear\n\nClears all variables.\n\n## env_remove\n\nRemoves a variable.\n";
    let doc = markdown::build(text.into(), ContentKind::Markdown);
    let q = Query::from_hints(&Hints::new().with_query("what does env_clear do?"));
    let s = score(&doc, q.as_ref());
    let at = |t: &str| (0..doc.units.len()).find(|&i| doc.text(i) == t).unwrap();
    assert!(
        s[at("Clears all variables.")] > s[at("Removes a variable.")] + 1.0,
        "{s:?}"
    );
}

#[test]
fn every_paragraph_of_a_short_section_the_query_names_gains_from_its_heading() {
    let text = "# Module\n\n## COLOUR_MODE\n\nBy default the fetch base dir is chosen by the tool.\n\n\
                ## FETCH_BASE_DIR\n\nThe directory under which content is collected.\n\n\
                In most cases the saved details say nothing of it.\n\n\
                It is best left to the module.\n\n\
                The default location is build/_deps for every project.\n";
    let doc = markdown::build(text.into(), ContentKind::Markdown);
    let q = Query::from_hints(&Hints::new().with_query("what is the default FETCH_BASE_DIR?"));
    let s = score(&doc, q.as_ref());
    let unit = |start: &str| (0..doc.units.len()).find(|&u| doc.text(u).starts_with(start));
    let fourth = unit("The default location").expect("the fourth paragraph");
    let other = unit("By default the fetch").expect("the other section's paragraph");
    // The other section's paragraph holds more of the query's words; the fourth paragraph
    // of the named section still ranks clearly above it.
    assert!(s[fourth] > s[other] + 2.0, "{} vs {}", s[fourth], s[other]);
}

#[test]
fn the_subsections_of_a_release_the_query_names_gain_from_it() {
    let mut text = String::from("# Changelog\n\n");
    let names = ["alpha", "bravo", "charlie", "delta", "echo"];
    for (minor, name) in (15..20).rev().zip(names) {
        text.push_str(&format!(
            "## v0.{minor}.0\n\n### Bugfixes\n\n- Fixed the {name} pager when the \
             terminal is narrow\n\n### Other\n\n- Bumped the minimum compiler to \
             the {name} release\n\n"
        ));
    }
    // v0.19.0 holds alpha, v0.18.0 bravo.
    assert_ranks_above(
        text,
        "which bugs were fixed in v0.18.0, and what did it bump?",
        ("- Fixed the bravo", "- Fixed the charlie"),
        2.0,
    );
}

/// Scores the markdown `text` for `query` and checks that the unit starting with
/// `units.0` scores above the one starting with `units.1` by more than `margin`.
fn assert_ranks_above(text: String, query: &str, units: (&str, &str), margin: f32) {
    let doc = markdown::build(text.into(), ContentKind::Markdown);
    let q = Query::from_hints(&Hints::new().with_query(query));
    let s = score(&doc, q.as_ref());
    let unit = |start: &str| {
        (0..doc.units.len())
            .find(|&u| doc.text(u).starts_with(start))
            .unwrap_or_else(|| panic!("no unit starts with {start}"))
    };
    let (above, below) = (unit(units.0), unit(units.1));
    assert!(s[above] > s[below] + margin, "{} vs {}", s[above], s[below]);
}

#[test]
fn every_entry_of_a_long_release_the_query_names_gains_from_it() {
    // Releases with no subsections, each a list longer than one block holds (a changelog
    // of one-line entries).
    let mut text = String::from("# Changelog\n\n");
    let sites = ["alpha", "bravo", "charlie", "delta", "echo"];
    for (minor, site) in (15..20).rev().zip(sites) {
        text.push_str(&format!("## 2022.{minor:02}.01\n\n"));
        for entry in 0..45 {
            let part = [
                "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
            ][entry / 5];
            let step = ["a", "b", "c", "d", "e"][entry % 5];
            text.push_str(&format!(
                "- Fix the cache of the {site} extractor, {part} {step}\n"
            ));
        }
        text.push('\n');
    }
    // The last entry of the named release, far past the first few its heading lends to;
    // 2022.18.01 holds bravo, 2022.17.01 charlie.
    assert_ranks_above(
        text,
        "what changed in release 2022.18.01 about the cache?",
        (
            "- Fix the cache of the bravo extractor, nine e",
            "- Fix the cache of the charlie extractor, nine e",
        ),
        1.0,
    );
}

#[test]
fn the_release_of_the_entry_that_answers_holds_the_rest_of_the_answer() {
    // Every release changes something about the pager; one adds the tracing function,
    // under another heading of the release.
    let mut text = String::from("# Changelog\n\n");
    for minor in (10..20).rev() {
        text.push_str(&format!(
            "## 1.{minor}.0 - 2024-0{}-01\n\n### Added\n\n",
            minor % 9 + 1
        ));
        if minor == 14 {
            text.push_str("- Add trace() function for recording external calls\n");
        }
        text.push_str(&format!(
            "- Add entry {minor} to the index\n\n### Changed\n\n\
             - Note {minor}: the pager now wraps long lines\n\n"
        ));
    }
    assert_ranks_above(
        text,
        "Which release added the function for recording external calls, and what did that \
         release change about the pager?",
        ("- Note 14: the pager", "- Note 15: the pager"),
        1.0,
    );
}

#[test]
fn a_matching_title_lends_to_its_first_units_not_to_every_section_under_it() {
    // The query names the changelog, whose title heads every release: each release
    // heading comes after the last one's entries, and is no lead of the title's.
    let mut text = String::from("# Changelog\n\nAll notable changes.\n\n");
    for minor in (1..30).rev() {
        text.push_str(&format!(
            "## 1.{minor}.0 - 2024-01-{minor:02}\n\n### Changed\n\n- Tidy module {minor}\n\n"
        ));
        if minor == 14 {
            text.push_str(
                "- Use cache dir for temporary files\n\n### Added\n\n\
                 - Add trace() function for recording external calls\n\n",
            );
        }
    }
    assert_ranks_above(
        text,
        "From the changelog: which version added the function for recording external \
         calls, and what else did that version change?",
        ("- Use cache dir", "## 1.3.0"),
        0.5,
    );
}

#[test]
fn the_entries_a_matching_paragraph_introduces_gain_from_it() {
    let text = "# Manual\n\n## Programming interface\n\nThe package exposes a Server \
                constructor. It takes an object of options; these are recognized:\n\n\
                #### defs (array)\n\nThe definitions to load.\n\n\
                #### plugins (object)\n\nThe plugins to load, by name.\n\n\
                #### timeout (number)\n\nHow long to wait for a file, in milliseconds.\n\n\
                ## Editors\n\nThe editor plugins pass their own settings to the server.\n";
    let doc = markdown::build(text.into(), ContentKind::Markdown);
    let q = Query::from_hints(
        &Hints::new().with_query("which options does the Server constructor take?"),
    );
    let s = score(&doc, q.as_ref());
    let unit = |start: &str| (0..doc.units.len()).find(|&u| doc.text(u).starts_with(start));
    let entry = unit("How long to wait").expect("the third option's text");
    let other = unit("The editor plugins").expect("another section's paragraph");
    assert!(s[entry] > s[other] + 1.0, "{} vs {}", s[entry], s[other]);
}

#[test]
fn a_rare_query_word_gets_its_best_unit_among_the_first() {
    let q = Query::from_hints(&Hints::new().with_query(
        "how does the handler back off, and which value rotates on Mondays in this case?",
    ))
    .unwrap();
    let word = |w: &str| q.word_index(w).expect("a query word") as u32;
    let text: String = (0..40)
        .map(|u| format!("line {u:02} of the handler\n"))
        .collect();
    let doc = lines::build(&text, lines::Style::Text);
    assert_eq!(doc.units.len(), 40);
    // 40 units, best first; "monday" is held by units 35 and 37 only, "handler" by every
    // unit, and "case" (a word of the question's own) by unit 39 alone.
    let mut scores: Vec<f32> = (0..40).map(|u| 40.0 - u as f32).collect();
    let mut matches: Vec<(u32, u32)> = (0..40).map(|u| (u, word("handler"))).collect();
    matches.extend([
        (35, word("monday")),
        (37, word("monday")),
        (39, word("cas")),
    ]);
    raise_rare_word_units(&doc, &q, &matches, &mut scores);
    let rank = |u: usize| scores.iter().filter(|&&x| x > scores[u]).count();
    assert!(rank(35) <= RARE_WORD_RANK, "{}", rank(35));
    assert!(rank(35) > SOLE_WORD_RANK, "{}", rank(35));
    // Only the best holder is raised, and a short word raises nothing.
    assert!(rank(37) > RARE_WORD_RANK);
    assert!(rank(39) > RARE_WORD_RANK);
}

#[test]
fn a_long_unit_alone_holding_a_query_word_is_raised_by_its_score_per_length() {
    // "turchese" names one long record; "heading" is in every short line.
    let q = Query::from_hints(
        &Hints::new().with_query("where is the vessel TURCHESE heading, per its record?"),
    )
    .unwrap();
    let word = |w: &str| q.word_index(w).expect("a query word") as u32;
    let long = format!("vessel 24760 name TURCHESE {}\n", "pgn 129794 ".repeat(90));
    let mut text: String = (0..39)
        .map(|u| format!("heading {u:02} short line\n"))
        .collect();
    text.push_str(&long);
    let doc = lines::build(&text, lines::Style::Text);
    assert_eq!(doc.units.len(), 40);
    let mut scores: Vec<f32> = (0..40).map(|u| 40.0 - u as f32).collect();
    let mut matches: Vec<(u32, u32)> = (0..39).map(|u| (u, word("head"))).collect();
    matches.push((39, word("turches")));
    raise_rare_word_units(&doc, &q, &matches, &mut scores);
    // Among the first few as the budget is filled: by score per length.
    let cost: Vec<f32> = doc
        .units
        .iter()
        .map(|u| length_cost(u.span.len()))
        .collect();
    let value = |u: usize| scores[u] / cost[u];
    let rank = (0..40).filter(|&u| value(u) > value(39)).count();
    assert!(cost[39] > 2.0, "{}", cost[39]);
    assert!(rank <= SOLE_WORD_RANK, "{rank}");
}
