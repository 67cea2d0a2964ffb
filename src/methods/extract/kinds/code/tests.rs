//! Source code as an outline: signatures, named bodies, comments and headers.

use super::*;
use crate::methods::extract::Hints;

const RUST: &str = "// Copyright 2024 The Authors. Licensed under MIT.\n\
// See LICENSE for details.\n\
use std::fmt;\n\
\n\
/// Parses a size.\n\
pub fn parse_size(buf: &[u8])\n    -> Result<u64, ()> {\n    const RADIX: u64 = 16;\n    // count digits\n    Ok(0)\n}\n\
\n\
pub fn other() {\n    let x = 1;\n}\n";

fn query(text: &str) -> Query {
    Query::from_hints(&Hints::new().with_query(text)).unwrap_or_default()
}

fn prior_of(doc: &Doc<'_>, line: &str) -> f32 {
    let u = (0..doc.units.len())
        .find(|&u| doc.text(u).trim() == line)
        .unwrap_or_else(|| panic!("no line {line}"));
    doc.units[u].prior
}

#[test]
fn a_name_given_exactly_asks_for_its_outermost_definition() {
    let source = "class WSGIRefServer(ServerAdapter):\n    def run(self, handler):\n        srv = make_server(self.host, self.port, handler)\n        srv.serve_forever()\n\n\
def run(app=None,\n        server='wsgiref',\n        port=8080):\n    app = app or default_app()\n    server.run(app)\n";
    let doc = build(
        source,
        Some(&query("what defaults does run() use for server and port?")),
    );
    assert!(prior_of(&doc, "server='wsgiref',") >= EXACT_BODY_PRIOR);
    assert!(prior_of(&doc, "srv.serve_forever()") < EXACT_BODY_PRIOR);
}

#[test]
fn the_named_definition_ranks_its_whole_body_and_doc_comment() {
    let doc = build(RUST, Some(&query("how does parse_size work?")));
    assert!(prior_of(&doc, "const RADIX: u64 = 16;") >= NAMED_BODY_PRIOR);
    assert!(prior_of(&doc, "/// Parses a size.") >= NAMED_BODY_PRIOR - 1.0);
    assert!(prior_of(&doc, "Ok(0)") >= NAMED_BODY_PRIOR);
    assert!(prior_of(&doc, "let x = 1;") < 1.0);
}

#[test]
fn a_method_the_query_names_outranks_the_rest_of_its_named_impl() {
    let text = "pub struct NaiveDate {\n    yof: i32,\n}\n\n\
impl NaiveDate {\n    pub const fn from_ymd(y: i32) -> NaiveDate {\n        NaiveDate { yof: y }\n    }\n\n\
pub const fn years_since(&self, base: Self) -> Option<u32> {\n        let years = self.year() - base.year();\n        Some(years as u32)\n    }\n}\n";
    let doc = build(
        text,
        Some(&query("in NaiveDate, how does years_since decide?")),
    );
    assert!(prior_of(&doc, "Some(years as u32)") > prior_of(&doc, "NaiveDate { yof: y }"));
    assert!(prior_of(&doc, "NaiveDate { yof: y }") >= NAMED_BODY_PRIOR);
    assert!(is_container("impl<T: Clone> Wrapper<T> {"));
    assert!(is_container("class TimeColumn(ProgressColumn):"));
    assert!(!is_container("pub fn implement(x: u8) {"));
}

#[test]
fn a_name_spelled_as_words_counts() {
    let doc = build(RUST, Some(&query("how do we parse the size?")));
    assert!(prior_of(&doc, "Ok(0)") >= NAMED_BODY_PRIOR);
}

#[test]
fn licence_headers_rank_below_the_outline() {
    let doc = build(RUST, None);
    let header = prior_of(&doc, "// See LICENSE for details.");
    assert!(header < prior_of(&doc, "pub fn other() {"));
    assert!(header < prior_of(&doc, "let x = 1;"));
}

#[test]
fn definition_names_follow_their_keyword() {
    assert_eq!(
        definition_name("pub(crate) fn detect(x: u8) {"),
        Some("detect")
    );
    assert_eq!(
        definition_name("class TimeColumn(ProgressColumn):"),
        Some("TimeColumn")
    );
    assert_eq!(definition_name("async def fetch(self):"), Some("fetch"));
    assert_eq!(definition_name("sub tempfile {"), Some("tempfile"));
    assert_eq!(definition_name("let x = 1;"), None);
    // A Go method is named after its receiver; a function literal has no name.
    assert_eq!(
        definition_name("func (pc *persistConn) shouldRetryRequest(req *Request) bool {"),
        Some("shouldRetryRequest")
    );
    assert_eq!(definition_name("func main() {"), Some("main"));
    assert_eq!(definition_name("go func() {"), None);
}

#[test]
fn python_bodies_end_where_indentation_returns() {
    let text = "class A:\n    def render_speed(self):\n        return 1\n\nclass B:\n    def render(self):\n        pass\n";
    // One common word names every method called so: not a match.
    let doc = build(text, Some(&query("how does render work?")));
    assert!(prior_of(&doc, "pass") < NAMED_BODY_PRIOR);
    let doc = build(text, Some(&query("how does render_speed work?")));
    assert!(prior_of(&doc, "return 1") >= NAMED_BODY_PRIOR);
    assert!(prior_of(&doc, "pass") < NAMED_BODY_PRIOR);
}

