use super::column_ends;
use crate::methods::extract::kinds::csv;
use crate::methods::extract::query::Query;
use crate::methods::extract::{Hints, score};

/// The rows of `table` ranked by their score for `query`, best first.
fn ranked_rows(table: &str, query: &str) -> Vec<String> {
    let doc = csv::build(table);
    let q = Query::from_hints(&Hints::new().with_query(query));
    let scores = score::score(&doc, q.as_ref());
    let mut order: Vec<usize> = (1..doc.units.len()).collect();
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
    order.iter().map(|&u| doc.text(u).to_owned()).collect()
}

#[test]
fn a_bound_after_its_number_picks_the_column_naming_most_of_its_words() {
    // `hruns` runs the initial of "home" into "runs": the column "300 or more home runs"
    // bounds, though `runs` names one of its words too and more rows pass 300 there.
    let mut table = String::from("salary,games,runs,hits,hruns\n");
    for i in 0..60 {
        table.push_str(&format!(
            "{},{},{},{},{}\n",
            100_000 + i * 7_919,
            300 + i * 29,
            100 + i * 4,
            400 + i * 31,
            5 + i * 3
        ));
    }
    table.push_str("3375000,2444,1343,2646,414\n225000,2154,196,2105,300\n");
    let rows = ranked_rows(
        &table,
        "which players have 300 or more career home runs? Give their salary and games.",
    );
    let top: Vec<&str> = rows.iter().take(2).map(String::as_str).collect();
    assert!(top.contains(&"3375000,2444,1343,2646,414"), "{rows:?}");
    // At least as many as the bound: 300 itself passes.
    assert!(top.contains(&"225000,2154,196,2105,300"), "{rows:?}");
}

#[test]
fn of_two_columns_a_bound_s_words_name_alike_the_one_named_next_to_it_is_bounded() {
    // "airport" names `AirportID` as much as "altitude" names `Altitude`; the word next to
    // the threshold says which column it bounds. A third of the IDs pass 7,000 as well: read
    // as a bound on them, it would raise those rows as high as the answers.
    let mut table = String::from("AirportID,Name,Altitude\n");
    for i in 0..60 {
        table.push_str(&format!(
            "{},Field {i} Airport,{}\n",
            3000 + i * 100,
            6000 - i * 97
        ));
    }
    table.push_str("21188,Telluride Regional Airport,9070\n21076,Taos Regional Airport,7095\n");
    let rows = ranked_rows(
        &table,
        "Using this airports table, list every airport whose altitude is above 7,000 feet.",
    );
    let top: Vec<&str> = rows.iter().take(2).map(String::as_str).collect();
    assert!(
        top.contains(&"21188,Telluride Regional Airport,9070"),
        "{rows:?}"
    );
    assert!(
        top.contains(&"21076,Taos Regional Airport,7095"),
        "{rows:?}"
    );
    // Next come the highest of the others, not those whose ID passes 7,000.
    assert!(rows[2].starts_with("3000,"), "{rows:?}");
}

#[test]
fn the_rows_past_a_bound_the_query_sets_on_a_column_stand_out() {
    let mut table = String::from("Private,Apps,Outstate,PhD,Grad.Rate\n");
    for i in 0..60 {
        let outstate = 5000 + i * 211;
        table.push_str(&format!(
            "Yes,{},{outstate},{},{}\n",
            1000 + i * 37,
            40 + i % 61,
            50 + i % 51
        ));
    }
    table.push_str("No,529,4860,103,43\nYes,3847,9384,22,118\n");
    let rows = ranked_rows(
        &table,
        "which rows have impossible percentages (graduation rate or PhD share above 100), \
             and which have the highest Outstate?",
    );
    // As high as the highest Outstate: the three answers come first.
    let top: Vec<&str> = rows.iter().take(3).map(String::as_str).collect();
    assert!(top.contains(&"No,529,4860,103,43"), "{rows:?}");
    assert!(top.contains(&"Yes,3847,9384,22,118"), "{rows:?}");
}

