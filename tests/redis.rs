//! The `redis` store backend against a real `redis-server`: proxy replicas that share one
//! Redis share refs and condensed results, and a Redis that goes away mid-run costs nothing
//! but a warning.
//!
//! The shared server comes from `CONDENSE_TEST_REDIS_URL` (`eval "$(scripts/redis/start.sh)"`);
//! the test that kills its server starts its own `redis-server`. Without them (and without
//! `CONDENSE_TEST_PYTHON` for the upstream) the tests print a notice and pass, except under
//! `CI`, where it is a failure.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::mcp_faults::python;
use super::mcp_http::{Proxy, Scratch, call_tool, ref_in, retrieves};
use super::store::second_condenser_reuses_chunk_summaries;

/// The shared test server's URL.
fn redis_url() -> Option<String> {
    match std::env::var("CONDENSE_TEST_REDIS_URL") {
        Ok(url) => Some(url),
        Err(_) => {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI is set but CONDENSE_TEST_REDIS_URL is not: run scripts/redis/start.sh"
            );
            eprintln!("skipping: run `eval \"$(scripts/redis/start.sh)\"` to test the Redis store");
            None
        }
    }
}

/// A `[store]` on `url` under a key prefix of this test's own, so runs never see each
/// other's keys.
fn redis_config(url: &str, test: &str, share: bool) -> String {
    format!(
        "[store]\nbackend = \"redis\"\nurl = \"{url}\"\nkey_prefix = \"condense-test:{test}:{}:\"\n\
         share_across_sessions = {share}\n",
        std::process::id()
    )
}

/// Retries `attempt` for up to `limit`: what one process writes reaches Redis in the
/// background, a moment after its answer.
fn eventually<T>(limit: Duration, mut attempt: impl FnMut() -> Result<T, String>) -> T {
    let deadline = Instant::now() + limit;
    loop {
        match attempt() {
            Ok(value) => return value,
            Err(last) if Instant::now() > deadline => panic!("{last}"),
            Err(_) => std::thread::sleep(Duration::from_millis(100)),
        }
    }
}

/// Two proxy processes on one Redis (`[store]` from [`redis_config`]), a session on each.
struct Replicas {
    one: Proxy,
    other: Proxy,
    one_session: String,
    other_session: String,
    // Last: the proxies stop before their directories go.
    _dirs: (Scratch, Scratch),
}

impl Replicas {
    fn start(python: &Path, config: &str, test: &str) -> Self {
        let dirs = (
            Scratch::new(&format!("redis-{test}-one")),
            Scratch::new(&format!("redis-{test}-other")),
        );
        let one = Proxy::start(python, &dirs.0, config, &[]);
        let other = Proxy::start(python, &dirs.1, config, &[]);
        let one_session = one.initialize("").session().expect("a session");
        let other_session = other.initialize("").session().expect("a session");
        Replicas {
            one,
            other,
            one_session,
            other_session,
            _dirs: dirs,
        }
    }
}

