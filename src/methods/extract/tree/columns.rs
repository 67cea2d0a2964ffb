//! Tables whose columns are aligned with spaces (`docker ps`, `kubectl get`, `ps aux`,
//! `df -h`, `sqlite3 -column`): a header line of column names, then one row per line. A column
//! boundary is a gutter: a position that is blank in the header and in (nearly) every row, so
//! left- and right-aligned columns, and names with a space in them (`CONTAINER ID`), are read
//! alike. Each row is a record keyed by the header's names.

use std::ops::Range;

use super::records::{Layout, LineField, LineRecord, LineRecords, trimmed};
use crate::methods::extract::doc;
use crate::methods::extract::kinds::csv::is_border;

/// Fewer columns than this are a list of pairs, read as well as lines.
const MIN_COLUMNS: usize = 3;
/// Rows (in percent) that may have a character in a gutter (a value too long for its
/// column) for it to stay a gutter.
const MAX_GUTTER_CROSSING: usize = 5;
/// Each column must have a value in at least this share of rows (in percent): a column of
/// blanks is the space after short lines, not a column.
const MIN_COLUMN_FILL: usize = 50;
/// Rows must be at least this many for the gutters to mean anything.
const MIN_ROWS: usize = 5;

/// The rows of `text` as records keyed by its header's column names, or `None` when `text`
/// is not an aligned table. Linear in the text, and never fails: it gives up instead.
pub(crate) fn parse(text: &str) -> Option<LineRecords> {
    let lines: Vec<Range<usize>> = doc::lines(text)
        .filter(|l| !text[l.clone()].trim().is_empty())
        .collect();
    let (header, rest) = lines.split_first()?;
    // A frame line under the header (`----  ----`, `===`) belongs to it.
    let (header, rows) = match rest.split_first() {
        Some((frame, rows)) if is_border(&text[frame.clone()]) => (header.start..frame.end, rows),
        _ => (header.clone(), rest),
    };
    // A last row under a border of its own is the table's total, not one of its rows.
    let (rows, footer) = match rows {
        [rows @ .., border, total]
            if is_border(&text[border.clone()]) && rows.len() >= MIN_ROWS =>
        {
            (rows, Some(border.start..total.end))
        }
        _ => (rows, None),
    };
    let header = &header;
    if rows.len() < MIN_ROWS || lines.iter().any(|l| text[l.clone()].contains('\t')) {
        return None;
    }
    // Per character position: whether the header has a character there, and how many rows do.
    let header_text = text[header.clone()].lines().next().unwrap_or_default();
    let header_line = header.start..header.start + header_text.len();
    let width = lines
        .iter()
        .map(|l| text[l.clone()].chars().count())
        .max()?;
    let mut in_header = vec![false; width];
    for (i, c) in header_text.chars().enumerate() {
        in_header[i] = !c.is_whitespace();
    }
    let mut in_rows = vec![0usize; width];
    for row in rows {
        for (i, c) in text[row.clone()].chars().enumerate() {
            in_rows[i] += usize::from(!c.is_whitespace());
        }
    }
    let gutter = |i: usize| !in_header[i] && in_rows[i] * 100 <= rows.len() * MAX_GUTTER_CROSSING;
    // Columns: runs of non-gutter positions; a run with no header text above it belongs to
    // the column before (a value longer than its name, in the last column).
    let mut columns: Vec<Range<usize>> = Vec::new();
    let mut i = 0;
    while i < width {
        if gutter(i) {
            i += 1;
            continue;
        }
        let start = i;
        while i < width && !gutter(i) {
            i += 1;
        }
        let named = in_header[start..i].iter().any(|&h| h);
        match columns.last_mut() {
            Some(last) if !named => last.end = i,
            _ if !named => return None,
            _ => columns.push(start..i),
        }
    }
    if columns.len() < MIN_COLUMNS {
        return None;
    }
    // The last column takes the rest of each row.
    if let Some(last) = columns.last_mut() {
        last.end = usize::MAX;
    }
    let names: Vec<Range<usize>> = columns
        .iter()
        .map(|c| trimmed(text, char_range(text, header_line.clone(), c.clone())))
        .collect();
    // A header names things: a cell that is a number is a row, not a header.
    if names
        .iter()
        .any(|n| !text[n.clone()].chars().any(char::is_alphabetic))
    {
        return None;
    }
    let mut filled = vec![0usize; columns.len()];
    let records: Vec<LineRecord> = rows
        .iter()
        .map(|row| LineRecord {
            fields: columns
                .iter()
                .zip(&names)
                .zip(&mut filled)
                .map(|((column, name), filled)| {
                    let value = trimmed(text, char_range(text, row.clone(), column.clone()));
                    *filled += usize::from(!value.is_empty());
                    LineField {
                        key: name.clone(),
                        value,
                        line: row.clone(),
                        more: Vec::new(),
                    }
                })
                .collect(),
        })
        .collect();
    if filled
        .iter()
        .any(|&f| f * 100 < rows.len() * MIN_COLUMN_FILL)
    {
        return None;
    }
    Some(LineRecords {
        layout: Layout::Rows,
        header: Some(header.clone()),
        records,
        footer,
    })
}

/// Whether the sample `lines` (non-blank) start like an aligned table: a header at the margin
/// of at least [`MIN_COLUMNS`] names, some apart by a run of spaces, and rows under it.
pub(crate) fn starts_like(lines: &[&str]) -> bool {
    let Some(header) = lines.first() else {
        return false;
    };
    let names = header.split_whitespace();
    lines.len() > MIN_ROWS
        && header.starts_with(|c: char| c.is_alphabetic())
        && !header.contains('\t')
        && header.contains("  ")
        && names.clone().count() >= MIN_COLUMNS
        && names
            .into_iter()
            .all(|n| n.chars().any(char::is_alphabetic))
}

