//! "Condense this result, and how?" — the decision, in the shape of tower-http's compression
//! `Predicate`: a small trait, closures implement it, and policies combine.
//!
//! The default, [`RulesPolicy`], reads the config's `[defaults]` and `[[tools]]` rules. A library
//! user plugs in their own:
//!
//! ```
//! use condense::policy::{Decision, Policy, RulesPolicy, Subject};
//! use condense::Config;
//!
//! // Never condense errors, otherwise follow the config.
//! let keep_errors = |subject: &Subject<'_>| {
//!     if subject.is_error() { Decision::PassThrough } else { Decision::Defer }
//! };
//! let policy = keep_errors.or(RulesPolicy::new(Config::default()));
//! # let _ = policy;
//! ```

use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use crate::config::{Config, Mode, Rule};
use crate::tokens::{Encoding, TokenCounter};

/// What a policy sees: the tool, whether it failed, and the rendered text, which it can measure
/// lazily.
#[derive(Debug, Clone, Copy)]
pub struct Subject<'a> {
    tool: &'a str,
    is_error: bool,
    text: &'a str,
    budget_hint: Option<usize>,
    /// Where an exact count found while deciding is kept, so a pass-through does not count the
    /// text again.
    counted: Option<&'a OnceLock<(Encoding, usize)>>,
}

impl<'a> Subject<'a> {
    /// A subject for `text`, returned by `tool`.
    pub fn new(tool: &'a str, text: &'a str) -> Self {
        Subject {
            tool,
            is_error: false,
            text,
            budget_hint: None,
            counted: None,
        }
    }

    /// Keeps in `memo` the exact count that [`exceeds`](Subject::exceeds) finds when the text
    /// is within the limit.
    #[must_use]
    pub(crate) fn with_count_memo(mut self, memo: &'a OnceLock<(Encoding, usize)>) -> Self {
        self.counted = Some(memo);
        self
    }

    /// Marks the result as a tool error.
    #[must_use]
    pub fn with_error(mut self, is_error: bool) -> Self {
        self.is_error = is_error;
        self
    }

    /// Sets an explicit budget the caller asked for (overrides the rule's budget, and the
    /// threshold when lower).
    #[must_use]
    pub fn with_budget_hint(mut self, budget: Option<usize>) -> Self {
        self.budget_hint = budget;
        self
    }

    /// The tool's name.
    pub fn tool(&self) -> &'a str {
        self.tool
    }

    /// Whether the tool reported an error.
    pub fn is_error(&self) -> bool {
        self.is_error
    }

    /// The rendered result.
    pub fn text(&self) -> &'a str {
        self.text
    }

    /// The explicit budget the caller asked for, if any.
    pub fn budget_hint(&self) -> Option<usize> {
        self.budget_hint
    }

    /// Whether the text has more than `limit` tokens by `encoding`, counting no more than
    /// needed.
    pub fn exceeds(&self, encoding: Encoding, limit: usize) -> bool {
        // A token is at least a byte: a text no longer than the limit is decided without the
        // vocabulary (whose first build is most of a cold start).
        if TokenCounter::trivially_within(self.text, limit) {
            return false;
        }
        match TokenCounter::new(encoding).count_up_to(self.text, limit) {
            Some(tokens) => {
                if let Some(memo) = self.counted {
                    let _ = memo.set((encoding, tokens));
                }
                false
            }
            None => true,
        }
    }
}

/// How to condense one result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Plan {
    /// The output's size in tokens, header included.
    pub budget_tokens: usize,
    /// The rungs to use.
    pub mode: Mode,
    /// The whole condense step's deadline.
    pub deadline: Duration,
    /// The tokenizer.
    pub encoding: Encoding,
}

impl Plan {
    /// A plan with the rule's settings.
    pub fn from_rule(rule: &Rule) -> Self {
        Plan {
            budget_tokens: rule.budget_tokens,
            mode: rule.mode,
            deadline: rule.deadline,
            encoding: rule.encoding,
        }
    }
}

/// A policy's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Decision {
    /// Forward the result unchanged.
    PassThrough,
    /// Condense it.
    Condense(Plan),
    /// No opinion: let the next policy in an [`Policy::or`] chain decide (pass through when
    /// none does).
    Defer,
}

/// Decides whether and how a result is condensed.
pub trait Policy: Send + Sync + 'static {
    /// The decision for one result.
    fn decide(&self, subject: &Subject<'_>) -> Decision;

    /// A policy that asks `self` first and `other` when `self` defers.
    fn or<P: Policy>(self, other: P) -> Or<Self, P>
    where
        Self: Sized,
    {
        Or(self, other)
    }

    /// A policy that condenses only when both condense (with `self`'s plan), and passes
    /// through when either passes through.
    fn and<P: Policy>(self, other: P) -> And<Self, P>
    where
        Self: Sized,
    {
        And(self, other)
    }
}