#[test]
fn replicas_on_one_redis_share_refs_and_condensed_results() {
    let (Some(python), Some(url)) = (python(), redis_url()) else {
        return;
    };
    let Replicas {
        one,
        other,
        one_session,
        other_session,
        ..
    } = &Replicas::start(&python, &redis_config(&url, "replicas", true), "replicas");

    let first = call_tool(&one.addr, one_session, 2, "big", r#"{"bytes":60000}"#);
    let reference = ref_in(&first.body).unwrap_or_else(|| panic!("a ref: {first:?}"));
    assert!(first.body.contains(r#""cached":false"#), "{first:?}");

    eventually(Duration::from_secs(5), || {
        retrieves(other, other_session, &reference)
    });
    // Once: a second try would be a hit in the other replica's own memory. The result is
    // written a moment after the original that was just read there.
    std::thread::sleep(Duration::from_millis(500));
    let repeat = call_tool(&other.addr, other_session, 3, "big", r#"{"bytes":60000}"#);
    assert!(
        repeat.body.contains(r#""cached":true"#),
        "a cache hit: {repeat:?}"
    );
    assert_eq!(ref_in(&repeat.body), Some(reference), "the same original");
}

#[tokio::test]
async fn a_second_condenser_on_one_redis_reuses_the_chunk_summaries_of_the_first() {
    let Some(url) = redis_url() else {
        return;
    };
    second_condenser_reuses_chunk_summaries(&redis_config(&url, "chunks", true)).await;
}

#[test]
fn without_sharing_a_replica_cannot_read_another_sessions_original() {
    let (Some(python), Some(url)) = (python(), redis_url()) else {
        return;
    };
    let Replicas {
        one,
        other,
        one_session,
        other_session,
        ..
    } = &Replicas::start(&python, &redis_config(&url, "scoped", false), "scoped");
    let first = call_tool(&one.addr, one_session, 2, "big", r#"{"bytes":60000}"#);
    let reference = ref_in(&first.body).unwrap_or_else(|| panic!("a ref: {first:?}"));
    retrieves(one, one_session, &reference).expect("its own session reads it");
    // Long enough for the background write to have reached Redis.
    std::thread::sleep(Duration::from_millis(500));
    let refused = retrieves(other, other_session, &reference).expect_err("another does not");
    assert!(refused.contains("no original is kept"), "{refused}");
}

/// A `redis-server` of the test's own, on `port`, with a password.
struct OwnRedis {
    process: Child,
}

impl OwnRedis {
    fn start(port: u16, password: &str, dir: &std::path::Path) -> Option<Self> {
        let process = Command::new("redis-server")
            .args(["--bind", "127.0.0.1", "--port", &port.to_string()])
            .args([
                "--save",
                "",
                "--appendonly",
                "no",
                "--requirepass",
                password,
            ])
            .arg("--dir")
            .arg(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let server = OwnRedis { process };
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "redis-server did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(server)
    }
}

impl Drop for OwnRedis {
    fn drop(&mut self) {
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("addr").port()
}

#[test]
fn calls_are_answered_while_redis_is_down_with_one_warning_that_names_no_password() {
    let (Some(python), Some(_)) = (python(), redis_url()) else {
        return;
    };
    let scratch = Scratch::new("redis-down");
    let port = free_port();
    let password = "hunter2-redis-test";
    let dir: PathBuf = scratch.path("");
    let Some(server) = OwnRedis::start(port, password, &dir) else {
        panic!("redis-server is on no PATH although CONDENSE_TEST_REDIS_URL is set");
    };
    let url = format!("redis://:{password}@127.0.0.1:{port}");
    let proxy = Proxy::start(
        &python,
        &scratch,
        &redis_config(&url, "down", false),
        &[("CONDENSE_LOG", "info")],
    );
    let session = proxy.initialize("").session().expect("a session");
    let before = call_tool(&proxy.addr, &session, 2, "big", r#"{"bytes":50000}"#);
    assert!(ref_in(&before.body).is_some(), "{before:?}");

    drop(server);
    for (id, bytes) in [(3, 51000), (4, 52000), (5, 53000)] {
        let reply = call_tool(
            &proxy.addr,
            &session,
            id,
            "big",
            &format!(r#"{{"bytes":{bytes}}}"#),
        );
        let reference = ref_in(&reply.body).unwrap_or_else(|| panic!("answered: {reply:?}"));
        retrieves(&proxy, &session, &reference).expect("kept in memory meanwhile");
    }
    let log = scratch.log();
    assert_eq!(
        log.matches("the Redis store is unreachable").count(),
        1,
        "one warning per outage:\n{log}"
    );
    assert!(log.contains(&format!("127.0.0.1:{port}")), "{log}");
    assert!(!log.contains(password), "the password leaked:\n{log}");
    assert!(!log.contains("reachable again"), "{log}");

    // Back on the same port: the proxy finds it again once the retry pause is over.
    let _server = OwnRedis::start(port, password, &dir).expect("restarts");
    let mut bytes = 54000;
    eventually(Duration::from_secs(20), || {
        // New content each time: a repeat would be answered from memory, never asking Redis.
        bytes += 1;
        let arguments = format!(r#"{{"bytes":{bytes}}}"#);
        call_tool(&proxy.addr, &session, 6, "big", &arguments);
        let log = scratch.log();
        if log.contains("the Redis store is reachable again") {
            Ok(())
        } else {
            std::thread::sleep(Duration::from_millis(500));
            Err(format!("no reconnection:\n{log}"))
        }
    });
}

#[test]
fn a_proxy_whose_redis_is_down_at_start_answers_from_memory() {
    let (Some(python), Some(_)) = (python(), redis_url()) else {
        return;
    };
    let scratch = Scratch::new("redis-absent");
    let port = free_port();
    let url = format!("redis://:hunter2-absent@127.0.0.1:{port}");
    let proxy = Proxy::start(&python, &scratch, &redis_config(&url, "absent", false), &[]);
    let session = proxy.initialize("").session().expect("a session");
    for (id, bytes) in [(2, 50000), (3, 51000)] {
        let arguments = format!(r#"{{"bytes":{bytes}}}"#);
        let reply = call_tool(&proxy.addr, &session, id, "big", &arguments);
        let reference = ref_in(&reply.body).unwrap_or_else(|| panic!("answered: {reply:?}"));
        retrieves(&proxy, &session, &reference).expect("kept in memory");
    }
    let log = scratch.log();
    assert_eq!(
        log.matches("the Redis store is unreachable").count(),
        1,
        "{log}"
    );
    assert!(log.contains(&format!("127.0.0.1:{port}")), "{log}");
    assert!(
        !log.contains("hunter2-absent"),
        "the password leaked:\n{log}"
    );
}
