use super::*;

#[test]
fn the_word_hasher_tells_apart_words_that_differ_only_by_trailing_zero_bytes() {
    use std::hash::BuildHasher;
    let hash = |bytes: &[u8]| WordHash::default().hash_one(bytes);
    assert_ne!(hash(b"ab"), hash(b"ab\0"));
    assert_ne!(hash(b"abcdefgh"), hash(b"abcdefgh\0"));
    assert_ne!(hash(b"replication"), hash(b"replicated"));
}

fn query(text: &str) -> Query {
    Query::from_hints(&Hints::new().with_query(text)).unwrap_or_default()
}

#[test]
fn identifiers_versions_and_paths_are_exact_terms() {
    let q = query(
        "Which packages pull in semver@5.7.2, and where is BinaryDetection::quit in src/searcher/glue.rs?",
    );
    for term in [
        "semver@5.7.2",
        "binarydetection::quit",
        "src/searcher/glue.rs",
    ] {
        assert!(
            q.exact.iter().any(|e| e == term),
            "{term} missing from {:?}",
            q.exact
        );
    }
    assert!(!q.exact.iter().any(|e| e == "packages"));
}

#[test]
fn a_hyphenated_name_and_number_is_also_an_exact_term_run_together() {
    let q = query("Which enum value selects AES-256, and is SHA-512 offered?");
    assert!(q.mentions("GCRY_CIPHER_AES256 = 9,"));
    assert!(q.mentions("  sha512sum"));
    assert!(!q.mentions("GCRY_CIPHER_AES192 = 8,"));
    assert_eq!(run_together("x86-64"), None);
    assert_eq!(run_together("UTF-8").as_deref(), Some("utf8"));
}

#[test]
fn adjacent_words_name_the_key_they_abbreviate_to() {
    let q = query("Give each one's package URL, its process id and the current working directory.");
    for key in ["purl", "pid", "cwd"] {
        assert!(q.names_key_word(key), "{key}");
    }
    // Not across punctuation or stopwords, nor shorter than three letters.
    assert!(!q.names_key_word("upid") && !q.names_key_word("iid"));
    assert!(!q.names_key_word("pu") && !q.names_key_word("opurl"));
    // Two long words, each clipped to three letters: a data set's column.
    let q = query("Which seats had a Liberal incumbent, and what is the population density?");
    assert!(q.names_key_word("libinc") && q.names_key_word("popden"));
    assert!(!q.names_key_word("hadlib") && !q.names_key_word("seahad"));
}

#[test]
fn short_forms_of_words_name_the_keys_that_write_them() {
    // A firewall log's `dest_port` and `proto` for "destination ports" and "protocol".
    let q = query("Which destination ports and protocol did the blocked packets use?");
    for key in ["dest", "proto", "port"] {
        assert!(q.word_index(key).is_some(), "{key}");
    }
    // A system monitor's `freemem` and `totmem` for "free memory": the compound's short form.
    let q = query("What was free memory at the fifth sample?");
    assert!(q.names_key_word("freemem"), "freemem");
    // "source" is no `src`: every path of a build names it.
    let q = query("Which source file failed?");
    assert!(q.word_index("src").is_none());
}

#[test]
fn quoted_strings_are_exact_terms() {
    let q = query("which hit 'Unexpected exception causing shutdown' and \"ROOT LOGIN\"?");
    assert!(
        q.exact
            .iter()
            .any(|e| e == "unexpected exception causing shutdown")
    );
    assert!(q.exact.iter().any(|e| e == "root login"));
}

#[test]
fn apostrophes_inside_words_do_not_quote() {
    assert!(quoted_strings("ripgrep's FAQ and it's fine").is_empty());
}

#[test]
fn stopwords_are_not_query_words() {
    let q = query("Which of these is the failed run?");
    assert!(q.words.contains_key("fail"));
    assert!(!q.words.contains_key("which") && !q.words.contains_key("the"));
}

