use super::*;

fn query(text: &str) -> Query {
    Query::from_hints(&crate::methods::extract::Hints::new().with_query(text)).unwrap()
}

#[test]
fn quoted_delimiters_do_not_split_cells() {
    assert_eq!(split("a,\"b,c\",d", b','), ["a", "\"b,c\"", "d"]);
}

#[test]
fn header_is_pinned_and_columns_become_fields() {
    let text = "name,duration\nrg,0.1\nag,0.3\ngrep,7.5\n";
    let doc = build(text);
    assert!(doc.units[0].pinned);
    assert_eq!(doc.fields.len(), 2);
    assert!(matches!(doc.fields[1].iter().nth(2), Some((3, FieldValue::Number(n))) if n == 7.5));
}

#[test]
fn a_series_that_starts_late_is_still_a_column_of_numbers() {
    // Monthly prices: GOOGL has no value before it listed, most rows of the file.
    let mut text = String::from("Date,IBM,GOOGL\n");
    for year in 1990..2004 {
        text.push_str(&format!("{year}-01-01,10.5,\n"));
    }
    for (year, price) in [(2004, 50.2), (2010, 300.4), (2021, 2960.9)] {
        text.push_str(&format!("{year}-01-01,12.5,{price}\n"));
    }
    let doc = build(&text);
    let googl = doc.fields.iter().find(|f| f.name() == "GOOGL").unwrap();
    assert_eq!(googl.len(), 3);
    assert!(
        googl
            .iter()
            .all(|(_, v)| matches!(v, FieldValue::Number(_)))
    );
}

#[test]
fn a_label_every_cell_of_a_column_starts_with_is_not_its_value() {
    // `python -X importtime`: every line, the header too, starts with `import time:`.
    let text = "import time: self [us] | cumulative | imported package\n\
                import time:       313 |        313 |   _io\n\
                import time:        73 |         73 |   marshal\n\
                import time:     31421 |      31906 |     sympy.simplify.sqrtdenest\n\
                import time:       692 |        692 |   posix\n";
    let doc = build(text);
    assert_eq!(doc.fields[0].name(), "self [us]");
    assert!(
        matches!(doc.fields[0].iter().nth(2), Some((3, FieldValue::Number(n))) if n == 31421.0),
        "{:?}",
        doc.fields[0].iter().collect::<Vec<_>>()
    );
    assert_eq!(cell_label(["New York", "New Jersey"].into_iter()), "New ");
    assert_eq!(cell_label(["2024-01-03", "2024-02-11"].into_iter()), "");
}

#[test]
fn a_drawn_table_is_a_table_of_its_cells() {
    let text = "+------+-----+\n| name | hp  |\n+------+-----+\n| a    | 90  |\n| b    | 132 |\n| c    | 75  |\n+------+-----+\n";
    let lines: Vec<&str> = text.lines().collect();
    assert!(looks_like_csv(&lines));
    let doc = build(text);
    assert!(doc.units[0].pinned && doc.units[1].pinned && doc.units[2].pinned);
    assert!(!doc.units[3].pinned);
    assert_eq!(doc.fields.len(), 2);
    assert!(
        doc.fields[1]
            .iter()
            .any(|v| matches!(v, (4, FieldValue::Number(n)) if n == 132.0))
    );
    assert_eq!(doc.overview.as_deref(), Some("[table: 3 rows × 2 columns]"));
}

#[test]
fn a_wide_table_shows_the_columns_the_query_names() {
    let mut header = vec!["name".to_owned(), "official".to_owned()];
    header.extend((0..40).map(|i| format!("translation_{i}")));
    header.extend(["area".to_owned(), "borders".to_owned()]);
    let mut text = header.join(",") + "\n";
    for row in 0..6 {
        let mut cells = vec![format!("Land{row}"), format!("Republic of Land{row}")];
        cells.extend((0..40).map(|i| format!("Translated name {i} of land {row}")));
        cells.extend([format!("{}", 1000 * (row + 1)), "\"AAA,BBB\"".to_owned()]);
        text.push_str(&(cells.join(",") + "\n"));
    }
    let q = query("which land has the largest area?");
    let doc = project_wide_rows(build(&text), &q);
    assert_eq!(doc.text(0), "name,official,…,area,…");
    assert_eq!(doc.text(3), "Land2,Republic of Land2,…,3000,…");
    assert!(
        doc.overview
            .as_deref()
            .unwrap()
            .contains("3 of 44 columns shown")
    );
    // The fields still read the original cells.
    assert_eq!(doc.fields.len(), 44);
    // A query that names no column leaves the table as it is.
    let q = query("Land2?");
    let doc = project_wide_rows(build(&text), &q);
    assert!(doc.text(3).contains("Translated name 39 of land 2"));
}

