use super::*;

#[test]
fn malformed_json_is_text() {
    assert_eq!(detect("{\"a\": 1,,, oops").0, ContentKind::Text);
}

#[test]
fn json_lines_are_recognised() {
    assert_eq!(
        detect("{\"a\":1}\n{\"a\":2}\n{\"a\":3}\n").0,
        ContentKind::JsonLines
    );
}

#[test]
fn a_log_of_delimited_fields_is_a_log_and_a_table_with_a_header_a_table() {
    // Prosody's `time<TAB>source<TAB>level<TAB>message`: every line, the first too, an entry.
    let mut log = String::new();
    let mut table = String::from("time,source,level,message\n");
    for i in 0..40 {
        let line = format!(
            "Nov 29 03:26:{:02}\tc2s55{i:02}\tdebug\tSent reply to client",
            i % 60
        );
        log.push_str(&line);
        log.push('\n');
        table.push_str(&line.replace('\t', ","));
        table.push('\n');
    }
    assert_eq!(detect(&log).0, ContentKind::Log);
    assert_eq!(detect(&table).0, ContentKind::Csv);
}

#[test]
fn a_log_stamped_with_the_seconds_since_start_is_a_log() {
    // NUT's `upsd -D`: elapsed seconds, a tab, the message; the kernel's `[    4.123456] …`.
    let (mut nut, mut kernel, mut table) = (String::new(), String::new(), String::new());
    for i in 0..40 {
        let at = f64::from(i) * 0.731;
        nut.push_str(&format!(
            "{at:>10.6}\t[D2] write: [destfd=6] [len={i}] [OK]\n"
        ));
        kernel.push_str(&format!(
            "[{at:>12.6}] usb 1-{i}: new high-speed USB device\n"
        ));
        table.push_str(&format!("{at:.2}\t{}\tok\n", i * 3));
    }
    assert_eq!(detect(&nut).0, ContentKind::Log);
    assert_eq!(detect(&kernel).0, ContentKind::Log);
    // Numbers with fewer decimals are a table's values.
    assert_eq!(detect(&table).0, ContentKind::Csv);
}

#[test]
fn a_log_whose_tracebacks_outnumber_its_entries_is_a_log() {
    let mut log = String::new();
    for i in 0..20 {
        log.push_str(&format!(
                "[2026-11-28 03:53:{i:02},141: INFO/MainProcess] Task tasks.crunch[{i}] received\n\
                 [2026-11-28 03:53:{i:02},142: INFO/MainProcess] Task tasks.ratio[{i}] received\n\
                 [2026-11-28 03:53:{i:02},148: INFO/ForkPoolWorker-2] Task tasks.crunch[{i}] succeeded in 0.0012s: 42\n"
            ));
        log.push_str(&format!(
                "[2026-11-28 03:53:{i:02},150: ERROR/ForkPoolWorker-1] Task tasks.ratio[{i}] raised unexpected: ZeroDivisionError('division by zero')\n\
                 Traceback (most recent call last):\n  File \"/venv/celery/app/trace.py\", line 453, in trace_task\n    R = retval = fun(*args, **kwargs)\n  File \"/work/tasks.py\", line 12, in ratio\n    return a / b\n           ~~^~~\nZeroDivisionError: division by zero\n"
            ));
    }
    assert_eq!(detect(&log).0, ContentKind::Log);
}

#[test]
fn code_that_calls_what_it_indexes_has_no_markdown_links() {
    assert!(has_markdown_link(
        "See [the guide](docs/guide.md) and [usage](#usage)."
    ));
    assert!(has_markdown_link(
        "[PEP 8](https://peps.python.org/pep-0008/)"
    ));
    assert!(!has_markdown_link(
        "        raise a[0](a[1]).with_traceback(a[2])"
    ));
    assert!(!has_markdown_link(
        "    return request.environ['wsgi.file_wrapper'](out)"
    ));
    let mut source = "#!/usr/bin/env python\n# -*- coding: utf-8 -*-\nimport sys\n\n".to_owned();
    for i in 0..12 {
        source.push_str(&format!(
                "def handler_{i}(self, mode, conf):\n    \"\"\"Apply the filter.\"\"\"\n    mask, flt = self.filters[mode](conf)\n    if mask:\n        return flt\n    return None\n\n"
            ));
    }
    assert_eq!(detect(&source).0, ContentKind::Code);
}

