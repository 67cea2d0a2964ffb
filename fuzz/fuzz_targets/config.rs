//! The config loader: any text is either a valid Config or an error that names its origin.
#![no_main]

use condense::Config;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match Config::from_toml_str(text, "fuzz.toml") {
        Ok(config) => {
            // A loaded config answers for any tool name, including the text itself.
            let _ = config.rule_for(text);
        }
        Err(error) => assert!(error.to_string().contains("fuzz.toml"), "{error}"),
    }
});