#[test]
fn a_word_matches_the_short_form_identifiers_write_it_in() {
    let q = Query::from_hints(
        &Hints::new()
            .with_query("what minimum response size is compressed, and which temporary directory?"),
    )
    .unwrap();
    // `MIN_LENGTH`, `tmp_dir`.
    assert_eq!(q.word_index("min"), q.word_index("minimum"));
    assert!(q.word_index("min").is_some());
    assert_eq!(q.word_index("tmp"), q.word_index("temporary"));
    assert_eq!(q.word_index("dir"), q.word_index("directory"));
    // Not a word the query does not use.
    assert!(q.word_index("max").is_none());
}

#[test]
fn a_negated_word_is_also_the_one_word_an_output_writes_for_it() {
    let q = query(
        "Which imported packages are not declared as dependencies, and which declared \
         dependencies are never imported?",
    );
    // `undeclared_deps`: a word of its own, not the word it negates, and the short form.
    let undeclared = q.word_index("undeclar").expect("the negated form");
    assert_ne!(Some(undeclared), q.word_index("declar"));
    assert_eq!(q.word_index("dep"), q.word_index("dependency"));
    assert!(q.word_index("dep").is_some());
    // `unused_deps`: what a dependency checker calls an import never made.
    assert_eq!(q.word_index("unus"), q.word_index("unimport"));
    assert!(q.word_index("unus").is_some());
    // A negation ends at its clause, and is of a word.
    assert!(
        query("which tests are not, in the end, flaky?")
            .word_index("unend")
            .is_none()
    );
    assert!(query("not 1.2.3").word_index("un1").is_none());
}

#[test]
fn decimal_numbers_are_exact_not_word_fragments() {
    let q = query("Which other pause exceeded 0.25 s, and what changed in 1.2.3?");
    assert!(q.exact.iter().any(|e| e == "0.25"));
    assert!(!q.words.contains_key("25"));
    assert!(q.words.contains_key("paus") || q.words.contains_key("pause"));
    assert!(is_decimal_number("1.5s") && is_decimal_number("12.5%"));
    assert!(!is_decimal_number("3.10") && !is_decimal_number("1.2.3"));
}

#[test]
fn what_the_query_sets_aside_is_not_searched_for() {
    let q = query(
        "Besides the many line-length and inline-HTML hits, what one-off problems were \
             reported: the hard tab, and which HTML element?",
    );
    let has = |w: &str| {
        let mut found = false;
        for_each_word(w, &mut String::new(), |w| found |= q.words.contains_key(w));
        found
    };
    assert!(!has("inline") && !has("length"), "{:?}", q.words);
    // Used outside the aside as well, a word stays.
    assert!(
        has("html") && has("tab") && has("problems"),
        "{:?}",
        q.words
    );
    // A word that only looks like an opening is no aside.
    let q = query("Apart from the asserts and try/except/pass, what is HIGH?");
    assert!(!q.words.contains_key("assert") && !q.words.contains_key("asserts"));
    assert!(q.words.contains_key("high"), "{:?}", q.words);
    assert_eq!(without_exclusions("which other than usual"), "which");
    assert_eq!(
        without_exclusions("Leaving aside the must_use / format-args noise, which warn?"),
        ", which warn?"
    );
    // An aside that lists its items runs on to the list's last one.
    assert_eq!(
        without_exclusions("Which are NOT under the MIT, ISC, Apache-2.0 or BSD licenses?"),
        "Which are ?"
    );
    assert_eq!(
        without_exclusions("besides lint, which crate failed, and why?"),
        "which crate failed, and why?".replace("which", ", which")
    );
    // A relative clause sets a kind of item aside; a negated verb sets nothing aside.
    assert_eq!(
        without_exclusions("which problems that are not passive-voice warnings? Give each"),
        "which problems ? Give each"
    );
    assert_eq!(
        without_exclusions("why is the build not passing?"),
        "why is the build not passing?"
    );
}