#[test]
fn html_is_recognised_by_its_doctype() {
    assert_eq!(
        detect("<!DOCTYPE html>\n<html><body><p>x</p></body></html>").0,
        ContentKind::Html
    );
}

#[test]
fn html_after_http_headers_is_html() {
    let page =
        "<!DOCTYPE HTML PUBLIC \"-//W3C//DTD HTML 4.01//EN\">\n<HTML><BODY><P>x</P></BODY></HTML>";
    let cgi = format!("Content-type: text/html; charset=UTF-8\n\n{page}");
    assert_eq!(detect(&cgi).0, ContentKind::Html);
    let curl = format!("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n{page}");
    assert_eq!(detect(&curl).0, ContentKind::Html);
    // Header-like lines not followed by a page are not a page.
    assert_ne!(detect("Name: value\n\nplain text\n").0, ContentKind::Html);
}

#[test]
fn empty_input_is_text() {
    assert_eq!(detect("").0, ContentKind::Text);
}

#[test]
fn python_is_code() {
    let text = "class Column(Base):\n    max_refresh = 0.5\n\n    def render(self, task):\n        elapsed = task.elapsed\n        if elapsed is None:\n            return Text(\"-:--:--\")\n        delta = timedelta(seconds=int(elapsed))\n        return Text(str(delta))\n";
    assert_eq!(detect(text).0, ContentKind::Code);
}

#[test]
fn code_with_hash_comments_is_code() {
    let text = "# Copyright\n# Licensed under the same terms\npackage File::Temp;\nuse strict;\n\n# Default options\nsub tempfile {\n  my %options = (\"UNLINK\" => 0);\n  return $fh;\n}\n# helpers\nsub _parse_args {\n  my $x = shift;\n}\n";
    assert_eq!(detect(text).0, ContentKind::Code);
}

#[test]
fn yaml_under_a_comment_header_is_not_markdown() {
    let mut text =
        String::from("# Copyright 2020 Example LLC.\n#\n# Licensed under the Apache License.\n\n");
    for flag in ["client_type", "description", "display_name", "disabled"] {
        text.push_str(&format!("{flag}:\n  api_field: oauthClient.{flag}\n  arg_name: {flag}\n  help_text: |-\n    The {flag} of the client.\n  choices:\n  - arg_value: a\n"));
    }
    assert_eq!(detect(&text).0, ContentKind::Text);
    let markdown = "# Title\n\nSome text: here.\n\n## Part\n\n- item: one\n- item two\n";
    assert_eq!(detect(markdown).0, ContentKind::Markdown);
}

#[test]
fn test_reports_with_boxed_titles_or_subtest_comments_are_not_markdown() {
    // `python -m unittest -v`: each failure's title is boxed between two rulers.
    let mut unittest = String::from("test_a (t.T.test_a) ... ok\ntest_b (t.T.test_b) ... FAIL\n\n");
    for name in ["test_b", "test_c", "test_d"] {
        unittest.push_str(&format!(
            "{}\nFAIL: {name} (t.T.{name})\n{}\nTraceback (most recent call last):\n  \
                 File \"t.py\", line 9, in {name}\nAssertionError: 1 != 2\n\n",
            "=".repeat(70),
            "-".repeat(70)
        ));
    }
    unittest.push_str(&format!(
        "{}\nRan 4 tests in 0.001s\n\nFAILED (failures=3)\n",
        "-".repeat(70)
    ));
    assert_eq!(detect(&unittest).0, ContentKind::Text);
    // TAP: `# Subtest:` lines are comments among numbered results.
    let tap = "TAP version 14\n# Subtest: test/a.test.js\n    ok 1 - parses\n    not ok 2 - rounds\n      ---\n      found: 1\n      wanted: 2\n      ...\n    1..2\nnot ok 1 - test/a.test.js\n# Subtest: test/b.test.js\n    ok 1 - b\n    1..1\nok 2 - test/b.test.js\n1..2\n";
    assert_eq!(detect(tap).0, ContentKind::Text);
    let setext = "Title\n=====\n\nSome text.\n\nUsage\n-----\n\nRun it.\n";
    assert_eq!(detect(setext).0, ContentKind::Markdown);
}

