//! Tables of named rows (`dpkg -l`, `pip list`, `docker ps`, `apt list`): a query names a row
//! by its name, and that name is a whole cell (`openssl`), while the rows it only matches in
//! part (`python3-openssl`, `libxmlsec1-openssl`) are other things. A row one of whose first
//! cells is, whole, a name the query gives gains as much as a listed entry the query names.

use super::super::doc::Doc;
use super::super::query::Query;
use super::super::terms::for_each_word;

/// What a row named by the query gains.
const NAMED_ROW_WEIGHT: f32 = 3.0;
/// The cells a row's name may be in: after a status column (`ii`) or an id, never far in.
const NAME_CELLS: usize = 3;
/// A table needs at least this many rows.
const MIN_ROWS: usize = 8;
/// The share of lines whose third cell starts at the same column, for the text to be a table:
/// prose never lines its words up.
const ALIGNED_SHARE: f32 = 0.5;

/// Raises the rows of an aligned table whose name cell the query gives (see the module).
pub(super) fn raise_named_rows(doc: &Doc<'_>, query: &Query, scores: &mut [f32]) {
    if doc.units.len() < MIN_ROWS || !is_aligned_table(doc) {
        return;
    }
    let mut buf = String::new();
    for (u, score) in scores.iter_mut().enumerate() {
        let named = cells(doc.text(u))
            .take(NAME_CELLS)
            .any(|(_, cell)| names(query, cell, &mut buf));
        if named {
            *score += NAMED_ROW_WEIGHT;
        }
    }
}

/// Whether `cell`, without its qualifier (`:amd64`, `@1.2`, `=1.2`), is one word of the query
/// or one of its exact strings, whole.
fn names(query: &Query, cell: &str, buf: &mut String) -> bool {
    let name = cell
        .split([':', '@', '='])
        .next()
        .unwrap_or(cell)
        .trim_matches(|c: char| !c.is_alphanumeric());
    if name.len() < 3 {
        return false;
    }
    let lower = name.to_ascii_lowercase();
    if query.exact.contains(&lower) {
        return true;
    }
    let mut words = 0;
    let mut named = false;
    for_each_word(name, buf, |w| {
        words += 1;
        named = query.words.contains_key(w);
    });
    words == 1 && named
}

/// The cells of `line` (runs of non-space), each with the byte column it starts at.
fn cells(line: &str) -> impl Iterator<Item = (usize, &str)> {
    line.split_ascii_whitespace()
        .map(move |cell| (cell.as_ptr() as usize - line.as_ptr() as usize, cell))
}

/// Whether most of `doc`'s units are rows whose third cell starts at one column.
fn is_aligned_table(doc: &Doc<'_>) -> bool {
    let mut columns: std::collections::HashMap<usize, usize> = std::collections::HashMap::new();
    for u in 0..doc.units.len() {
        if let Some((at, _)) = cells(doc.text(u)).nth(2) {
            *columns.entry(at).or_default() += 1;
        }
    }
    let most = columns.values().copied().max().unwrap_or(0);
    most >= MIN_ROWS && most as f32 >= ALIGNED_SHARE * doc.units.len() as f32
}

#[cfg(test)]
mod tests {
    use super::super::tests::scored;

    /// The shape of `dpkg -l` (dpkg 1.21), a few rows of it.
    const PACKAGES: &str = "\
ii  libcurl4:amd64               7.88.1-10+deb12u15    amd64   easy-to-use client-side URL transfer library
ii  libgnutls-openssl27:amd64    3.7.9-2+deb12u6       amd64   GNU TLS library - OpenSSL wrapper
ii  libssl3:amd64                3.0.19-1~deb12u2      amd64   Secure Sockets Layer toolkit - shared libraries
ii  libxmlsec1-openssl:amd64     1.2.37-2              amd64   Openssl engine for the XML security library
ii  openssl                      3.0.19-1~deb12u2      amd64   Secure Sockets Layer toolkit - cryptographic utility
ii  python3-openssl              23.0.0-1              all     Python 3 wrapper around the OpenSSL library
ii  ssl-cert                     1.1.2                 all     simple debconf wrapper for OpenSSL
ii  zlib1g:amd64                 1:1.2.13.dfsg-1       amd64   compression library - runtime
ii  zlib1g-dev:amd64             1:1.2.13.dfsg-1       amd64   compression library - development
";

    #[test]
    fn the_row_the_query_names_whole_outranks_rows_that_hold_its_name_in_part() {
        let s = scored(PACKAGES, "which version of openssl is installed?");
        for other in [1, 3, 5, 6] {
            assert!(s[4] > s[other], "{s:?}");
        }
        let s = scored(PACKAGES, "which zlib1g is installed?");
        assert!(s[7] > s[8] + 1.0, "{s:?}");
    }

    #[test]
    fn prose_is_not_a_table_of_named_rows() {
        use super::super::super::Hints;
        use super::super::super::kinds::lines::{Style, build};
        use super::super::super::query::Query;
        let text = "\
openssl is a toolkit for TLS and for general cryptography.
It provides a command line tool and two libraries.
The libssl library implements the protocols.
The libcrypto library implements the algorithms.
Most distributions ship it as several packages.
A server links against the shared libraries only.
Headers come in a separate development package.
The command line tool covers keys and certificates.
Configuration lives in one file under /etc/ssl.
Engines and providers extend what it supports.
Each release line is supported for some years.
Security fixes are released for every supported line.
";
        let doc = build(text, Style::Text);
        let query = Query::from_hints(&Hints::new().with_query("what is openssl?")).unwrap();
        let mut scores = vec![0.0; doc.units.len()];
        super::raise_named_rows(&doc, &query, &mut scores);
        assert!(scores.iter().all(|&s| s == 0.0), "{scores:?}");
    }
}