#[test]
fn the_words_near_a_superlative_are_what_the_query_ranks_by() {
    let ranks_by = |q: &Query, word: &str| q.ranks(word);
    let q = query("Which input contributes the most bytes, and what is Vatican City's area?");
    assert!(ranks_by(&q, "bytes"), "{:?}", q.ranked);
    assert!(!ranks_by(&q, "area"), "{:?}", q.ranked);
    let q = query("which cars have horsepower of at least 120, and the heaviest (weight)?");
    assert!(ranks_by(&q, "weight"), "{:?}", q.ranked);
    assert!(!ranks_by(&q, "horsepower"), "{:?}", q.ranked);
    // "How high" asks for a peak as "the highest" does.
    let q = query("what crashed, and how high did the indexer's RSS get before a restart?");
    assert!(ranks_by(&q, "rss"), "{:?}", q.ranked);
    assert!(q.ends.high && !q.ends.low);
    assert!(!ranks_by(&query("how did the RSS get so high?"), "rss"));
}

#[test]
fn a_key_running_query_words_together_is_named_by_them() {
    let q = query("which URLs failed, and with what error message?");
    let mut buf = String::new();
    let names = |key: &str, buf: &mut String| {
        let mut named = true;
        for_each_word(key, buf, |w| named &= q.names_key_word(w));
        named
    };
    assert!(names("errormsg", &mut buf));
    assert!(names("url", &mut buf));
    assert!(!names("errorcount", &mut buf));
    assert!(!names("filename", &mut buf));
}

#[test]
fn what_the_query_asks_records_to_lack_names_their_empty_fields() {
    let q = query("Which component declares no license at all, and which is GPL?");
    assert!(q.asks_lacking("licenses[].license.id"));
    assert!(!q.asks_lacking("description"));
    assert!(!query("which license is the most common?").asks_lacking("license"));
}

#[test]
fn a_threshold_on_a_number_bounds_the_words_before_it() {
    let q =
        query("which rows have impossible percentages (graduation rate or PhD share above 100)?");
    let bound = q.bound_on("Grad.Rate").expect("the rate is bounded");
    assert!(bound.above && bound.value == 100.0);
    assert!(bound.is_passed_by(118.0) && !bound.is_passed_by(100.0));
    assert!(q.bound_on("PhD").is_some());
    assert!(q.bound_on("Expend").is_none());
    let under = query("which requests took less than 5ms?");
    assert!(under.bound_on("took").is_some_and(|b| !b.above));
    // A threshold word with no number after it bounds nothing.
    assert!(query("which jobs ran over budget?").bounds.is_empty());
}

#[test]
fn a_column_s_short_form_is_named_next_to_a_superlative() {
    let q = query("which rows have the highest instructional expenditure per student?");
    assert!(q.ranks("Expend"));
    assert!(!q.ranks("Exp"), "too short to tell");
    assert!(!q.ranks("Outstate"));
}

#[test]
fn superlatives_choose_the_end_of_a_column() {
    let longest = query("which GC pause took the longest?");
    assert!(longest.ends.high && !longest.ends.low);
    let smallest = query("the smallest file under lib/");
    assert!(!smallest.ends.high && smallest.ends.low);
    assert_eq!(
        query("the slowest and the fastest run").ends,
        Ends::default()
    );
    assert_eq!(query("which crate failed?").ends, Ends::default());
    // A bound is not a superlative: "at least 120" asks for the high end.
    let bound = query("which cars have at least 120 horsepower, and the highest mpg?");
    assert!(bound.ends.high && !bound.ends.low);
}

#[test]
fn a_long_word_matches_its_root() {
    let q = query("Which Japanese and European cars?");
    let mut buf = String::new();
    let mut index = |w: &str| {
        let mut found = None;
        for_each_word(w, &mut buf, |w| found = q.word_index(w));
        found
    };
    assert!(index("Japan").is_some());
    assert!(index("Europe").is_some());
    assert!(index("Japanese").is_some());
    assert!(index("Jap").is_none());
    assert!(index("cards").is_none());
}

