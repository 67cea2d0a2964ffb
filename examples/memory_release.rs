//! Memory held after large calls: three rounds of three concurrent calls, each on a 7 MB JSON
//! array of small records, through one engine (as a proxy or a layer runs them). Prints the
//! process's resident memory (`VmRSS`) and its peak (`VmHWM`) after each round.
//!
//! ```text
//! cargo run --release --example memory_release
//! ```
use condense::{Condenser, Config, Request};

/// One line of `/proc/self/status`, such as `VmRSS:   65396 kB`.
fn rss(field: &str) -> String {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find(|l| l.starts_with(field))
        .unwrap_or_default()
        .to_owned()
}

/// An array of `count` small records; `salt` makes each call's original a new one.
fn records(count: usize, salt: usize) -> String {
    let mut text = String::from("[");
    for i in 0..count {
        if i > 0 {
            text.push(',');
        }
        text.push_str(&format!(
            r#"{{"id":{i},"name":"user{i}-{salt}","active":{},"score":{},"tags":["a","b"]}}"#,
            i % 3 == 0,
            (i * 7919 % 10007) as f64 / 10007.0
        ));
    }
    text.push(']');
    text
}

#[tokio::main]
async fn main() {
    let condenser = Condenser::new(Config::default()).unwrap();
    println!("start {} {}", rss("VmRSS"), rss("VmHWM"));
    for round in 0..3 {
        let calls: Vec<_> = (0..3)
            .map(|k| {
                let condenser = condenser.clone();
                let text = records(70_000, round * 10 + k);
                tokio::spawn(async move {
                    condenser
                        .condense_owned(text, &Request::new("t").with_query("user 777"))
                        .await
                        .method
                })
            })
            .collect();
        for call in calls {
            let _ = call.await.unwrap();
        }
        println!("after round {round}: {} {}", rss("VmRSS"), rss("VmHWM"));
    }
}
