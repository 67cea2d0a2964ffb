//! HTML to readable text with a small tag scanner: no DOM, no dependency. Headings become
//! `#` lines, list items `- ` lines, table rows ` | `-separated lines; the terms of a
//! definition list (a man page's options and variables, an API page's signatures) are
//! headings one level under the section they are in, so each term frames its definition.
//! Scripts, styles and comments are dropped; entities are decoded.

/// Elements whose content is never text for a reader.
const SKIPPED: &[&str] = &["script", "style", "noscript", "template", "svg", "head"];
/// Elements that start a new line.
const BLOCKS: &[&str] = &[
    "p",
    "div",
    "br",
    "li",
    "tr",
    "table",
    "ul",
    "ol",
    "dl",
    "dt",
    "dd",
    "section",
    "article",
    "header",
    "footer",
    "nav",
    "aside",
    "blockquote",
    "pre",
    "figure",
    "figcaption",
    "caption",
    "form",
    "hr",
    "main",
    "title",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "body",
    "html",
];

/// A page is an application's shell when its readable text is less than one byte in this
/// many of it: what it shows is built by its scripts from the data they hold.
const SHELL_SHARE: usize = 20;

/// Whether `html`, whose readable text is `readable`, is an application's shell (a coverage
/// report, a single-page app): its content is in its scripts, as data and code, which its
/// readable text drops.
pub(crate) fn is_app_shell(html: &str, readable: &str) -> bool {
    readable.trim().len() * SHELL_SHARE < html.len()
}

/// The readable text of `html`, one block per line.
pub(crate) fn to_text(html: &str) -> String {
    let mut out = String::with_capacity(html.len() / 3);
    let bytes = html.as_bytes();
    let mut i = 0;
    let mut in_pre = 0usize;
    // The level of the last heading, and how deep in definition lists the text is.
    let mut heading_level = 0usize;
    let mut lists = 0usize;
    while i < bytes.len() {
        if bytes[i] != b'<' {
            let end = memchr_lt(bytes, i);
            push_text(&mut out, &html[i..end], in_pre > 0);
            i = end;
            continue;
        }
        if html[i..].starts_with("<!--") {
            i = html[i..].find("-->").map_or(bytes.len(), |e| i + e + 3);
            continue;
        }
        let Some(close) = html[i..].find('>').map(|e| i + e) else {
            // A `<` that opens no tag is text.
            push_text(&mut out, &html[i..], in_pre > 0);
            break;
        };
        let tag = &html[i + 1..close];
        let closing = tag.starts_with('/');
        let name: String = tag
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
            .to_ascii_lowercase();
        i = close + 1;
        if name.is_empty() {
            continue;
        }
        if !closing && SKIPPED.contains(&name.as_str()) && !tag.ends_with('/') {
            // Skip to the matching close tag (case-insensitively).
            let needle = format!("</{name}");
            i = find_ascii_ci(html, i, &needle).map_or(bytes.len(), |at| {
                html[at..].find('>').map_or(bytes.len(), |e| at + e + 1)
            });
            if name == "head" {
                // The title is worth keeping even though the rest of <head> is not.
                if let Some(title) = title_of(&html[..i]) {
                    out.push_str("# ");
                    out.push_str(&title);
                    out.push('\n');
                }
            }
            continue;
        }
        match name.as_str() {
            "pre" => {
                in_pre = if closing {
                    in_pre.saturating_sub(1)
                } else {
                    in_pre + 1
                }
            }
            "td" | "th" if !closing && !out.ends_with('\n') && !out.is_empty() => {
                out.push_str(" | ");
            }
            "dl" if closing => lists = lists.saturating_sub(1),
            "dl" => lists += 1,
            _ => {}
        }
        // An empty anchor at the start of a line followed by a name in bold
        // (`<a name="sigma"></a><b>sigma</b>`, an options reference written by hand) opens
        // an entry as a definition term does: a heading one level under the section.
        if name == "a"
            && !closing
            && (out.is_empty() || out.ends_with('\n'))
            && is_anchored_name(tag, &html[i..])
        {
            out.push_str(&"#".repeat((heading_level + 1).min(6)));
            out.push(' ');
        }
        // A list item's first block (`<li><p>HMAC-SHA512</p></li>`, as Sphinx writes every
        // item) is the item's text, on the item's line.
        let item_text = !closing && name != "li" && (out == "- " || out.ends_with("\n- "));
        if BLOCKS.contains(&name.as_str()) && !item_text {
            newline(&mut out);
            if !closing {
                if let Some(level) = name.strip_prefix('h').and_then(|d| d.parse::<usize>().ok()) {
                    heading_level = level.clamp(1, 6);
                    lists = 0;
                    out.push_str(&"#".repeat(heading_level));
                    out.push(' ');
                } else if name == "li" {
                    out.push_str("- ");
                } else if name == "dt" && in_pre == 0 && !is_link_only(&html[i..]) {
                    out.push_str(&"#".repeat((heading_level + lists.max(1)).min(6)));
                    out.push(' ');
                } else if name == "p" && in_pre == 0 && is_named_entry(tag, &html[i..]) {
                    // `<p id="debounce"><b class="header">debounce</b><code>…`: a reference
                    // written by hand, each entry a paragraph with an id that opens with its
                    // name in bold, heads the paragraphs after it as a definition term does.
                    out.push_str(&"#".repeat((heading_level + 1).min(6)));
                    out.push(' ');
                }
            }
        }
    }
    newline(&mut out);
    out
}