#[test]
fn a_column_named_next_to_a_superlative_ranks_its_largest_values_first() {
    let mut table = String::from("country,region,area,population\n");
    for i in 0..40 {
        table.push_str(&format!(
            "Land{i},North,{},{}\n",
            1000 + i * 10,
            5_000_000 - i
        ));
    }
    table.push_str("Vastland,South,17098242,1000\nBigland,South,9984670,2000\n");
    table.push_str("Tinyland,North land,1,300\n");
    // The query's words match one row more than the others; the ranking still puts the
    // largest areas first.
    let rows = ranked_rows(
        &table,
        "which country has the largest area, and Tinyland's?",
    );
    assert!(
        rows[..3].iter().any(|r| r.starts_with("Vastland")),
        "{rows:?}"
    );
    assert!(
        rows[..3].iter().any(|r| r.starts_with("Bigland")),
        "{rows:?}"
    );
    // A column named away from the superlative is not ranked by.
    let rows = ranked_rows(&table, "the largest country? Also give every population.");
    assert!(
        !rows[..2].iter().any(|r| r.starts_with("Land0,")),
        "{rows:?}"
    );
}

#[test]
fn a_compound_column_named_by_its_last_word_is_ranked_when_no_row_holds_a_query_word() {
    // A demographics table whose columns run their words together; no row holds a word
    // of the query, and every column has ends of its own.
    let mut table = String::from("id,county,poptotal,popdensity,percollege,percwhite\n");
    for i in 0..60 {
        table.push_str(&format!(
            "{i},C{i},{},{},{}.5,{}\n",
            20_000 + i * 300,
            100 + (i * 37) % 900,
            10 + i,
            60 + (i * 7) % 40
        ));
    }
    table.push_str("60,KEWEENAW,1701,85,14.5,99\n");
    let rows = ranked_rows(
        &table,
        "which county has the smallest total population, and the highest college share?",
    );
    assert!(rows[..3].iter().any(|r| r.contains("KEWEENAW")), "{rows:?}");
}

#[test]
fn a_rare_value_of_a_column_the_query_names_outranks_rows_that_only_share_its_words() {
    let mut table = String::from("name,license,description\n");
    for i in 0..40 {
        let license = ["MIT", "ISC", "Apache-2.0"][i % 3];
        table.push_str(&format!("pkg{i},{license},helper {i}\n"));
    }
    table.push_str("tweetnacl,Unlicense,crypto\nuri-js,BSD-2-Clause,URI parsing\n");
    let doc = csv::build(&table);
    let q = Query::from_hints(
        &Hints::new().with_query("Which packages have a license other than MIT or ISC?"),
    );
    // One row matches the query best, ten match it less (by other words); the two rare
    // licenses match it by no word.
    let mut query_scores = vec![0.0f32; doc.units.len()];
    query_scores[1] = 10.0;
    query_scores[2..12].fill(4.0);
    let mut scores = query_scores.clone();
    super::add_field_signals(&doc, &query_scores, q.as_ref(), &mut scores);
    let weakest_match = scores[2..12].iter().copied().fold(f32::MAX, f32::min);
    for (u, name) in [(41, "tweetnacl"), (42, "uri-js")] {
        assert!(doc.text(u).starts_with(name));
        assert!(scores[u] > weakest_match, "{name}: {scores:?}");
    }
}