#[test]
fn a_wide_table_is_named_by_its_first_columns_of_short_values() {
    // A geographic table: each row's polygon first, as WKT, then its names.
    let mut header = vec!["WKT".to_owned(), "NAME".to_owned(), "STATE_NAME".to_owned()];
    header.extend((0..12).map(|i| format!("PO{i}")));
    header.push("HR8893".to_owned());
    let mut text = header.join(",") + "\n";
    for row in 0..6 {
        let polygon: Vec<String> = (0..60)
            .map(|i| format!("-90.{row}{i} 38.{i}{row}"))
            .collect();
        let mut cells = vec![
            format!("\"POLYGON (({}))\"", polygon.join(",")),
            format!("County{row}"),
            "Illinois".to_owned(),
        ];
        cells.extend((0..12).map(|i| format!("{}", 1000 * i + row)));
        cells.push(format!("{row}.25"));
        text.push_str(&(cells.join(",") + "\n"));
    }
    let q = query("which county has the highest HR8893?");
    let doc = project_wide_rows(build(&text), &q);
    assert_eq!(doc.text(0), "…,NAME,STATE_NAME,…,HR8893");
    assert_eq!(doc.text(3), "…,County2,Illinois,…,2.25");
}

#[test]
fn a_column_of_long_content_is_left_out_of_the_rows_of_a_narrow_table() {
    // Few columns, but each row's polygon makes it thousands of bytes long.
    let mut text = "WKT,code,name,region,pop,lifeExp\n".to_owned();
    for row in 0..6 {
        let polygon: Vec<String> = (0..120)
            .map(|i| format!("-90.{row}{i} 38.{i}{row}"))
            .collect();
        text.push_str(&format!(
            "\"MULTIPOLYGON ((({})))\",C{row},Land{row},North,{},7{row}.5\n",
            polygon.join(","),
            1000 * (row + 1)
        ));
    }
    let q = query("what life expectancy and region does Land2 have?");
    let doc = project_wide_rows(build(&text), &q);
    assert_eq!(doc.text(0), "…,code,name,region,pop,lifeExp");
    assert_eq!(doc.text(3), "…,C2,Land2,North,3000,72.5");
    assert!(
        doc.overview
            .as_deref()
            .unwrap()
            .contains("5 of 6 columns shown")
    );
    // Asked for, the long column stays.
    let q = query("what WKT does Land2 have?");
    let doc = project_wide_rows(build(&text), &q);
    assert!(doc.text(3).starts_with("\"MULTIPOLYGON"));
}

#[test]
fn a_line_of_counts_above_the_header_is_a_preamble() {
    // scikit-learn's breast cancer table: rows, columns and class names, then the header.
    let mut text =
        "6,4,malignant,benign\nmean radius,mean texture,mean area,worst area,target\n".to_owned();
    for (r, area) in [
        (17.99, 2019.0),
        (20.57, 1956.0),
        (9.5, 3432.0),
        (11.2, 880.0),
    ] {
        text.push_str(&format!("{r},10.38,1001,{area},0\n"));
    }
    text.push_str("8.1,12.0,200,290.5,1\n7.7,24.5,180,268.6,1\n");
    let lines: Vec<&str> = text.lines().collect();
    assert!(looks_like_csv(&lines));
    let doc = build(&text);
    assert!(doc.units[0].pinned && doc.units[0].weight == 0);
    assert!(doc.units[1].pinned && doc.units[1].weight > 0);
    assert_eq!(doc.fields.len(), 5);
    assert_eq!(doc.fields[3].name(), "worst area");
    assert!(
        doc.fields[3]
            .iter()
            .any(|v| matches!(v, (4, FieldValue::Number(n)) if n == 3432.0))
    );
    assert_eq!(doc.overview.as_deref(), Some("[table: 6 rows × 5 columns]"));
}

#[test]
fn prose_with_commas_is_not_a_table() {
    let lines = ["Hello, world, again", "This is prose.", "More, prose here"];
    assert!(!looks_like_csv(&lines));
}

#[test]
fn a_trace_of_calls_with_their_arguments_is_no_table() {
    // A tool's trace prints each call with its arguments apart by commas: as many commas on
    // every line, but each inside the call's parentheses.
    let mut text = String::from("building file list\n");
    for (name, depth) in [
        ("src", 2),
        ("dist", 2),
        ("dist/app.js", 3),
        ("README.md", 2),
    ] {
        text.push_str(&format!("[sender] make_file({name},*,{depth})\n"));
    }
    let lines: Vec<&str> = text.lines().collect();
    assert!(!looks_like_csv(&lines));
    // A header that names a unit in parentheses is still a table's.
    let table = "name,size (KB),owner\nalpha,12,root\nbeta,40,www\ngamma,7,root\n";
    let lines: Vec<&str> = table.lines().collect();
    assert!(looks_like_csv(&lines));
}