/// Whether the `<a …>` tag `tag` is an empty anchor (a `name` or `id`, no `href`) and the
/// content after it, `rest`, opens with a bold or code name.
fn is_anchored_name(tag: &str, rest: &str) -> bool {
    let lower = tag.to_ascii_lowercase();
    let is_anchor = (lower.contains("name=") || lower.contains(" id=")) && !lower.contains("href=");
    let Some(after) = rest.trim_start().strip_prefix("</") else {
        return false;
    };
    let Some(after) = after
        .get(..2)
        .filter(|a| a.eq_ignore_ascii_case("a>"))
        .map(|_| &after[2..])
    else {
        return false;
    };
    let after = after.trim_start();
    is_anchor
        && ["<b>", "<strong>", "<code>", "<tt>"].iter().any(|open| {
            after
                .get(..open.len())
                .is_some_and(|a| a.eq_ignore_ascii_case(open))
        })
}

/// Whether the `<p …>` tag `tag` has an id and its content, `rest`, opens with a bold or
/// code name (its attributes aside: `<b class="header">`).
fn is_named_entry(tag: &str, rest: &str) -> bool {
    let lower = tag.to_ascii_lowercase();
    let rest = rest.trim_start();
    (lower.contains(" id=") || lower.contains("\tid="))
        && ["<b", "<strong", "<code", "<tt"].iter().any(|open| {
            rest.get(..open.len())
                .is_some_and(|a| a.eq_ignore_ascii_case(open))
                && rest[open.len()..].starts_with(['>', ' '])
        })
}

/// Whether the element content starting `rest` is a link first of all (`<span><a href=…>`,
/// the entries of a table of contents), which frames no definition of its own.
fn is_link_only(rest: &str) -> bool {
    let mut rest = rest.trim_start();
    while let Some(tag) = rest.strip_prefix('<') {
        let name: String = tag
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
            .to_ascii_lowercase();
        match name.as_str() {
            "a" => return true,
            "span" | "b" | "strong" | "code" | "em" | "i" => {}
            _ => return false,
        }
        let Some(close) = tag.find('>') else {
            return false;
        };
        rest = tag[close + 1..].trim_start();
    }
    false
}

fn memchr_lt(bytes: &[u8], from: usize) -> usize {
    bytes[from..]
        .iter()
        .position(|&b| b == b'<')
        .map_or(bytes.len(), |p| from + p)
}