#[test]
fn tool_arguments_count_as_terms() {
    let args = serde_json::json!({"pattern": "detect_binary", "path": "crates/"});
    let q = Query::from_hints(&Hints::new().with_arguments(&args)).unwrap_or_default();
    assert!(q.exact.iter().any(|e| e == "detect_binary"));
    assert!(q.words.contains_key("binary"));
}

#[test]
fn a_query_asks_about_the_end_by_a_place_or_a_word_for_last() {
    use super::phrases::asks_about_the_end;
    for asks in [
        "what identified itself with a non-standard client version at the end?",
        "and what did bob download at the very end?",
        "give the final pass/fail counts",
        "under which pid did the last nsd instance start?",
        "what is the most recent release?",
    ] {
        assert!(asks_about_the_end(asks), "{asks}");
    }
    for does_not in [
        "which commit last changed `fn owner`?",
        "which requests failed, and why?",
        "what does the end-of-line option default to?",
    ] {
        assert!(!asks_about_the_end(does_not), "{does_not}");
    }
}

#[test]
fn status_classes_joined_by_a_slash_are_each_asked() {
    let query =
        Query::from_hints(&Hints::new().with_query("which requests did not succeed (4xx/5xx)?"))
            .unwrap();
    assert!(query.asks_status(404) && query.asks_status(503));
    assert!(!query.asks_status(200) && !query.asks_status(304));
}

#[test]
fn a_key_of_short_forms_run_together_is_ranked_by_their_words() {
    let query = query(
        "which district has the highest average test score, and which the smallest total enrollment?",
    );
    assert!(query.ranks("testscr") && query.ranks("enrltot"));
    // A short form of one ranked word beside one of none, or of one word twice, is not.
    assert!(!query.ranks("mathscr") && !query.ranks("readscr") && !query.ranks("tottot"));
}

#[test]
fn a_number_with_or_more_or_after_at_least_bounds_the_words_after_it() {
    let q = query("which players have 300 or more career home runs? Give each salary.");
    let bound = q.bound_on("hruns").expect("home runs are bounded");
    assert!(bound.above && bound.value == 300.0);
    assert!(bound.is_passed_by(300.0) && !bound.is_passed_by(299.0));
    assert!(q.bound_on("salary").is_none());
    assert!(q.word_index("300").is_none());
    // Of two columns naming its words, the one naming more is the one it means.
    assert!(q.bound_words_named(bound, "hruns") > q.bound_words_named(bound, "runs"));
    let q = query("list the jobs with at most 2 retries, and their owners");
    let bound = q.bound_on("retries").expect("retries are bounded");
    assert!(!bound.above && bound.is_passed_by(2.0) && !bound.is_passed_by(3.0));
    assert!(q.bound_on("owners").is_none());
    // With nothing after it, the words before name what it bounds.
    let q = query("which students have a final score of at least 90?");
    assert!(q.bound_on("final_score").is_some_and(|b| b.above));
    // The unit between the number and "or more" is what it bounds.
    let q = query("which duplicated blocks are the longest (roughly 15 lines or more)?");
    let bound = q.bound_on("lines").expect("lines are bounded");
    assert!(bound.above && bound.is_passed_by(15.0) && !bound.is_passed_by(14.0));
    let q = query("list the tasks that took 3 retries or fewer");
    assert!(q.bound_on("retries").is_some_and(|b| !b.above));
}

#[test]
fn non_zero_bounds_the_words_after_it_above_zero() {
    let q = query("which rules have non-zero packet counters and how many bytes did each see?");
    let bound = q.bound_on("packets").expect("packets are bounded");
    assert!(bound.above && bound.is_passed_by(1.0) && !bound.is_passed_by(0.0));
    assert!(q.bound_on("bytes").is_none());
    assert!(
        query("which services have nonzero restarts")
            .bound_on("restarts")
            .is_some()
    );
}