#[test]
fn a_program_that_rules_lines_under_the_lines_before_them_writes_no_markdown() {
    // A backup tool's verbose run: a banner between rulers, a status title underlined, all
    // amid the lines of its work; a document puts a blank line before each heading.
    let ruler = "=".repeat(40);
    let mut run = String::new();
    for action in ["full", "incremental", "verify"] {
        run.push_str(&format!(
            "Reading config /etc/tool/app.conf\nMain action: {action}\n{ruler}\ntool 1.2.3\n\
             Args: tool --verbose {action} src dest\n{ruler}\nUsing temporary directory \
             /tmp/tool-x\nScanning sources\nCollection Status\n-----------------\n\
             Archive dir: /var/cache/tool\nFound 1 backup chains\nWrote volume 1 (2 MB)\n"
        ));
    }
    assert_ne!(detect(&run).0, ContentKind::Markdown);
}

#[test]
fn a_report_that_underlines_one_title_before_each_entry_is_not_markdown() {
    // Cython boxes each error's snippet under `Error compiling Cython file:` and a ruler.
    let mut report = String::from("warning: a.pyx:3:7: implicit declaration of 'yaml'\n");
    for line in [12, 40, 77] {
        report.push_str(&format!(
            "\nError compiling Cython file:\n{ruler}\n...\n    cdef int n = 0\n        \
             return m\n               ^\n{ruler}\na.pyx:{line}:15: undeclared name not \
             builtin: m\n",
            ruler = "-".repeat(60)
        ));
    }
    assert_eq!(detect(&report).0, ContentKind::Text);
}

#[test]
fn documents_printed_one_after_another_are_one_json_array() {
    // `go list -json` and `jq '.[]'` print each value over many lines, one after another.
    let mut stream = String::new();
    for name in ["fmt", "io", "example.com/app/internal/util"] {
        stream.push_str(&format!(
            "{{\n\t\"ImportPath\": \"{name}\",\n\t\"GoFiles\": [\n\t\t\"a.go\"\n\t]\n}}\n"
        ));
    }
    let (kind, value) = detect(&stream);
    assert_eq!(kind, ContentKind::Json);
    let value = value.unwrap();
    assert_eq!(value[2]["ImportPath"], "example.com/app/internal/util");
    // A log line that opens with a document is still no stream.
    assert_ne!(detect("{\"a\": 1}\nstarted in 3 ms\n").0, ContentKind::Json);
}

#[test]
fn a_dump_that_annotates_each_packet_with_settings_is_not_markdown() {
    // A packet dump prints `# off=… tag=…` over each packet it decodes.
    let mut dump = String::new();
    for (i, offset) in [0, 528, 1121, 1714].iter().enumerate() {
        dump.push_str(&format!(
            "# off={offset} ctb=89 tag=2 hlen=3 plen=590\n:signature packet: algo 1, keyid \
             73A4F27B8DD4793{i}\n\tversion 4, created 1610882319, md5len 0, sigclass 0x1f\n\
             \thashed subpkt 2 len 4 (sig created 2021-01-17)\n"
        ));
    }
    assert_eq!(detect(&dump).0, ContentKind::Text);
    // Headings that only mention a setting are still headings.
    let markdown = "# Setting retries=3\n\nSome text.\n\n## Usage\n\nRun it.\n";
    assert_eq!(detect(markdown).0, ContentKind::Markdown);
}

#[test]
fn a_config_file_of_comment_blocks_is_not_markdown() {
    // The shape of redis.conf or java.security: prose in `#` blocks over settings.
    let text = "# Redis configuration file example.\n#\n# Note that in order to read the \
                    configuration file, Redis must be\n# started with the file path.\n\n\
                    # Accept connections on the specified port, default is 6379.\n\
                    # If port 0 is specified Redis will not listen on a TCP socket.\n\
                    port 6379\n\n# TCP listen() backlog.\n#\n# In high requests-per-second \
                    environments you need a high backlog.\ntcp-backlog 511\n";
    assert_ne!(detect(text).0, ContentKind::Markdown);
    let markdown = "# Title\n\nSome text.\n\n## Usage\n\nRun it.\n\n## Options\n\nNone.\n";
    assert_eq!(detect(markdown).0, ContentKind::Markdown);
}

#[test]
fn an_underlined_changelog_is_markdown_though_its_items_read_like_comments() {
    // `  * ` items read like the lines of a block comment; underlined versions are headings.
    let mut changelog = String::new();
    for minor in (0..12).rev() {
        changelog.push_str(&format!(
            "1.{minor}.0 / 2025-05-{:02}\n=================\n",
            minor + 1
        ));
        for item in [
            "use `get-proto` directly",
            "update `eslint`, `npmignore`",
            "add `ES2025`",
        ] {
            changelog.push_str(&format!("  * [Refactor] {item}\n"));
        }
        changelog.push('\n');
    }
    assert_eq!(detect(&changelog).0, ContentKind::Markdown);
}