#[test]
fn a_named_column_of_many_values_among_many_more_records_is_still_a_category() {
    // Twenty licenses among 120 crates: most share a few, the rest are each one crate's.
    let mut table = String::from("name,license,description\n");
    for i in 0..100 {
        let license = ["Apache-2.0 OR MIT", "MIT", "MIT OR Unlicense"][i % 3];
        table.push_str(&format!("crate{i},{license},helper {i}\n"));
    }
    for i in 0..19 {
        table.push_str(&format!("odd{i},License-{i},odd one {i}\n"));
    }
    table.push_str("webpki-roots,CDLA-Permissive-2.0,roots\n");
    let doc = csv::build(&table);
    let q = Query::from_hints(&Hints::new().with_query(
        "Which crates have a licence that is neither MIT nor Apache-2.0? Give each licence.",
    ));
    let mut query_scores = vec![0.0f32; doc.units.len()];
    query_scores[1] = 10.0;
    query_scores[2..12].fill(4.0);
    let mut scores = query_scores.clone();
    super::add_field_signals(&doc, &query_scores, q.as_ref(), &mut scores);
    let weakest_match = scores[2..12].iter().copied().fold(f32::MAX, f32::min);
    let last = doc.units.len() - 1;
    assert!(doc.text(last).starts_with("webpki-roots"));
    assert!(scores[last] > weakest_match, "{scores:?}");
}

#[test]
fn a_superlative_ranks_by_the_column_after_it_not_by_one_it_asks_to_report() {
    let mut table = String::from("country,year,lifeExp,gdpPercap\n");
    for (c, country) in ["Kuwait", "Chad", "Peru", "Zimbabwe", "Japan"]
        .iter()
        .enumerate()
    {
        for y in 0..12 {
            let gdp = if (c, y) == (0, 1) {
                113_523.1
            } else {
                1000.0 + (c * 12 + y) as f64
            };
            table.push_str(&format!("{country},{},{},{gdp}\n", 1952 + 5 * y, 40 + y));
        }
    }
    // A group named away from the superlative (Zimbabwe's rows) does not make the ranking
    // a group's, and the year the parenthesis asks to report is not ranked by: the latest
    // years would otherwise come first.
    let rows = ranked_rows(
        &table,
        "which row has the highest GDP per capita (value and year), and Zimbabwe's life expectancy in 2007?",
    );
    assert!(
        rows[..6].iter().any(|r| r.starts_with("Kuwait,1957")),
        "{rows:?}"
    );
}

#[test]
fn a_ranked_column_keeps_its_ends_when_the_query_also_names_a_group() {
    let mut table = String::from("name,origin,mpg,weight\n");
    for i in 0..90 {
        let origin = if i % 3 == 0 { "European" } else { "USA" };
        table.push_str(&format!(
            "model{i},{origin},{},{}\n",
            15 + i % 9,
            2000 + i * 37
        ));
    }
    table.push_str("frugal,USA,46.6,2110\n");
    let rows = ranked_rows(
        &table,
        "which car has the highest mpg, and which European car is the heaviest?",
    );
    let frugal = rows.iter().position(|r| r.starts_with("frugal")).unwrap();
    // Among the thirty European records the group's ends stand out, and the best mileage
    // of all still comes next.
    assert!(frugal < 10, "{rows:?}");
}

#[test]
fn a_table_s_only_numeric_column_is_ranked_by_when_the_query_names_none() {
    let mut listing = String::new();
    for i in 0..60 {
        listing.push_str(&format!("{}K\tusr/share/pkg/lisp/file{i}.elc\n", 4 + i % 7));
    }
    listing.push_str("62M\tusr/share/pkg/lisp\n75M\tusr/share/pkg\n");
    let rows = ranked_rows(&listing, "which directory is the largest, how big is it?");
    assert!(rows[..2].iter().any(|r| r.starts_with("62M")), "{rows:?}");
    assert!(rows[..2].iter().any(|r| r.starts_with("75M")), "{rows:?}");
}

#[test]
fn a_column_s_ends_are_its_largest_values_in_order_and_its_last_smallest() {
    let column = [(0, 5.0), (1, 9.0), (2, 1.0), (3, 9.0), (4, 7.0), (5, 1.0)];
    let ends = column_ends(column.into_iter()).unwrap();
    assert_eq!(
        ends.top,
        [
            Some((1, 9.0)),
            Some((3, 9.0)),
            Some((4, 7.0)),
            Some((0, 5.0)),
            Some((2, 1.0)),
            Some((5, 1.0))
        ]
    );
    assert_eq!(ends.lowest, (5, 1.0));
    assert!(!ends.monotonic);
}