#[test]
fn a_spelled_out_name_matches_the_initials_values_write_for_it() {
    let q = query("Which brands carry a non-commercial Creative Commons licence for their icon?");
    // `CC-BY-NC-4.0` is what the data writes.
    assert!(q.word_index("nc").is_some() && q.word_index("nc") == q.word_index("commercial"));
    assert!(q.word_index("cc").is_some() && q.word_index("cc") == q.word_index("common"));
    // Initials that are a word of their own, and a title's, are none.
    let q = query("When did Brendan Eich step down, and what is \"Debian Stable Release Key\"?");
    assert!(q.word_index("be").is_none());
    assert!(q.word_index("srk").is_none() && q.word_index("rk").is_none());
}

#[test]
fn a_threshold_s_whole_number_bounds_a_column_and_is_not_a_word_to_find() {
    let q = query("list every inspection that scored below 72 points, and the year");
    assert!(q.word_index("72").is_none());
    assert!(q.bound_on("inspection_score").is_some());
    // A number with a point may be a version the output writes.
    let q = query("which httpx does it require on Python below 3.14?");
    assert!(q.exact.iter().any(|e| e == "3.14") || q.word_index("3.14").is_some());
}

#[test]
fn the_words_that_describe_the_whole_output_are_not_words_to_find() {
    let q = query(
        "From this restaurant inspection table, list every business that scored below 72 points.",
    );
    assert!(q.word_index("restaurant").is_none());
    assert!(q.word_index("table").is_none());
    assert!(q.word_index("point").is_some());
    // The description still tells which column a threshold bounds.
    assert!(q.bound_on("inspection_score").is_some());
    // "This" of anything but the output keeps its words.
    let q = query("which restaurant scored lowest, and what does this chain sell?");
    assert!(q.word_index("restaurant").is_some());
    let q = query("Which of these is the failed run?");
    assert!(q.word_index("run").is_some());
}

#[test]
fn a_refusal_is_found_by_any_of_the_words_logs_write_for_it() {
    let q = query("which logins were refused, and for which accounts?");
    let refused = q.word_index("refus");
    assert!(refused.is_some());
    for word in ["reject", "deni", "deny", "declin"] {
        assert_eq!(q.word_index(word), refused, "{word}");
    }
    assert!(
        query("which logins succeeded?")
            .word_index("reject")
            .is_none()
    );
}

#[test]
fn a_mutation_report_s_words_for_survived_and_killed_mean_the_same() {
    let q = query("Which mutants survived, and which were killed by the tests?");
    let index = |q: &Query, word: &str| {
        let mut stemmed = word.to_owned();
        crate::methods::extract::terms::stem(&mut stemmed);
        q.word_index(&stemmed)
    };
    for (word, asked) in [("MISSED", "survived"), ("caught", "killed")] {
        let word = word.to_lowercase();
        assert!(index(&q, &word).is_some(), "{word}");
        assert_eq!(index(&q, &word), index(&q, asked), "{word}");
    }
    assert!(index(&query("which tests ran?"), "missed").is_none());
}

#[test]
fn a_quoted_operator_is_an_exact_term_with_its_quotes() {
    let q = query("which conflicts involve the operator '^' after '%', and `<`?");
    for term in ["'^'", "'%'", "`<`"] {
        assert!(q.exact.iter().any(|e| e == term), "{term} in {:?}", q.exact);
    }
}

#[test]
fn the_longest_lines_are_ranked_by_their_characters() {
    let q = query("which three lines are the longest it flags?");
    assert!(q.ranks_implied("characters"));
    assert!(q.ranks_implied("length"));
    assert!(!query("which request was the slowest?").ranks_implied("characters"));
}

