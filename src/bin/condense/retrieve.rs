//! `condense retrieve`: an original back from the store `compress` or the proxy wrote.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use condense::config::StoreBackendKind;
use condense::store::{DEFAULT_PATTERN_CONTEXT, Selection};
use condense::{Condenser, Config, RetrieveError};

/// Print an original kept under REF, or a part of it. The part is printed exactly as in the
/// original; where it sits and how to continue are printed on standard error.
///
/// Examples:
///   condense retrieve cx_…                       # all of it
///   condense retrieve cx_… --lines 100-199
///   condense retrieve cx_… --offset 269000 --length 2000
///   condense retrieve cx_… --grep 'timeout' --context 80 --ignore-case
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
pub(crate) struct RetrieveArgs {
    /// The ref a condensed result names (`original kept as cx_…`).
    #[arg(value_name = "REF")]
    reference: String,

    /// Lines A to B (from 1, inclusive); `A-` reads to the end.
    #[arg(long, value_name = "A-B", conflicts_with_all = ["offset", "grep"])]
    lines: Option<String>,

    /// The first character to print (from 0, counted over the whole original).
    #[arg(long, value_name = "N", requires = "length", conflicts_with = "grep")]
    offset: Option<usize>,

    /// How many characters to print from --offset.
    #[arg(long, value_name = "M", requires = "offset")]
    length: Option<usize>,

    /// Print a window around each occurrence of this text, with its line and character.
    #[arg(long, value_name = "PATTERN")]
    grep: Option<String>,

    /// Characters of context either side of each match.
    #[arg(long, value_name = "N", requires = "grep", default_value_t = DEFAULT_PATTERN_CONTEXT)]
    context: usize,

    /// Match --grep ignoring case (by default case matters).
    #[arg(long, requires = "grep")]
    ignore_case: bool,

    /// Matches to skip (the ones an earlier page printed).
    #[arg(long, value_name = "N", requires = "grep", default_value_t = 0)]
    skip: usize,

    /// The most matches printed.
    #[arg(long, value_name = "N", requires = "grep", default_value_t = 100)]
    max_matches: usize,

    /// The config file (default: $CONDENSE_CONFIG, else built-in defaults); its `[store]`
    /// says where originals are.
    #[arg(long, short)]
    config: Option<PathBuf>,
}

pub(crate) async fn run(args: RetrieveArgs) -> anyhow::Result<()> {
    let mut config = Config::load(args.config.as_deref()).map_err(|e| anyhow::anyhow!("{e}"))?;
    config.store.backend.get_or_insert(StoreBackendKind::Disk);
    let store = store_description(&config);
    let selection = selection(&args)?;
    let condenser = Condenser::new(config).map_err(|e| anyhow::anyhow!("{e}"))?;
    let page = match condenser
        .retrieve_page(&args.reference, selection, usize::MAX)
        .await
    {
        Ok(page) => page,
        Err(RetrieveError::UnknownRef(reference)) => anyhow::bail!(
            "no original is kept under `{reference}` in {store}: it may have expired or been \
             evicted, or been kept by a process with another [store] dir or backend"
        ),
        Err(error) => return Err(error.into()),
    };
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(page.text.as_bytes())
        .context("writing to standard output")?;
    stdout.flush().context("writing to standard output")?;
    let next = match &page.next {
        Some(next) => format!("next: condense retrieve {} {}", args.reference, flags(next)),
        None => "nothing follows".to_owned(),
    };
    eprintln!(
        "condense: {}; the original: {} lines, {} characters; {next}",
        page.range, page.total_lines, page.total_chars
    );
    Ok(())
}

fn selection(args: &RetrieveArgs) -> anyhow::Result<Selection> {
    if let Some(pattern) = &args.grep {
        return Ok(Selection::Pattern {
            pattern: pattern.clone(),
            context: args.context,
            ignore_case: args.ignore_case,
            skip: args.skip,
            max_matches: args.max_matches.max(1),
        });
    }
    if let (Some(offset), Some(length)) = (args.offset, args.length) {
        return Ok(Selection::Chars { offset, length });
    }
    let Some(lines) = &args.lines else {
        return Ok(Selection::All);
    };
    let bad = || anyhow::anyhow!("--lines {lines}: expected A-B, A-, or A (lines from 1)");
    let (start, end) = match lines.split_once('-') {
        Some((start, "")) => (start.trim().parse().map_err(|_| bad())?, usize::MAX),
        Some((start, end)) => (
            start.trim().parse().map_err(|_| bad())?,
            end.trim().parse().map_err(|_| bad())?,
        ),
        None => {
            let line = lines.trim().parse().map_err(|_| bad())?;
            (line, line)
        }
    };
    Ok(Selection::Lines { start, end })
}

/// The command-line flags that ask for `selection`.
fn flags(selection: &Selection) -> String {
    match selection {
        Selection::Lines { start, end } => format!("--lines {start}-{end}"),
        Selection::Chars { offset, length } => format!("--offset {offset} --length {length}"),
        Selection::Pattern {
            pattern,
            context,
            ignore_case,
            skip,
            max_matches,
        } => format!(
            "--grep {pattern:?} --context {context} --skip {skip} --max-matches {max_matches}{}",
            if *ignore_case { " --ignore-case" } else { "" }
        ),
        _ => String::new(),
    }
}

/// Where the configured store is, for messages.
pub(crate) fn store_description(config: &Config) -> String {
    match config.store.backend {
        Some(StoreBackendKind::Memory) => "the memory store ([store] backend = \"memory\")".into(),
        Some(StoreBackendKind::Redis) => format!(
            "the Redis store at {}",
            config.store.redis_endpoint().unwrap_or_default()
        ),
        _ => match config
            .store
            .dir
            .clone()
            .or_else(condense::store::default_dir)
        {
            Some(dir) => format!("the store at {}", dir.display()),
            None => "the disk store (no home directory: set [store] dir)".into(),
        },
    }
}