#[test]
fn a_column_that_only_grows_is_monotonic_and_one_value_has_no_ends() {
    let clock = [(0, 1.0), (1, 2.0), (2, 2.0), (3, 8.0)];
    let ends = column_ends(clock.into_iter()).unwrap();
    assert!(ends.monotonic);
    assert_eq!(ends.top[0], Some((3, 8.0)));
    assert_eq!(ends.lowest, (0, 1.0));
    assert!(column_ends([(0, 1.0)].into_iter()).is_none());
}

#[test]
fn records_tied_at_a_ranked_column_s_smallest_value_each_stand_out() {
    let mut table = String::from("name,enrltot,testscr\n");
    for i in 0..60 {
        let (enrollment, score) = (500 + (i * 37) % 60 * 97, 600 + (i * 13) % 50);
        table.push_str(&format!("D{i},{enrollment},{score}\n"));
    }
    table.push_str("Fort Ross,81,630\n");
    table.push_str("Pacific,81,631\n");
    let rows = ranked_rows(
        &table,
        "which district has the highest test score, and which the smallest total enrollment?",
    );
    // Beside the largest score and enrollment, and the first row.
    let top: Vec<&str> = rows.iter().take(6).map(String::as_str).collect();
    assert!(top.contains(&"Fort Ross,81,630"), "{rows:?}");
    assert!(top.contains(&"Pacific,81,631"), "{rows:?}");
}

#[test]
fn the_few_records_whose_named_flag_is_on_stand_out_unless_the_query_negates_it() {
    // An election table: one 0/1 column per party's incumbent, clipped (`libinc`).
    let mut table = String::from("\"\",\"constituency\",\"coninc\",\"labinc\",\"libinc\",\"v1\"\n");
    for i in 0..120 {
        let (con, lab, lib) = match i {
            17 | 64 | 101 => (0, 0, 1),
            _ if i % 2 == 0 => (1, 0, 0),
            _ => (0, 1, 0),
        };
        let share = 0.2 + (i % 50) as f64 / 100.0;
        table.push_str(&format!("\"{i}\",\"Seat {i}\",{con},{lab},{lib},{share}\n"));
    }
    table.push_str("\"120\",\"Bath\",1,0,0,0.424\n");
    let rows = ranked_rows(
        &table,
        "Which constituencies had a Liberal incumbent, and what was the vote share in Bath?",
    );
    let top: Vec<&str> = rows.iter().take(4).map(String::as_str).collect();
    for seat in ["\"Seat 17\"", "\"Seat 64\"", "\"Seat 101\"", "\"Bath\""] {
        assert!(top.iter().any(|r| r.contains(seat)), "{seat}: {top:?}");
    }
    // A flag the query negates asks for the others: the few that have it are not raised.
    let mut table = String::from("name,requested,size\n");
    for i in 0..60 {
        let requested = matches!(i, 5 | 30 | 44);
        table.push_str(&format!("pkg-{i},{requested},{}\n", 1000 + i * 37));
    }
    let query = "Which packages were not requested, and how big is pkg-9?";
    let rows = ranked_rows(&table, query);
    let top: Vec<&str> = rows.iter().take(3).map(String::as_str).collect();
    assert!(!top.iter().any(|r| r.starts_with("pkg-30,")), "{top:?}");
    let rows = ranked_rows(
        &table,
        "Which packages were requested, and how big is pkg-9?",
    );
    let top: Vec<&str> = rows.iter().take(4).map(String::as_str).collect();
    assert!(top.iter().any(|r| r.starts_with("pkg-30,")), "{top:?}");
}