/// A definition formatted with one parameter a line, as black and rustfmt write them.
const PYTHON: &str = "_CACHE_FIELD = \"_cached\"\n\
\n\
def make_thing(\n    name, attrs, bases=(object,)\n):\n    r\"\"\"\n    Make a thing called *name* with *attrs*.\n\n    The class name is checked.\n    \"\"\"\n    name = normalize(name)\n    if not isinstance(attrs, dict):\n        raise TypeError(\"attrs must be a dict\")\n    return build(name)\n\
\n\
def build_class(self):\n    slots.append(_CACHE_FIELD)\n    return cls\n";

#[test]
fn a_signature_over_several_lines_does_not_end_the_body() {
    let doc = build(PYTHON, Some(&query("what does make_thing return?")));
    assert!(prior_of(&doc, "return build(name)") >= EXACT_BODY_PRIOR);
    assert!(prior_of(&doc, "raise TypeError(\"attrs must be a dict\")") >= EXACT_BODY_PRIOR);
}

#[test]
fn a_named_body_puts_its_code_before_its_docstring() {
    let doc = build(
        PYTHON,
        Some(&query("what does make_thing do with the name?")),
    );
    let code = prior_of(&doc, "name = normalize(name)");
    let docstring = prior_of(&doc, "The class name is checked.");
    assert!(docstring >= COMMENT_PRIOR, "{docstring}");
    assert!(code > docstring + 1.0, "{code} {docstring}");
}

#[test]
fn words_of_an_exact_name_name_no_other_definition() {
    // `class` and `build` are the question's own words; `make_thing` is given exactly.
    let doc = build(PYTHON, Some(&query("how does make_thing build the class?")));
    assert!(prior_of(&doc, "return cls") < prior_of(&doc, "return build(name)"));
    // Words met only inside an identifier name nothing: `make` and `thing`.
    let text = "def make_thing():\n    return 1\n\ndef thing_make():\n    return 2\n";
    let doc = build(text, Some(&query("what does make_thing return?")));
    assert!(prior_of(&doc, "return 2") < NAMED_BODY_PRIOR);
}

#[test]
fn a_defined_name_keeps_its_match_in_its_definition() {
    let doc = build(PYTHON, Some(&query("what is _CACHE_FIELD?")));
    assert!(prior_of(&doc, "slots.append(_CACHE_FIELD)") <= -USE_DISCOUNT + 0.01);
    assert!(prior_of(&doc, "_CACHE_FIELD = \"_cached\"") > -1.0);
    assert!(defines("pub const max_len: usize = 4;", "max_len"));
    assert!(defines("#define max_len 4", "max_len"));
    assert!(!defines("if max_len == 4:", "max_len"));
    assert!(!defines("call(max_len)", "max_len"));
}

#[test]
fn bracket_balance_skips_strings_and_lifetimes() {
    assert_eq!(bracket_balance("def f("), 1);
    assert_eq!(bracket_balance("    sep=\"(\", x=')',"), 0);
    assert_eq!(bracket_balance("fn f<'a>(x: &'a str) {"), 0);
    assert_eq!(bracket_balance("): # (closing"), -1);
}

/// A type declaration's members, each documented in a block comment one column in.
const DECLARATIONS: &str = "interface ServerOptions {\n\
    /**\n\
     * Sets the timeout value in milliseconds for receiving the entire request.\n\
     * @default 300000\n\
     */\n\
    requestTimeout?: number | undefined;\n\
    /**\n\
     * How often to check for timed out requests.\n\
     * @default 30000\n\
     */\n\
    connectionsCheckingInterval?: number | undefined;\n\
}\n";

#[test]
fn a_member_the_query_names_comes_with_its_doc_comment() {
    let doc = build(
        DECLARATIONS,
        Some(&query("what is the default of requestTimeout?")),
    );
    let named = prior_of(&doc, "* @default 300000");
    assert!(named >= DECLARED_PRIOR + COMMENT_PRIOR, "{named}");
    assert!(prior_of(&doc, "requestTimeout?: number | undefined;") >= DECLARED_PRIOR);
    assert!(prior_of(&doc, "* @default 30000") < 0.5);
    let block = |line: &str| {
        let u = (0..doc.units.len())
            .find(|&u| doc.text(u).trim() == line)
            .unwrap();
        doc.units[u].block
    };
    assert!(block("/**").is_some());
    // Each member's `@default` line is its own answer, not a repeat of another's.
    let u = (0..doc.units.len())
        .find(|&u| doc.text(u).trim() == "* @default 300000")
        .unwrap();
    assert!(doc.units[u].template.is_none());
    assert_eq!(
        block("* @default 300000"),
        block("requestTimeout?: number | undefined;")
    );
}

#[test]
fn a_name_assigned_on_many_lines_is_not_a_declaration() {
    let source = "# the sum\nfetch_total = 0\nfetch_total = 1\nfetch_total = 2\nfetch_total = 3\nfetch_total = 4\n";
    let doc = build(source, Some(&query("what is fetch_total?")));
    assert!(prior_of(&doc, "fetch_total = 0") < DECLARED_PRIOR);
}
