//! Error types. Condensing itself never fails a tool call; these are for configuration,
//! prompts and retrieval, where the caller must hear what is wrong.

use std::path::PathBuf;

use thiserror::Error;

/// An error and its sources, joined by `: `, skipping a cause its parent already quotes: the
/// whole reason in one line, for a log or a fallback reason.
pub(crate) fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let message = cause.to_string();
        if !text.contains(&message) {
            text.push_str(": ");
            text.push_str(&message);
        }
        source = cause.source();
    }
    text
}

/// A configuration that cannot be used. Every variant names where the problem is.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read config file {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The text is not TOML.
    #[error("{origin}: not valid TOML: {message}")]
    Toml {
        /// The file (or other origin) of the text.
        origin: String,
        /// The parser's message, with line and column.
        message: String,
    },
    /// A key is unknown or holds a value of the wrong type or range.
    #[error("{origin}: key `{key}`: {message}")]
    Invalid {
        /// The file (or other origin) of the text.
        origin: String,
        /// The key, as a dotted path (`tools[1].mode`).
        key: String,
        /// What is wrong with it.
        message: String,
    },
    /// An environment override holds a value of the wrong type or range.
    #[error("environment variable {var}: {message}")]
    Env {
        /// The variable.
        var: String,
        /// What is wrong with it.
        message: String,
    },
    /// The prompts could not be loaded.
    #[error(transparent)]
    Prompt(#[from] PromptError),
}

/// A prompt template that cannot be used.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum PromptError {
    /// A template uses a placeholder it is not allowed to.
    #[error("prompt `{template}`: unknown placeholder `{{{placeholder}}}` (allowed: {allowed})")]
    UnknownPlaceholder {
        /// The template's name.
        template: String,
        /// The placeholder.
        placeholder: String,
        /// The placeholders the template may use.
        allowed: String,
    },
    /// A `{` without its `}`.
    #[error(
        "prompt `{template}`: unclosed `{{` at byte {offset}; write `{{{{` for a literal brace"
    )]
    Unclosed {
        /// The template's name.
        template: String,
        /// Where the brace is.
        offset: usize,
    },
    /// A template name that is not a plain file name inside the prompts directory.
    #[error("prompt name `{0}` is not a plain name inside the prompts directory")]
    BadName(String),
    /// `[prompts] dir` does not name a readable directory.
    #[error("key `prompts.dir`: {} is not a readable directory: {source}", path.display())]
    Dir {
        /// The directory as configured.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// An override file could not be read.
    #[error("cannot read prompt {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// An original that cannot be returned.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum RetrieveError {
    /// No original is kept under this ref (never stored, or expired).
    #[error("no original is kept under ref `{0}` (unknown or expired)")]
    UnknownRef(String),
    /// The selection does not fit the original.
    #[error("{0}")]
    BadSelection(String),
}