fn find_ascii_ci(haystack: &str, from: usize, needle: &str) -> Option<usize> {
    let h = haystack.as_bytes();
    let n = needle.as_bytes();
    (from..h.len().saturating_sub(n.len() - 1))
        .find(|&at| h[at..at + n.len()].eq_ignore_ascii_case(n))
}

fn title_of(head: &str) -> Option<String> {
    let start = find_ascii_ci(head, 0, "<title")?;
    let open_end = head[start..].find('>')? + start + 1;
    let end = find_ascii_ci(head, open_end, "</title")?;
    let mut title = String::new();
    push_text(&mut title, &head[open_end..end], false);
    let title = title.trim().to_owned();
    (!title.is_empty()).then_some(title)
}

/// Ends the current line, leaving no blank or trailing-space lines behind.
fn newline(out: &mut String) {
    while out.ends_with(' ') {
        out.pop();
    }
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
}

/// Appends decoded text, collapsing whitespace runs to one space outside `<pre>`.
fn push_text(out: &mut String, raw: &str, preformatted: bool) {
    let decoded = decode_entities(raw);
    if preformatted {
        out.push_str(&decoded);
        return;
    }
    for c in decoded.chars() {
        if c.is_whitespace() {
            if !out.is_empty() && !out.ends_with(' ') && !out.ends_with('\n') {
                out.push(' ');
            }
        } else {
            out.push(c);
        }
    }
}

