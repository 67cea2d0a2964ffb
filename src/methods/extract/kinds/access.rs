//! The response status of an access-log line: the three digits after the request, as web
//! servers of every kind write them (`"GET /a HTTP/1.1" 404 203`, `POST http://h/items 500 479`,
//! `status=503`). Statuses are categories, not measurements: a 404 is another kind of line than
//! a 200, and a rare one ("which requests did not return 200") is what the log is read for.

use super::line_tokens;
use crate::methods::extract::doc::Level;

/// Tokens of a line looked at: the request follows an address, a time and a few dashes.
const MAX_TOKENS: usize = 16;
/// Tokens after the request looked at for an arrow to its status (WsgiDAV's `"PUT /a"
/// length=4351, …, elap=0.001sec -> 201 Created`).
const MAX_FIELDS_BEFORE_ARROW: usize = 16;

/// The request methods of HTTP and WebDAV.
const METHODS: &[&str] = &[
    "GET",
    "HEAD",
    "POST",
    "PUT",
    "DELETE",
    "PATCH",
    "OPTIONS",
    "CONNECT",
    "TRACE",
    "PROPFIND",
    "PROPPATCH",
    "MKCOL",
    "COPY",
    "MOVE",
    "LOCK",
    "UNLOCK",
    "REPORT",
    "MKCALENDAR",
];

/// The status a line gives its request, if it is an access-log line: the token after a quoted
/// request (`"GET /a HTTP/1.1" 404`), after a method and its path or URL (`GET /a 404`), after
/// an arrow that follows the request's fields (`"GET /a" length=0, … -> 404 Not Found`), or a
/// `status=` field.
pub(crate) fn response_status(line: &str) -> Option<u16> {
    if !may_hold_status(line) {
        return None;
    }
    let mut tokens = line_tokens(line);
    let mut read = 0;
    let mut previous: Option<&str> = None;
    // The status a line gives before its request (`404 - GET /a`), and whether only a
    // separator has come since.
    let mut leading: Option<u16> = None;
    while let Some(token) = tokens.next() {
        read += 1;
        if read > MAX_TOKENS {
            return None;
        }
        if let Some(value) = token
            .strip_prefix("status=")
            .or_else(|| token.strip_prefix("status_code="))
        {
            return status(value);
        }
        let quoted_request = token
            .strip_prefix('"')
            .and_then(|t| t.split_once(' '))
            .is_some_and(|(method, _)| METHODS.contains(&method));
        let bare_request = previous.is_some_and(|p| METHODS.contains(&p))
            && (token.starts_with('/')
                || token.starts_with("http://")
                || token.starts_with("https://"));
        if bare_request && let Some(code) = leading {
            return Some(code);
        }
        if quoted_request || bare_request {
            let next = tokens.next()?;
            if let Some(code) = status(next) {
                return Some(code);
            }
            let mut fields = std::iter::once(next)
                .chain(tokens)
                .take(MAX_FIELDS_BEFORE_ARROW);
            fields.find(|t| matches!(*t, "->" | "=>"))?;
            return fields.next().and_then(status);
        }
        leading = match status(token) {
            Some(code) => Some(code),
            None if matches!(token, "-" | "|") || METHODS.contains(&token) => leading,
            None => None,
        };
        previous = Some(token);
    }
    None
}

/// The status a unit gives a request: its access-log status, or a JSON member named for one
/// (`"status":502`, `"status_code": "404"`, `"statusCode":500`) as structured access logs
/// write it.
pub(crate) fn unit_status(text: &str) -> Option<u16> {
    json_status(text).or_else(|| response_status(text))
}

/// The value of the first JSON member named `status`, `status_code` or `statusCode`.
fn json_status(text: &str) -> Option<u16> {
    let bytes = text.as_bytes();
    memchr::memmem::find_iter(bytes, b"\"status").find_map(|at| {
        let rest = &text[at + "\"status".len()..];
        let rest = rest
            .strip_prefix("_code")
            .or_else(|| rest.strip_prefix("Code"))
            .unwrap_or(rest);
        let value = rest.strip_prefix('"')?.trim_start().strip_prefix(':')?;
        let value = value.trim_start().trim_start_matches('"');
        let digits = value.bytes().take_while(u8::is_ascii_digit).count();
        status(&value[..digits])
    })
}