impl<F> Policy for F
where
    F: Fn(&Subject<'_>) -> Decision + Send + Sync + 'static,
{
    fn decide(&self, subject: &Subject<'_>) -> Decision {
        self(subject)
    }
}

impl Policy for Arc<dyn Policy> {
    fn decide(&self, subject: &Subject<'_>) -> Decision {
        (**self).decide(subject)
    }
}

/// See [`Policy::or`].
#[derive(Debug, Clone, Copy)]
pub struct Or<A, B>(A, B);

impl<A: Policy, B: Policy> Policy for Or<A, B> {
    fn decide(&self, subject: &Subject<'_>) -> Decision {
        match self.0.decide(subject) {
            Decision::Defer => self.1.decide(subject),
            decided => decided,
        }
    }
}

/// See [`Policy::and`].
#[derive(Debug, Clone, Copy)]
pub struct And<A, B>(A, B);

impl<A: Policy, B: Policy> Policy for And<A, B> {
    fn decide(&self, subject: &Subject<'_>) -> Decision {
        match (self.0.decide(subject), self.1.decide(subject)) {
            (Decision::Condense(plan), Decision::Condense(_)) => Decision::Condense(plan),
            (Decision::PassThrough, _) | (_, Decision::PassThrough) => Decision::PassThrough,
            _ => Decision::Defer,
        }
    }
}

/// The config's rules: the first `[[tools]]` glob that matches the tool, over `[defaults]`.
/// A result is condensed when its tokens exceed the rule's threshold (or the caller's explicit
/// budget, when lower) and the mode is not `passthrough`. Tool errors follow the same rule; the
/// condensing methods keep their error text.
#[derive(Clone)]
pub struct RulesPolicy {
    config: Arc<Config>,
}

impl fmt::Debug for RulesPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RulesPolicy")
            .field("rules", &self.config.tools.len())
            .finish()
    }
}

impl RulesPolicy {
    /// The policy of `config`.
    pub fn new(config: Config) -> Self {
        RulesPolicy {
            config: Arc::new(config),
        }
    }

    /// The policy of a shared config.
    pub fn from_shared(config: Arc<Config>) -> Self {
        RulesPolicy { config }
    }
}

impl Policy for RulesPolicy {
    fn decide(&self, subject: &Subject<'_>) -> Decision {
        let rule = self.config.rule_for(subject.tool());
        if rule.mode == Mode::Passthrough {
            return Decision::PassThrough;
        }
        let mut plan = Plan::from_rule(&rule);
        let mut threshold = rule.threshold_tokens;
        if let Some(budget) = subject.budget_hint() {
            plan.budget_tokens = budget;
            threshold = threshold.min(budget);
        }
        if subject.exceeds(rule.encoding, threshold) {
            Decision::Condense(plan)
        } else {
            Decision::PassThrough
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> Config {
        Config::from_toml_str(
            "[defaults]\nthreshold_tokens = 10\nbudget_tokens = 60\n[[tools]]\nmatch = \"secret*\"\nmode = \"passthrough\"\n",
            "t.toml",
        )
        .unwrap()
    }

    #[test]
    fn small_results_pass_and_large_ones_condense() {
        let policy = RulesPolicy::new(config());
        let small = Subject::new("read", "a few words");
        assert_eq!(policy.decide(&small), Decision::PassThrough);
        let text = "word ".repeat(50);
        let large = Subject::new("read", &text);
        assert!(matches!(policy.decide(&large), Decision::Condense(p) if p.budget_tokens == 60));
        assert_eq!(
            policy.decide(&Subject::new("secret_get", &text)),
            Decision::PassThrough
        );
    }

    #[test]
    fn the_count_made_while_deciding_is_kept_only_when_exact() {
        let policy = RulesPolicy::new(config());
        let memo = OnceLock::new();
        let text = "a few more words here";
        let small = Subject::new("read", text).with_count_memo(&memo);
        assert_eq!(policy.decide(&small), Decision::PassThrough);
        let exact = TokenCounter::default().count(text);
        assert_eq!(memo.get(), Some(&(Encoding::Cl100kBase, exact)));
        let memo = OnceLock::new();
        let text = "word ".repeat(50);
        let large = Subject::new("read", &text).with_count_memo(&memo);
        assert!(matches!(policy.decide(&large), Decision::Condense(_)));
        assert_eq!(
            memo.get(),
            None,
            "a count stopped at the limit is not the count"
        );
    }

    #[test]
    fn an_explicit_budget_lowers_the_threshold() {
        let policy = RulesPolicy::new(Config::default());
        let text = "word ".repeat(100);
        let subject = Subject::new("read", &text).with_budget_hint(Some(50));
        assert!(matches!(policy.decide(&subject), Decision::Condense(p) if p.budget_tokens == 50));
    }

    #[test]
    fn closures_combine_with_or_and_and() {
        let never_errors = |s: &Subject<'_>| {
            if s.is_error() {
                Decision::PassThrough
            } else {
                Decision::Defer
            }
        };
        let policy = never_errors.or(RulesPolicy::new(config()));
        let text = "word ".repeat(50);
        assert_eq!(
            policy.decide(&Subject::new("read", &text).with_error(true)),
            Decision::PassThrough
        );
        assert!(matches!(
            policy.decide(&Subject::new("read", &text)),
            Decision::Condense(_)
        ));
        let both = RulesPolicy::new(config()).and(|_: &Subject<'_>| Decision::PassThrough);
        assert_eq!(
            both.decide(&Subject::new("read", &text)),
            Decision::PassThrough
        );
    }
}