#[test]
fn lists_of_records_in_yaml_and_xml_are_trees() {
    let mut yaml = String::from("apiVersion: v1\nitems:\n");
    let mut xml = String::from("<?xml version=\"1.0\"?>\n<feed>\n  <title>Releases</title>\n");
    for i in 0..6 {
        yaml.push_str(&format!("- kind: Pod\n  metadata:\n    name: web-{i}\n    namespace: default\n  spec:\n    containers:\n    - image: nginx:1.2{i}\n      name: web\n  status:\n    phase: Running\n    podIP: 10.0.0.{i}\n"));
        xml.push_str(&format!("  <entry>\n    <id>tag:v1.{i}</id>\n    <updated>2024-0{i}-01</updated>\n    <body>Fixes &lt;issue {i}&gt;</body>\n  </entry>\n"));
    }
    yaml.push_str("kind: List\n");
    xml.push_str("</feed>\n");
    let (kind, tree) = detect(&yaml);
    assert_eq!(kind, ContentKind::Yaml);
    assert_eq!(tree.unwrap()["items"][5]["status"]["podIP"], "10.0.0.5");
    let (kind, tree) = detect(&xml);
    assert_eq!(kind, ContentKind::Xml);
    assert_eq!(tree.unwrap()["feed"]["entry"][2]["body"], "Fixes <issue 2>");
    // Broken: read as lines, as before.
    let broken = xml.replace("</feed>", "");
    assert_ne!(detect(&broken).0, ContentKind::Xml);
}

#[test]
fn grep_output_is_not_code() {
    let text = "src/a.rs:1:fn main() {\nsrc/a.rs:2:    let x = 1;\nsrc/b.rs:9:}\n";
    assert_eq!(detect(text).0, ContentKind::Text);
}

#[test]
fn a_changelog_of_starred_items_is_markdown_not_a_block_comment() {
    // RubyGems' CHANGELOG.md: `* ` items at the margin, wrapped lines indented under them.
    let release = |v: usize| {
        format!(
            "# 3.3.{v} / 2022-06-01\n\n## Enhancements:\n\n\
             * Support the change of did_you_mean about `Exception#detailed_message`.\n  \
             Pull request #5560 by mame\n* Installs bundler 2.3.{v} as a default gem.\n\n\
             ## Bug fixes:\n\n\
             * Fix loading old marshaled specs including `YAML::PrivateType` constant.\n  \
             Pull request #5415 by deivid-rodriguez\n\
             * Fix rubygems update when non default `--install-dir` is configured. Pull\n  \
             request #5566 by deivid-rodriguez\n\n"
        )
    };
    let text: String = (0..8).rev().map(release).collect();
    assert_eq!(detect(&text).0, ContentKind::Markdown);
}

#[test]
fn records_of_tab_indented_fields_are_no_table_but_a_tab_separated_table_is() {
    // `fc-list -v`: a pattern's fields each on a line that opens with a tab.
    let mut dump = String::new();
    let mut table = String::from("\tfamily\tstyle\n");
    for i in 0..12 {
        dump.push_str("Pattern has 25 elts (size 32)\n");
        for field in [
            "family",
            "familylang",
            "style",
            "stylelang",
            "fullname",
            "foundry",
        ] {
            dump.push_str(&format!("\t{field}: \"Font{i}\"(s)\n"));
        }
        for field in ["slant", "weight", "width", "index", "fontversion", "order"] {
            dump.push_str(&format!("\t{field}: {}(i)(s)\n", 65536 + i));
        }
        dump.push_str(&format!("\tfile: \"/usr/share/fonts/font{i}.ttf\"(s)\n\n"));
        table.push_str(&format!("{i}\tFont{i}\tRegular\n"));
    }
    assert_ne!(detect(&dump).0, ContentKind::Csv);
    assert_eq!(detect(&table).0, ContentKind::Csv);
}

