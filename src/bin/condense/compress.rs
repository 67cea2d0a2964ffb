//! `condense compress`.

use std::io::{IsTerminal, Read, Write};
use std::sync::Mutex;

use anyhow::Context;
use condense::config::StoreBackendKind;
use condense::{Condenser, Config, Mode, Progress, Request, TokenCounter};

use crate::cli::{CompressArgs, MethodArg};

pub(crate) async fn run(args: CompressArgs) -> anyhow::Result<()> {
    let mut config = Config::load(args.config.as_deref()).map_err(whole_message)?;
    // The process ends with the call: the original outlives it on disk unless `[store]` says
    // otherwise, so the ref it prints can be retrieved.
    config.store.backend.get_or_insert(StoreBackendKind::Disk);
    let kept = config.store.backend != Some(StoreBackendKind::Memory);
    let store = crate::retrieve::store_description(&config);
    let input = read_input(args.file.as_deref(), config.limits.max_input_bytes)?;
    // An input no longer in bytes than the threshold passes through uncounted (a token is at
    // least a byte), unless `--json` shows its count; any other is counted. Counting builds
    // nothing for ASCII text in `cl100k_base`; otherwise it first compiles the pre-tokenizer
    // (about a millisecond): compile it on a spare core while the condenser is set up.
    let rule = config.rule_for(args.tool.as_deref().unwrap_or(""));
    let threshold = rule.threshold_tokens.min(args.budget.unwrap_or(usize::MAX));
    let counter = TokenCounter::new(rule.encoding);
    if (args.json || !TokenCounter::trivially_within(&input.text, threshold))
        && !counter.ready_for(&input.text)
    {
        std::thread::spawn(move || counter.prepare());
    }
    let mut builder = Condenser::builder(config);
    if std::io::stderr().is_terminal() {
        builder = builder.progress(show_progress);
    }
    let condenser = builder.build().map_err(whole_message)?;
    let mode = args.method.map(|m| match m {
        MethodArg::Auto => Mode::Auto,
        MethodArg::Llm => Mode::Llm,
        MethodArg::Extract => Mode::Extract,
        MethodArg::Truncate => Mode::Truncate,
    });
    // Unset flags leave the rule's values in place.
    let mut request = Request::new(args.tool.as_deref().unwrap_or(""));
    request.query = args.query.as_deref();
    request.budget_tokens = args.budget;
    request.mode = mode;
    request.whole_bytes = input.whole_bytes;
    // Handed over, so the input is in memory once however many stages read it.
    let outcome = condenser.condense_owned(input.text, &request).await;
    let mut stdout = std::io::stdout().lock();
    if args.json {
        let json = serde_json::json!({
            "text": outcome.text,
            "method": outcome.method.name(),
            "tokens_before": outcome.tokens_before(),
            "tokens_after": outcome.tokens_after(),
            "ref": outcome.reference,
            // How to get the original back, when it outlives this process.
            "retrieve": outcome.reference.as_ref().filter(|_| kept)
                .map(|reference| format!("condense retrieve {reference}")),
            "cached": outcome.cached,
            // Why a lower rung answered (the LLM failed, missed the deadline, …), or null.
            "fallback": outcome.fallback,
            "elapsed_ms": outcome.elapsed.as_secs_f64() * 1000.0,
        });
        writeln!(stdout, "{json}")?;
    } else {
        stdout.write_all(outcome.text.as_bytes())?;
        if !outcome.text.ends_with('\n') {
            writeln!(stdout)?;
        }
        if let Some(reference) = &outcome.reference {
            if kept {
                eprintln!(
                    "condense: original kept in {store}; read it with `condense retrieve {reference}` \
                     (or a part: --lines A-B, --offset N --length M, --grep PATTERN)"
                );
            } else {
                eprintln!("condense: the original is not kept beyond this run ({store})");
            }
        }
    }
    if let Some(reason) = &outcome.fallback {
        tracing::warn!("{reason}; answered with {}", outcome.method);
    }
    Ok(())
}

/// A configuration error as its own message: it already ends with its cause, which the
/// chained form (`{:#}`) would print a second time.
fn whole_message(error: condense::ConfigError) -> anyhow::Error {
    anyhow::anyhow!("{error}")
}

/// One status line on the terminal, rewritten as a long map-reduce run advances.
fn show_progress(progress: Progress) {
    static SHOWN: Mutex<StatusLine> = Mutex::new(StatusLine {
        mapped: None,
        merged: None,
    });
    let mut shown = SHOWN
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let line = match progress {
        Progress::Chunked { chunks } => {
            *shown = StatusLine::default();
            format!("condense: {chunks} chunks")
        }
        Progress::Mapped { done, total } => {
            shown.mapped = Some((done, total));
            shown.render()
        }
        Progress::Reduced { level, done, total } => {
            if shown
                .merged
                .is_none_or(|(shown_level, ..)| level >= shown_level)
            {
                shown.merged = Some((level, done, total));
            }
            shown.render()
        }
        Progress::Critiqued { round } => format!("condense: critique round {round}"),
        Progress::Finished => {
            *shown = StatusLine::default();
            eprint!("\r\x1b[2K");
            return;
        }
        _ => return,
    };
    eprint!("\r\x1b[2K{line}");
}

