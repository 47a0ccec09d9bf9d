//! The configuration loader (`Config::parse`: TOML, then validation) on arbitrary text; a config
//! that loads is validated again and its derived settings read.
#![no_main]

use gateway::config::Config;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(config) = Config::parse(text, "fuzz.toml") {
        assert!(config.validate().is_ok(), "a loaded config fails validation");
        let _ = config.connect_timeout();
        let _ = config.login.separators();
    }
});