/// The byte range of `line` (a range of `text`) between character positions `chars`.
fn char_range(text: &str, line: Range<usize>, chars: Range<usize>) -> Range<usize> {
    let s = &text[line.clone()];
    let at = |n: usize| {
        s.char_indices()
            .nth(n)
            .map_or(line.end, |(b, _)| line.start + b)
    };
    if s.is_ascii() {
        return line.start + chars.start.min(s.len())..line.start + chars.end.min(s.len());
    }
    at(chars.start)..at(chars.end)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A coverage report: the last row, under a border of its own, is the total, and is
    /// shown with the header whatever the budget.
    #[test]
    fn a_last_row_under_a_border_is_the_total() {
        let row = |cells: [&str; 4]| {
            format!(
                "{:<14}{:>5}{:>7}{:>7}\n",
                cells[0], cells[1], cells[2], cells[3]
            )
        };
        let border = "---------------------------------\n";
        let mut text = row(["Name", "Stmts", "Miss", "Cover"]) + border;
        for i in 0..12 {
            text.push_str(&row([
                &format!("pkg/mod{i:02}.py"),
                &(10 + i).to_string(),
                "5",
                "50%",
            ]));
        }
        text.push_str(border);
        text.push_str(&row(["TOTAL", "186", "60", "68%"]));
        let list = parse(&text).unwrap();
        assert_eq!(list.records.len(), 12);
        assert!(text[list.footer.clone().unwrap()].contains("TOTAL"));
        let doc = super::super::source::build(
            &text,
            &list,
            crate::methods::extract::detect::ContentKind::Text,
            None,
        );
        let total = (0..doc.units.len())
            .find(|&u| doc.text(u).contains("TOTAL"))
            .unwrap();
        assert!(doc.units[total].pinned);
    }

    #[test]
    fn aligned_columns_are_records_keyed_by_the_header() {
        // `sqlite3 -header -column` (3.40) on a small table, trailing blanks as printed.
        let text = "id  name        kind     size_kb\n--  ----------  -------  -------\n1   alpha       service  12     \n2   beta gamma  worker   1204   \n3   delta       service  7      \n4   epsilon     cron     88     \n5   zeta        worker   3      \n6   eta         service  640    \n";
        let list = parse(text).unwrap();
        // The dashes under the header are its frame, not a row.
        assert_eq!(
            &text[list.header.clone().unwrap()],
            "id  name        kind     size_kb\n--  ----------  -------  -------"
        );
        let value = list.to_value(text);
        assert_eq!(value[1]["name"], "beta gamma");
        assert_eq!(value[1]["size_kb"], "1204");
        assert_eq!(value[5]["kind"], "service");
    }

    #[test]
    fn a_header_with_spaces_in_its_names_and_right_aligned_numbers() {
        // `df -h` on this machine, its first rows.
        let text = "Filesystem               Size  Used Avail Use% Mounted on\ndevtmpfs                  12G     0   12G   0% /dev\ntmpfs                     24G     0   24G   0% /dev/shm\n/dev/vda                 252G   78G   14G  86% /\nmodel_tools_unavailable  4.0K     0  4.0K   0% /mnt/sandboxing/model_tools_env/v1/python\ntmpfs                     12G     0   12G   0% /sys/fs/cgroup\n";
        let value = parse(text).unwrap().to_value(text);
        assert_eq!(
            value[3]["Mounted on"],
            "/mnt/sandboxing/model_tools_env/v1/python"
        );
        assert_eq!(value[1]["Used"], "0");
        assert_eq!(value[2]["Size"], "252G");
        assert_eq!(value[2]["Use%"], "86%");
    }

    #[test]
    fn process_lists_read_right_aligned_numbers_and_a_ragged_last_column() {
        // `ps -o user,pid,%cpu,%mem,vsz,rss,stat,comm` on this machine, its first rows.
        let text = "USER       PID %CPU %MEM    VSZ   RSS STAT COMMAND\nroot         1  0.4  0.0  46168 15712 S<Ll process_api\nroot         2  0.0  0.0      0     0 S    kthreadd\nroot         3  0.0  0.0      0     0 S    pool_workqueue_release\nroot         4  0.0  0.0      0     0 I<   kworker/R-rcu_gp\nroot         5  0.0  0.0      0     0 I<   kworker/R-sync_wq\nroot         6  0.0  0.0      0     0 I<   kworker/R-kvfree_rcu_reclaim\n";
        let value = parse(text).unwrap().to_value(text);
        assert_eq!(value[0]["RSS"], "15712");
        assert_eq!(value[0]["STAT"], "S<Ll");
        assert_eq!(value[5]["COMMAND"], "kworker/R-kvfree_rcu_reclaim");
        assert_eq!(value[3]["PID"], "4");
    }

    #[test]
    fn prose_and_listings_are_not_tables() {
        let prose = "The service starts at boot and reads its configuration.\nIt then opens the socket and waits for clients to connect.\nEach client gets a worker of its own from the pool.\nWorkers exit when idle for a while.\nThe pool grows again under load.\nThat is all there is to it.\n";
        assert!(parse(prose).is_none());
        let listing = "total 12\n-rw-r--r-- 1 root root  220 Jan  1 00:00 .bash_logout\n-rw-r--r-- 1 root root 3526 Jan  1 00:00 .bashrc\n-rw-r--r-- 1 root root  807 Jan  1 00:00 .profile\n-rw-r--r-- 1 root root  807 Jan  1 00:00 .a\n-rw-r--r-- 1 root root  807 Jan  1 00:00 .b\n";
        assert!(parse(listing).is_none());
    }
}
