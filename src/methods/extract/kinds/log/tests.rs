use super::*;

#[test]
fn recognises_common_log_prefixes() {
    assert!(starts_entry(
        "2015-07-29 17:41:44,747 - INFO  [QuorumPeer] - x"
    ));
    assert!(starts_entry("081109 203615 148 INFO dfs.DataNode: x"));
    assert!(starts_entry(
        "Jun 14 15:16:01 combo sshd(pam_unix)[19939]: x"
    ));
    assert!(starts_entry(
        "[Sun Dec 04 04:47:44 2005] [error] mod_jk child"
    ));
    assert!(!starts_entry("    at org.example.Foo.bar(Foo.java:12)"));
}

#[test]
fn a_failure_stated_at_a_low_level_gains_as_a_warning() {
    let text = "[2026-11-28 20:52:04,887] auth:217 :: DEBUG - Authentication failure: \
                password mismatch for user 'boiler'\n\
                [2026-11-28 20:52:04,888] auth:220 :: DEBUG - Authentication checked for \
                user 'boiler'\n\
                [2026-11-28 20:52:04,889] auth:221 :: ERROR - Authentication backend down\n";
    let doc = build(text);
    assert!(doc.units[0].prior > doc.units[1].prior);
    assert_eq!(doc.units[0].level, Level::Debug);
    assert!(doc.units[2].prior > doc.units[0].prior);
}

#[test]
fn an_entry_that_goes_on_to_an_exception_failed() {
    // A debug log: a request's final handler answers 403, then the error and its frames.
    let text = "\
Mon, 30 Nov 2026 05:15:58 GMT router dispatch : /docs/%2e%2e/secret
Mon, 30 Nov 2026 05:15:58 GMT final handler default 403
PermissionDeniedError: Not allowed
    at /srv/node_modules/static-index/index.js:129:19
    at Layer.handle (/srv/node_modules/router/layer.js:95:5)
Mon, 30 Nov 2026 05:15:59 GMT router dispatch : /index.html
";
    let doc = build(text);
    let entry = (0..doc.units.len())
        .find(|&u| doc.text(u).contains("default 403"))
        .expect("the 403 entry");
    assert!(doc.text(entry).contains("PermissionDeniedError"));
    assert_eq!(doc.units[entry].level, Level::Error);
    assert!(doc.units[entry].prior > doc.units[0].prior);
}

#[test]
fn a_trace_logged_one_entry_a_line_ends_with_an_error() {
    // A WSGI server logs each line of a handler's trace as an INFO entry of its own.
    let text = "\
2026-11-30 18:32:35,943 [INFO] Traceback (most recent call last):
2026-11-30 18:32:35,943 [INFO]   File \"/srv/app.py\", line 52, in app
2026-11-30 18:32:35,944 [INFO]     eta = 10 / order['priority']
2026-11-30 18:32:35,944 [INFO] ZeroDivisionError: division by zero
2026-11-30 18:32:35,944 [INFO] Request handled in 0.4 ms: error rate 0%
";
    let doc = build(text);
    let prior = |needle: &str| {
        let u = (0..doc.units.len())
            .find(|&u| doc.text(u).contains(needle))
            .expect(needle);
        doc.units[u].prior
    };
    assert_eq!(prior("ZeroDivisionError"), level_prior(Level::Error, false));
    assert_eq!(prior("line 52"), 0.0);
    assert!(prior("Request handled") < prior("ZeroDivisionError"));
}

#[test]
fn an_entry_quoting_a_failure_below_its_head_gains_as_a_warning() {
    // OctoPrint's INFO entry dumps the printer's last lines, one of which is its error.
    let text = "2026-11-30 15:32:11,043 - octoprint.util.comm - INFO - Got a resend request\n\
                | Last lines in terminal:\n\
                | Send: N100 G1 X9.5 Y11.4\n\
                | Recv: Error: Checksum mismatch\n\
                2026-11-30 15:32:11,050 - octoprint.util.comm - INFO - Changing state\n\
                | Last lines in terminal:\n\
                | Recv: ok\n\
                2026-11-30 15:32:12,000 - octoprint.server - INFO - Shutting down\n";
    let doc = build(text);
    assert_eq!(doc.units.len(), 3);
    assert_eq!(doc.units[0].prior, level_prior(Level::Warn, true));
    assert_eq!(doc.units[1].prior, 0.0);
}