#[test]
fn a_json_document_with_a_number_too_large_for_a_float_is_json() {
    // sslyze writes an RSA modulus as an integer of hundreds of digits.
    let modulus = "2866347366359264716090418699193372217722953266138268228342848456".repeat(8);
    let text = format!(
        "{{\"certificates\": [{{\"subject\": \"CN=localhost\", \"public_key\": \
         {{\"rsa_n\": {modulus}, \"rsa_e\": 65537}}}}], \"port\": 14443}}"
    );
    let (kind, value) = detect(&text);
    assert_eq!(kind, ContentKind::Json);
    let value = value.expect("parsed");
    assert_eq!(value["port"], 14443);
    assert_eq!(
        value["certificates"][0]["public_key"]["rsa_n"],
        modulus.as_str()
    );
    // A string that holds such digits is left as it is.
    let quoted = format!("{{\"n\": \"{modulus}\", \"m\": [1e999]}}");
    assert_eq!(detect(&quoted).1.expect("parsed")["n"], modulus.as_str());
}

#[test]
fn a_markdown_file_that_opens_with_a_centred_html_banner_is_markdown() {
    let banner = "<div align='center'>\n\n<h1>Sinclair TypeBox</h1>\n\n<p>Json Schema Type Builder</p>\n\n</div>\n\n";
    let mut readme =
        format!("{banner}## Install\n\n```bash\n$ npm install @sinclair/typebox\n```\n\n");
    for i in 0..30 {
        readme.push_str(&format!(
            "### Section {i}\n\nThe builder makes type {i} with options.\n\n"
        ));
    }
    assert_eq!(detect(&readme).0, ContentKind::Markdown);
    // A fragment of tags alone is HTML.
    let mut fragment = String::from("<div class=\"doc\">\n");
    for i in 0..30 {
        fragment.push_str(&format!(
            "<h3>Section {i}</h3>\n<p>The builder makes type {i}.</p>\n"
        ));
    }
    fragment.push_str("</div>\n");
    assert_eq!(detect(&fragment).0, ContentKind::Html);
}

#[test]
fn a_python_module_documented_at_length_is_code() {
    // Each function's numpy-style docstring is longer than its body.
    let mut module = String::from("\"\"\"\nShortest paths.\n\"\"\"\n\nimport heapq\n\n");
    for f in 0..12 {
        module.push_str(&format!("def path_{f}(G, source, weight=\"weight\"):\n"));
        module.push_str(
            "    \"\"\"Returns the shortest path from source.\n\n    Parameters\n    ----------\n",
        );
        for p in 0..25 {
            module.push_str(&format!(
                "    arg{p} : node\n        Starting node number {p} for the path, as given.\n"
            ));
        }
        module.push_str("    \"\"\"\n    dist = {}\n    return dist\n\n");
    }
    assert_eq!(detect(&module).0, ContentKind::Code);
    // A test report quoting definitions opens with its banner, and stays text.
    let report = format!("============ test session starts ============\n{module}");
    assert_ne!(detect(&report).0, ContentKind::Code);
}

#[test]
fn a_linter_report_quoting_the_lines_it_flags_is_no_code() {
    let mut report = String::new();
    for i in 0..12 {
        report.push_str(&format!(
            "possible bashism in /etc/init.d/svc{i} line {} (local foo=bar):\n\tlocal STATUS=$1\n",
            90 + i
        ));
        report.push_str(&format!(
            "possible bashism in /usr/bin/tool{i} line {} (test -a/-o):\n  if [ -n \"$X\" -a -z \"$Y\" ]; then\n",
            20 + i
        ));
    }
    assert_eq!(detect(&report).0, ContentKind::Text);
    // Code that mentions a file's line in a comment now and then is still code.
    let mut code = String::new();
    for i in 0..12 {
        code.push_str(&format!(
            "fn f{i}() -> u32 {{\n    let x = {i};\n    // see src/lib.rs line {i}\n    x + 1\n}}\n"
        ));
    }
    assert_eq!(detect(&code).0, ContentKind::Code);
}

/// Python's `-v` trace names what it imported in quotes: no statement does.
#[test]
fn an_import_trace_is_not_code() {
    let mut trace = String::new();
    for name in [
        "_thread",
        "_warnings",
        "_weakref",
        "_io",
        "marshal",
        "posix",
        "time",
        "zipimport",
        "codecs",
        "encodings",
        "abc",
        "io",
        "stat",
        "genericpath",
        "posixpath",
        "os",
    ] {
        trace.push_str(&format!(
            "# code object from '/usr/lib/python3.11/{name}.pyc'\nimport '{name}' # <class '_frozen_importlib.BuiltinImporter'>\n"
        ));
    }
    assert_ne!(detect(&trace).0, ContentKind::Code);
}