#[test]
fn a_threshold_written_with_thousands_separators_is_one_number() {
    let q = query("List every airport whose altitude is above 7,000 feet, highest first.");
    let bound = q.bound_on("Altitude").expect("a bound on the altitude");
    assert_eq!(bound.value, 7000.0);
    assert!(bound.above);
    // The bound is not a string to find in the rows.
    assert!(
        !q.words.keys().any(|w| w.contains("000")),
        "{:?}",
        q.words.keys()
    );
    assert!(query("files of more than 1,250,000.5 bytes").bounds[0].value == 1_250_000.5);
    // A list of numbers is not one.
    assert!(query("altitude above 7,00 feet").bounds.is_empty());
}

#[test]
fn a_negative_threshold_keeps_its_sign() {
    let q = query("Which companies lost more than 10 billion dollars (profits below -10)?");
    let bound = q.bound_on("profits").expect("a bound on the profits");
    assert_eq!(bound.value, -10.0);
    assert!(!bound.above);
    assert_eq!(
        query("a temperature under −5.5 degrees").bounds[0].value,
        -5.5
    );
    // A dash between words is no sign: "5 - 10" bounds nothing as -10.
    assert_eq!(query("scores above 5 - 10").bounds[0].value, 5.0);
}

#[test]
fn two_words_an_output_runs_together_count_as_the_first() {
    let q = query("With what message was ZNC finally shut down, and did its backup time out?");
    // Each counts as its first word, not as a rarer word of its own.
    assert_eq!(q.word_index("shutdown"), q.word_index("shut"));
    assert!(q.word_index("shutdown").is_some());
    assert_eq!(q.word_index("timeout"), q.word_index("tim"));
    assert!(!q.words.contains_key("shutdown"));
    // Not across a clause, nor with a stopword.
    for junk in ["downand", "whatmessag", "messagewa"] {
        assert!(q.word_index(junk).is_none(), "{junk}");
    }
}

#[test]
fn words_only_the_opening_phrase_names_the_output_by_weigh_less() {
    let q = query("From the bzip2 1.0.8 manual: what values does workFactor accept?");
    let weight = |w: &str| {
        let (_, &i) = q.words.iter().find(|(k, _)| k.starts_with(w)).expect(w);
        q.word_weight(i)
    };
    assert_eq!(weight("bzip"), SOURCE_WORD_WEIGHT);
    assert_eq!(weight("manual"), SOURCE_WORD_WEIGHT);
    assert_eq!(weight("accept"), 1.0);
    // A word the question repeats is the question's.
    let q = query("In the Calendar discovery document, which calendar method transfers ownership?");
    assert_eq!(q.word_weight(q.words["calendar"]), 1.0);
    let discovery = q
        .words
        .keys()
        .find(|w| w.starts_with("discover"))
        .expect("a word");
    assert_eq!(q.word_weight(q.words[discovery]), SOURCE_WORD_WEIGHT);
    // An opening that asks, or a sentence of its own, is no source phrase.
    for text in [
        "In which file, and at what line, is the error raised?",
        "Which tests fail: the parser's or the lexer's?",
        "In short. The server logs an error: which one?",
    ] {
        let q = query(text);
        assert!(
            (0..q.words.len()).all(|i| q.word_weight(i) == 1.0),
            "{text}"
        );
    }
}

#[test]
fn a_noun_made_of_a_verb_finds_the_verb() {
    let q = query("which leaves set the advertisement interval?");
    let mut advertise = String::from("advertise");
    crate::methods::extract::terms::stem(&mut advertise);
    assert!(q.word_index(&advertise).is_some(), "{advertise}");
    // A short word ending so is no such noun.
    let q = query("which element is the comment on?");
    assert!(q.word_index("ele").is_none() && q.word_index("com").is_none());
}

#[test]
fn a_key_that_runs_two_query_words_together_is_named_whatever_their_stems() {
    // `code` stems to `cod`: the key's first part is read stemmed too.
    let q = query("Which code units and which zip codes does each entry list?");
    assert_eq!(q.key_words_named("codeunits"), (1, 1));
    assert_eq!(q.key_words_named("zipcodes"), (1, 1));
    assert_eq!(q.key_words_named("codebase"), (0, 1));
}