#[test]
fn reads_explicit_levels() {
    assert_eq!(
        explicit_level("2015-07-29 23:44:28,903 - ERROR [x] - y"),
        Some(Level::Error)
    );
    assert_eq!(
        explicit_level("[Sun Dec 04 04:47:44 2005] [notice] ok"),
        Some(Level::Info)
    );
    assert_eq!(
        explicit_level("03-17 16:13:38.811  1702  2395 W Foo: x"),
        Some(Level::Warn)
    );
    // socat: a one-letter level after the process and its pid.
    assert_eq!(
        explicit_level("2026/11/28 17:50:46 socat[24048] W exiting on signal 15"),
        Some(Level::Warn)
    );
    assert_eq!(
        explicit_level("2026/11/28 17:50:31 socat[24075] N inactivity timeout triggered"),
        Some(Level::Info)
    );
    // PulseAudio: a one-letter level after the seconds since start and since the last line.
    assert_eq!(
        explicit_level("(   3.083|   0.000) E: [pulseaudio][module.c:190 pa_module_load()] Failed"),
        Some(Level::Error)
    );
    assert_eq!(explicit_level("took 1.5 I think"), None);
    assert_eq!(explicit_level("see socat W for the rest"), None);
    assert_eq!(
        explicit_level("Nov 28 10:00:00 host smartd[812]: I/O error on /dev/sda"),
        None
    );
    assert_eq!(
        explicit_level("[2026-11-28 03:53:06,141: WARNING/MainProcess] No hostname"),
        Some(Level::Warn)
    );
    assert_eq!(explicit_level("an error happened"), None);
}

#[test]
fn reads_a_bracketed_letter_before_the_date() {
    assert_eq!(
        explicit_level("[W 2024-05-01 10:00:00.123 Hub base:41] Failed login for 'x'"),
        Some(Level::Warn)
    );
    assert_eq!(
        explicit_level("[E 240501 10:00:00 web:2106] Uncaught exception"),
        Some(Level::Error)
    );
    assert_eq!(
        explicit_level("[C 2024-05-01 10:00:00.123 Hub app:40] Received signal"),
        Some(Level::Error)
    );
    assert_eq!(
        explicit_level("[D 2024-05-01 10:00:00.123 Hub app:40] Loaded"),
        Some(Level::Debug)
    );
    // A bracketed letter before no date is no level (a list item, a footnote).
    assert_eq!(explicit_level("[W] see the warnings below"), None);
    assert_eq!(explicit_level("[E x] an entry"), None);
}

#[test]
fn stack_traces_stay_with_their_entry() {
    let text = "2020-01-01 00:00:00 ERROR boom\n  at a.b(C.java:1)\n  at d.e(F.java:2)\n2020-01-01 00:00:01 INFO ok\n";
    let doc = build(text);
    assert_eq!(doc.units.len(), 2);
    assert!(doc.text(0).ends_with("F.java:2)"));
    assert_eq!(doc.units[0].level, Level::Error);
}

#[test]
fn a_long_trace_keeps_its_top_with_the_entry_and_its_frames_under_it() {
    // Sinatra's dumped error: the class and message, then a dozen frames of the framework.
    let mut text = String::from(
        "2026-11-28 07:06:42 - KeyError - key not found: \"chai\":\n\t/app/app.rb:21:in `fetch'\n",
    );
    for i in 0..10 {
        text.push_str(&format!("\t/gems/sinatra/base.rb:{i}:in `route_eval'\n"));
    }
    text.push_str(
        "2026-11-28 07:06:43 - NoMethodError - undefined method `sum' for nil:NilClass:\n",
    );
    let doc = build(&text);
    assert_eq!(
        doc.text(0).lines().count(),
        FIRST_UNIT_LINES,
        "{}",
        doc.text(0)
    );
    assert_eq!(doc.units[1].parent.get(), Some(0));
    assert!(
        doc.text(doc.units.len() - 1)
            .starts_with("2026-11-28 07:06:43")
    );
    // A Java root cause under the entry is no frame: it stays in the entry's first unit.
    assert!(!is_frame_line("\tjava.lang.ArithmeticException: / by zero"));
    assert!(is_frame_line(
        "\t\tat org.apache.jsp.price_jsp._jspService(price_jsp.java:121)"
    ));
}