/// What the status line shows: merges run while chunks are still being summarized, so once
/// merging has begun it shows both.
#[derive(Default)]
struct StatusLine {
    /// Chunks summarized, of all.
    mapped: Option<(usize, usize)>,
    /// The highest merge level so far: its merges done, of all.
    merged: Option<(usize, usize, usize)>,
}

impl StatusLine {
    fn render(&self) -> String {
        let mut line = String::from("condense:");
        if let Some((done, total)) = self.mapped {
            line.push_str(&format!(" summarized {done}/{total} chunks"));
        }
        if let Some((level, done, total)) = self.merged {
            line.push_str(&format!(", merge level {level}: {done}/{total}"));
        }
        line
    }
}

/// The input as read: at most the configured limit of it, decoded.
struct Input {
    text: String,
    /// The whole input's size when reading stopped at the limit.
    whole_bytes: Option<usize>,
}

/// Reads the input, but never more than `max_bytes` of it into memory: the rest of a file is
/// only measured, the rest of standard input is read and dropped (so the writer does not fail
/// on a closed pipe) while counting its bytes. Bytes that are not UTF-8 become U+FFFD rather
/// than an error, since tool output is whatever the tool printed; a warning says how many.
fn read_input(file: Option<&std::path::Path>, max_bytes: usize) -> anyhow::Result<Input> {
    let (bytes, whole_bytes) = match file {
        Some(path) if path.as_os_str() != "-" => {
            let read = || -> std::io::Result<_> {
                let file = std::fs::File::open(path)?;
                // A regular file's size is known without reading past the limit.
                let size = file.metadata()?;
                let size = size.is_file().then_some(size.len());
                read_bounded(file, max_bytes, size)
            };
            read().with_context(|| format!("cannot read {}", path.display()))?
        }
        _ => read_bounded(std::io::stdin().lock(), max_bytes, None)
            .context("cannot read standard input")?,
    };
    let cut = whole_bytes.is_some();
    if cut {
        tracing::warn!(
            "the input has {} bytes; only the first {} are read ([limits] max_input_bytes)",
            whole_bytes.unwrap_or_default(),
            bytes.len()
        );
    }
    Ok(Input {
        text: decode(bytes, cut),
        whole_bytes,
    })
}

/// Reads up to `max_bytes`; when there is more, returns the whole size too: `size` when the
/// reader's size is known, else by reading the rest without keeping it.
fn read_bounded(
    mut reader: impl Read,
    max_bytes: usize,
    size: Option<u64>,
) -> std::io::Result<(Vec<u8>, Option<usize>)> {
    let limit = u64::try_from(max_bytes).unwrap_or(u64::MAX);
    // A regular file's size sizes the buffer once: growing it by doubling would leave up to
    // twice the input allocated at the peak.
    let capacity = size.map_or(0, |size| usize::try_from(size.min(limit)).unwrap_or(0));
    let mut bytes = Vec::with_capacity(capacity);
    (&mut reader).take(limit).read_to_end(&mut bytes)?;
    let read = bytes.len() as u64;
    let rest = if read < limit {
        0
    } else if let Some(size) = size {
        // The size may be stale (a log still being written): one more byte tells.
        let mut probe = Vec::new();
        (&mut reader).take(1).read_to_end(&mut probe)?;
        if probe.is_empty() {
            0
        } else {
            size.saturating_sub(read).max(1)
        }
    } else {
        std::io::copy(&mut reader, &mut std::io::sink())?
    };
    if rest == 0 {
        return Ok((bytes, None));
    }
    let whole = usize::try_from(rest)
        .ok()
        .and_then(|rest| rest.checked_add(bytes.len()))
        .unwrap_or(usize::MAX);
    Ok((bytes, Some(whole)))
}

/// UTF-8 as it is; anything else lossily, with a warning. When the read stopped at the limit,
/// a character cut in half at the end is dropped rather than shown as U+FFFD.
fn decode(mut bytes: Vec<u8>, cut: bool) -> String {
    if cut
        && let Err(error) = std::str::from_utf8(&bytes)
        && error.error_len().is_none()
    {
        bytes.truncate(error.valid_up_to());
    }
    match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(error) => {
            let bytes = error.into_bytes();
            let text = String::from_utf8_lossy(&bytes).into_owned();
            let replaced = text.matches('\u{FFFD}').count() - count_in_valid(&bytes);
            tracing::warn!(
                "the input is not valid UTF-8: {replaced} invalid byte sequences are shown as U+FFFD"
            );
            text
        }
    }
}

/// How many U+FFFD characters the input itself holds, so the warning counts only replacements.
fn count_in_valid(bytes: &[u8]) -> usize {
    bytes
        .utf8_chunks()
        .map(|chunk| chunk.valid().matches('\u{FFFD}').count())
        .sum()
}