/// Whether `line` may hold a status: a `status` field, or a method word right before a path or
/// URL (`GET /`, `POST http`). Every log line is asked, and most hold neither: a few scans
/// tell so before any token is read.
fn may_hold_status(line: &str) -> bool {
    // Byte scans only: a substring searcher would be built anew for every line.
    let bytes = line.as_bytes();
    let status_field = memchr::memchr_iter(b's', bytes).any(|i| bytes[i..].starts_with(b"status"));
    status_field
        || memchr::memchr_iter(b' ', bytes).any(|at| {
            let rest = &bytes[at + 1..];
            (rest.starts_with(b"/") || rest.starts_with(b"http"))
                && METHODS.contains(&line[..at].rsplit([' ', '"']).next().unwrap_or(""))
        })
}

/// What a status says of how its request went: a server error is an error, a refused request
/// (4xx) a warning.
pub(crate) fn status_level(status: u16) -> Level {
    match status {
        500.. => Level::Error,
        400.. => Level::Warn,
        _ => Level::None,
    }
}

/// Three digits from 100 to 599.
fn status(token: &str) -> Option<u16> {
    let token = token.trim_matches('"');
    (token.len() == 3 && token.bytes().all(|b| b.is_ascii_digit()))
        .then(|| token.parse().ok())
        .flatten()
        .filter(|s| (100..600).contains(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_written_before_its_request_is_read() {
        // simple-http-server's console: time, address, status, then the request.
        let line = "[2026-11-30 12:07:42] - 127.0.0.1 - 404 - GET /symbols/JXG.FileReader.html";
        assert_eq!(response_status(line), Some(404));
        assert_eq!(response_status("[12:07:42] 200 GET /index.html"), Some(200));
        // A number before the method that a separator does not tie to it is no status.
        assert_eq!(response_status("worker 200 took GET /a"), None);
    }

    #[test]
    fn a_structured_access_log_names_its_status_member() {
        let caddy = r#"{"level":"error","logger":"http.log.access.log0","msg":"handled request","request":{"method":"GET","uri":"/api/v1/orders/8841"},"duration":1.03,"size":0,"status":502}"#;
        assert_eq!(unit_status(caddy), Some(502));
        assert_eq!(
            unit_status(r#"{"statusCode": 404, "url": "/a"}"#),
            Some(404)
        );
        assert_eq!(unit_status(r#"{"status_code":"503"}"#), Some(503));
        assert_eq!(unit_status(r#"{"status":"ok","size":500}"#), None);
        assert_eq!(
            unit_status(r#"127.0.0.1 - - "GET /a HTTP/1.1" 500 12"#),
            Some(500)
        );
    }

    #[test]
    fn the_status_follows_the_request_in_every_common_format() {
        let combined = r#"127.0.0.1 - - [27/Nov/2026:20:59:49 +0000] "GET /wp-login.php HTTP/1.1" 404 203 "-" "curl/7.88""#;
        assert_eq!(response_status(combined), Some(404));
        let sanic = "Main  00:09:51 INFO: 127.0.0.1:53540 POST http://127.0.0.1:8731/items/12/reserve 413 103  1.0ms";
        assert_eq!(response_status(sanic), Some(413));
        let uvicorn =
            r#"INFO:     127.0.0.1:51234 - "GET /items/7 HTTP/1.1" 500 Internal Server Error"#;
        assert_eq!(response_status(uvicorn), Some(500));
        let logfmt = "at=info method=GET path=/ host=x.example status=503 bytes=0";
        assert_eq!(response_status(logfmt), Some(503));
        let wsgidav = r#"04:01:43.685 - INFO    : 127.0.0.1 - alice - [2026-11-28 04:01:43] "MKCOL /reports" length=0, depth=0, connection="keep-alive", agent="python-requests/2.34.2", elap=0.000sec -> 405 Method Not Allowed"#;
        assert_eq!(response_status(wsgidav), Some(405));
    }

    #[test]
    fn numbers_that_follow_no_request_are_no_status() {
        assert_eq!(
            response_status("2026-11-27 12:00:00 INFO served 404 pages"),
            None
        );
        assert_eq!(response_status("GET /a 42 bytes"), None);
        assert_eq!(response_status(r#""GET /a HTTP/1.1" 2000 5"#), None);
        assert_eq!(status_level(206), Level::None);
        assert_eq!(status_level(404), Level::Warn);
        assert_eq!(status_level(503), Level::Error);
    }
}