#[test]
fn the_exception_a_python_trace_ends_with_is_a_unit_under_its_entry() {
    let mut text = String::from(
        "2026-11-28 07:04:48,407 ERROR [app] Exception on /orders [POST]\nTraceback (most recent call last):\n",
    );
    for i in 0..8 {
        text.push_str(&format!("  File \"/venv/flask/app.py\", line {i}, in dispatch\n    rv = self.dispatch_request()\n"));
    }
    text.push_str("sqlite3.OperationalError: database is locked\n");
    text.push_str("2026-11-28 07:04:48,409 INFO [werkzeug] \"POST /orders HTTP/1.1\" 500 -\n");
    let doc = build(&text);
    let texts: Vec<&str> = (0..doc.units.len()).map(|u| doc.text(u)).collect();
    let raised = texts
        .iter()
        .position(|t| t.starts_with("sqlite3.OperationalError"))
        .expect("the exception starts a unit");
    assert_eq!(doc.units[raised].level, Level::Error, "{texts:?}");
    assert_eq!(doc.units[raised].parent.get(), Some(0), "{texts:?}");
    assert!(is_raised_exception("KeyError: 'item_id'"));
    assert!(!is_raised_exception("    raise KeyError(key)"));
    assert!(!is_raised_exception("The TypeError: was expected"));
}

#[test]
fn a_chained_trace_ends_the_unit_of_the_exception_before_it() {
    // The root cause, raised first, and the exception raised while handling it.
    let mut text = String::from(
        "2026-11-28 07:04:48,407 ERROR [app] Exception on /orders [POST]\nTraceback (most recent call last):\n",
    );
    text.push_str("  File \"/srv/store.py\", line 12, in save\n    conn.execute(sql)\n");
    text.push_str("sqlite3.OperationalError: database is locked\n\n");
    text.push_str(
        "The above exception was the direct cause of the following exception:\n\nTraceback (most recent call last):\n",
    );
    text.push_str("  File \"/srv/app.py\", line 40, in post\n    store.save(order)\n");
    text.push_str("app.StoreError: cannot save order 17\n");
    let doc = build(&text);
    let texts: Vec<&str> = (0..doc.units.len()).map(|u| doc.text(u)).collect();
    let root = texts
        .iter()
        .position(|t| t.contains("sqlite3.OperationalError"))
        .expect("the root cause is kept");
    assert!(
        texts[root].ends_with("database is locked"),
        "the root cause ends its unit, the chaining starts the next: {texts:?}"
    );
    let chaining = texts
        .iter()
        .position(|t| t.starts_with("The above exception"))
        .expect("the chaining starts a unit");
    assert_eq!(doc.units[chaining].parent.get(), Some(0), "{texts:?}");
}

#[test]
fn a_short_trace_s_exception_is_part_of_its_entry_s_kind() {
    // The same line logs every exception a remote call raised; what was raised sets the
    // entries apart, and the same exception of another meter is a repeat.
    let mut text = String::new();
    for (i, raised) in [
        "PermissionError: meter MTR-0113 is flagged tampered",
        "PermissionError: meter MTR-0114 is flagged tampered",
        "KeyError: 'MTR-9999'",
    ]
    .iter()
    .enumerate()
    {
        text.push_str(&format!(
            "2026-11-29 09:40:4{i},021 DEBUG [worker] rpyc: Exception caught\n\
             Traceback (most recent call last):\n  File \"/srv/server.py\", line 38, in read\n\
             \x20   m = METERS[meter_id]\n{raised}\n"
        ));
    }
    let doc = build(&text);
    assert_eq!(doc.units.len(), 3, "one unit per entry");
    assert_eq!(doc.units[0].template, doc.units[1].template);
    assert_ne!(doc.units[0].template, doc.units[2].template);
}

#[test]
fn an_error_keeps_the_entry_of_its_process_just_before_it() {
    let text = "Nov 27 20:57:11 gw in.tftpd[21819]: RRQ from 127.0.0.1 filename initrd.img\n\
Nov 27 20:57:11 gw in.tftpd[21825]: RRQ from 127.0.0.1 filename firmware/core.bin\n\
Nov 27 20:57:11 gw in.tftpd[21825]: sending NAK (0, Permission denied) to 127.0.0.1\n\
Nov 27 20:57:12 gw in.tftpd[21830]: RRQ from 127.0.0.1 filename pxelinux.0\n\
Nov 27 20:57:12 gw in.tftpd[21831]: sending NAK (0, Permission denied) to 127.0.0.1\n";
    let doc = build(text);
    assert_eq!(doc.units[2].level, Level::Error);
    assert_eq!(doc.units[2].parent.get(), Some(1));
    // Another process's entry before it is no part of the error.
    assert_eq!(doc.units[4].parent.get(), None);
    assert_eq!(process_tag(doc.text(1)), Some("in.tftpd[21825]:"));
}

