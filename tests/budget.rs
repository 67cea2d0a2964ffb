//! Every output fits its budget, by the same counter, for random and real inputs.

use condense::{Condenser, Config, Encoding, Mode, Request, TokenCounter};
use proptest::prelude::*;

use crate::support::inputs::corpus_inputs;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn corpus_outputs_fit_every_budget_and_method() {
    let inputs = corpus_inputs();
    assert!(
        inputs.len() >= 30 || std::env::var_os("CI").is_none(),
        "the corpus must be beside the repo in CI"
    );
    let condenser = Condenser::new(Config::default()).unwrap();
    let counter = TokenCounter::default();
    runtime().block_on(async {
        for (name, text) in &inputs {
            for (mode, budget) in [
                (Mode::Extract, 500),
                (Mode::Truncate, 1000),
                (Mode::Auto, 2000),
            ] {
                let out = condenser
                    .condense(
                        text,
                        &Request::new("t").with_budget_tokens(budget).with_mode(mode),
                    )
                    .await;
                let tokens = counter.count(&out.text);
                assert!(tokens <= budget, "{name} {mode}: {tokens} > {budget}");
                assert_eq!(
                    tokens,
                    out.tokens_after(),
                    "{name} {mode}: reported count differs"
                );
            }
        }
    });
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn random_outputs_fit_their_budget(
        text in prop_oneof![
            ".{0,4000}",
            proptest::collection::vec("[a-z0-9 ]{0,40}\n", 0..400).prop_map(|v| v.concat()),
            proptest::collection::vec(any::<char>(), 0..3000).prop_map(|v| v.into_iter().collect::<String>()),
        ],
        budget in 50usize..600,
        o200k in any::<bool>(),
        mode in prop_oneof![Just(Mode::Auto), Just(Mode::Extract), Just(Mode::Truncate)],
    ) {
        let encoding = if o200k { Encoding::O200kBase } else { Encoding::Cl100kBase };
        let config = Config::from_toml_str(&format!("[defaults]\nencoding = \"{encoding}\"\n"), "t").unwrap();
        let condenser = Condenser::new(config).unwrap();
        let out = runtime().block_on(condenser.condense(&text, &Request::new("t").with_budget_tokens(budget).with_mode(mode)));
        let tokens = TokenCounter::new(encoding).count(&out.text);
        prop_assert!(tokens <= budget, "{} > {}", tokens, budget);
        if !out.was_condensed() {
            prop_assert_eq!(&out.text, &text);
        }
    }
}