/// `raw` with character references (`&amp;`, `&#8217;`, `&#x41;`) decoded; an unknown one
/// stays as written.
pub(crate) fn decode_entities(raw: &str) -> std::borrow::Cow<'_, str> {
    if !raw.contains('&') {
        return raw.into();
    }
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        // An entity is short; look no further than 12 bytes (on a character boundary).
        let end = rest[..crate::tokens::floor_char_boundary(rest, 12)].find(';');
        let decoded = end.and_then(|end| entity(&rest[1..end]).map(|c| (c, end)));
        match decoded {
            Some((c, end)) => {
                out.push(c);
                rest = &rest[end + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out.into()
}

fn entity(name: &str) -> Option<char> {
    if let Some(num) = name.strip_prefix('#') {
        let code = match num.strip_prefix(['x', 'X']) {
            Some(hex) => u32::from_str_radix(hex, 16).ok()?,
            None => num.parse().ok()?,
        };
        return char::from_u32(code);
    }
    Some(match name {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        "nbsp" => ' ',
        "ndash" => '–',
        "mdash" => '—',
        "hellip" => '…',
        "lsquo" => '‘',
        "rsquo" => '’',
        "ldquo" => '“',
        "rdquo" => '”',
        "copy" => '©',
        "reg" => '®',
        "middot" => '·',
        "bull" => '•',
        "times" => '×',
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_headings_lists_and_tables() {
        let html = "<html><head><title>T</title><style>p{}</style></head><body>\
            <h2>Part</h2><p>Some <b>bold</b> text &amp; more.</p>\
            <ul><li>one</li><li>two</li></ul>\
            <table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table>\
            <script>var x = '<p>';</script></body></html>";
        let text = to_text(html);
        assert_eq!(
            text,
            "# T\n## Part\nSome bold text & more.\n- one\n- two\na | b\n1 | 2\n"
        );
    }

    #[test]
    fn a_page_its_scripts_build_is_an_app_shell() {
        // A report page whose rows are data in a script: its readable text is its title.
        let mut shell = String::from(
            "<html><head><title>Coverage</title></head><body><div id=\"root\"></div><script>var data = [",
        );
        for i in 0..200 {
            shell.push_str(&format!(
                "{{\"path\": \"src/mod{i}.rs\", \"covered\": {i}, \"lines\": 300}},"
            ));
        }
        shell.push_str("];</script></body></html>");
        assert!(is_app_shell(&shell, &to_text(&shell)));
        // A page of prose is read as its text, however much markup it carries.
        let mut page = String::from("<html><body>");
        for i in 0..200 {
            page.push_str(&format!(
                "<div class=\"row\"><p class=\"para\">Paragraph {i} says what it means.</p></div>"
            ));
        }
        page.push_str("</body></html>");
        assert!(!is_app_shell(&page, &to_text(&page)));
    }

    #[test]
    fn a_paragraph_that_opens_a_list_item_is_on_the_items_line() {
        let html = "<p>The supported algorithms are listed below:</p>\n<ul class=\"simple\">\n<li><p>HMAC-MD5</p></li>\n<li><p>HMAC-SHA512</p></li>\n</ul>\n<p>This value is not case-sensitive.</p>";
        assert_eq!(
            to_text(html),
            "The supported algorithms are listed below:\n- HMAC-MD5\n- HMAC-SHA512\nThis value is not case-sensitive.\n"
        );
    }

    #[test]
    fn a_definition_term_heads_its_definition_under_the_section() {
        // A man page's variables (man2html), one list nested in another's definition.
        let html = "<H2>Shell Variables</H2><DL COMPACT>\
            <DT><B>HISTSIZE</B><DD>The number of commands to remember. The shell sets the \
            default value to 500.<DL><DT>Note<DD>Nested.</DL>\
            <DT><B>HOME</B><DD>The home directory.</DL><H2>Next</H2><P>After.</P>";
        assert_eq!(
            to_text(html),
            "## Shell Variables\n### HISTSIZE\nThe number of commands to remember. The shell \
             sets the default value to 500.\n#### Note\nNested.\n### HOME\nThe home \
             directory.\n## Next\nAfter.\n"
        );
    }

    #[test]
    fn an_anchored_bold_name_heads_its_entry_under_the_section() {
        // An options reference written by hand: each entry a block opened by an empty
        // anchor and the option's name in bold, its text and type in the blocks after.
        let html = "<h3>Data</h3><div class='option'><p><a name=\"rollPeriod\"></a>\
            <b>rollPeriod</b> <a class=\"link\" href=\"#rollPeriod\">#</a></p>\
            <p>Number of days to average.</p><p><i>Default: 1</i></p></div>\
            <p><a id=\"x\"></a>Plain text after an anchor is no name.</p>";
        assert_eq!(
            to_text(html),
            "### Data\n#### rollPeriod #\nNumber of days to average.\nDefault: 1\n\
             Plain text after an anchor is no name.\n"
        );
    }

    #[test]
    fn a_paragraph_with_an_id_opening_with_a_bold_name_heads_its_entry() {
        // Underscore's reference: each function a paragraph with an id, its name in bold and
        // its signature in code, its other paragraphs and example after it.
        let html = "<h2>Functions</h2><p id=\"debounce\"><b class=\"header\">debounce</b>\
            <code>_.debounce(function, wait)</code><br />Postpones its execution.</p>\
            <p>Pass true to trigger on the leading edge.</p>\
            <p id=\"plain\">Plain text with an id is no name.</p>";
        assert_eq!(
            to_text(html),
            "## Functions\n### debounce_.debounce(function, wait)\nPostpones its execution.\n\
             Pass true to trigger on the leading edge.\nPlain text with an id is no name.\n"
        );
    }

    #[test]
    fn a_table_of_contents_entry_is_no_heading() {
        let html = "<h1>Configuration</h1><dl class=\"toc\"><dt><span class=\"sect1\">\
            <a href=\"#x\">1. Location</a></span></dt><dt><a href=\"#y\">2. Syntax</a></dt></dl>";
        assert_eq!(to_text(html), "# Configuration\n1. Location\n2. Syntax\n");
    }

    #[test]
    fn unclosed_tags_and_stray_angles_do_not_panic() {
        for html in [
            "<",
            "<p",
            "a < b",
            "<script>never closed",
            "&#xZZ; &amp",
            "<h9>x</h9>",
        ] {
            let _ = to_text(html);
        }
    }
}