#[test]
fn a_rare_stated_warning_weighs_more_than_a_common_one() {
    let log = |warn_every: usize| {
        (0..300)
            .map(|i| {
                let level = if i % warn_every == 7 {
                    "WARNING"
                } else {
                    "DEBUG"
                };
                format!(
                    "[2026-11-27 20:57:{:02} +0000] [24729] [{level}] request {i} done\n",
                    i % 60
                )
            })
            .collect::<String>()
    };
    let (rare_text, common_text) = (log(200), log(10));
    let (rare, common) = (build(&rare_text), build(&common_text));
    let warning = |doc: &Doc<'_>| {
        doc.units
            .iter()
            .find(|u| u.level == Level::Warn)
            .map(|u| u.prior)
            .unwrap()
    };
    assert!(
        warning(&rare) > level_prior(Level::Error, false),
        "{}",
        warning(&rare)
    );
    assert_eq!(warning(&common), level_prior(Level::Warn, true));
}

#[test]
fn an_access_logs_rare_and_failed_statuses_stand_out() {
    let mut text = String::new();
    for i in 0..400 {
        let status = match i {
            100 => 206,
            200 => 403,
            300 => 502,
            _ if i % 40 == 0 => 404,
            _ if i % 4 == 1 => 503,
            _ => 200,
        };
        text.push_str(&format!(
            "127.0.0.1 - - [27/Nov/2026:20:59:{:02} +0000] \"GET /docs/page.html HTTP/1.1\" {status} {}\n",
            i % 60,
            1000 + i
        ));
    }
    let doc = build(&text);
    let unit = |status: &str| {
        doc.units
            .iter()
            .find(|u| text[u.span.range()].contains(&format!("\" {status} ")))
            .unwrap()
    };
    // A status is part of the line's kind: a 206 is no repeat of the 200s.
    assert_ne!(unit("206").template, unit("200").template);
    assert_eq!(unit("404").level, Level::Warn);
    assert_eq!(unit("502").level, Level::Error);
    // A failure a quarter of the requests share is routine there.
    assert_eq!(unit("503").level, Level::None);
    // The rare ones rank above the common failures, and those above the successes.
    assert!(
        unit("206").prior > unit("404").prior,
        "{}",
        unit("206").prior
    );
    assert!(unit("403").prior > unit("404").prior);
    assert!(unit("404").prior > unit("200").prior);
}

#[test]
fn thousands_are_separated() {
    assert_eq!(thousands(1203), "1,203");
    assert_eq!(thousands(12), "12");
    assert_eq!(thousands(1_000_000), "1,000,000");
}

#[test]
fn the_last_entry_says_how_the_run_ended_unless_it_is_one_more_of_many() {
    let mut text = String::new();
    for i in 0..20 {
        text.push_str(&format!("( 3.{i:03}| 0.000) D: [main] Loaded module {i}\n"));
    }
    text.push_str("(15.024| 0.000) I: [main] Daemon terminated.\n");
    let doc = build(&text);
    let last = doc.units.last().expect("units");
    assert!(last.prior > doc.units[19].prior, "{:?}", last.prior);
    // An access log's last request is one more of its kind.
    let text: String = (0..20)
        .map(|i| format!("2026-11-28 10:00:{i:02} INFO GET /item/{i} 200\n"))
        .collect();
    let doc = build(&text);
    assert_eq!(doc.units.last().expect("units").prior, doc.units[0].prior);
}

#[test]
fn an_entry_is_the_kind_its_lines_make() {
    // Two replies under the same `Date:` line, told apart by the error line they hold; a third
    // repeats the first.
    let reply = |error: &str| {
        format!(
            "Date: Sun, 29 Nov 2026 19:22:55 GMT\nContent-Type: text/html\n\
             X-Squid-Error: {error} 0\n"
        )
    };
    let text = reply("ERR_READ_ERROR") + &reply("ERR_INVALID_REQ") + &reply("ERR_READ_ERROR");
    let doc = build(&text);
    assert_eq!(doc.units.len(), 3);
    assert_ne!(doc.units[0].template, doc.units[1].template);
    assert_eq!(doc.units[0].template, doc.units[2].template);
    // Where a trace was raised is no other kind of failure: its frames do not count.
    let trace = |at: &str| {
        format!("2026-11-29 19:22:55 ERROR failed\n\tat com.example.Worker.run(Worker.java:{at})\n")
    };
    let traces = trace("12") + &trace("48");
    let doc = build(&traces);
    assert_eq!(doc.units[0].template, doc.units[1].template);
}
