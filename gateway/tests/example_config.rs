//! The shipped example configuration (dist/gateway.example.toml) loads and documents every field.
//!
//! Field names come from the Rust source of the configuration structs, so adding a field
//! without adding it to the example fails here.

use std::collections::{BTreeMap, BTreeSet};

use gateway::config::Config;

const EXAMPLE: &str = include_str!("../../dist/gateway.example.toml");

/// Source files holding the structs the configuration is made of.
const SOURCES: &[(&str, &str)] = &[
    ("config.rs", include_str!("../src/config.rs")),
    ("config/dataplane.rs", include_str!("../src/config/dataplane.rs")),
    ("config/routing.rs", include_str!("../src/config/routing.rs")),
    ("config/users.rs", include_str!("../src/config/users.rs")),
    ("session/pool/config.rs", include_str!("../src/session/pool/config.rs")),
    ("topology/config.rs", include_str!("../src/topology/config.rs")),
    ("login_name.rs", include_str!("../src/login_name.rs")),
    ("tls/config.rs", include_str!("../src/tls/config.rs")),
    ("clusters/config.rs", include_str!("../src/clusters/config.rs")),
    ("accounts/config.rs", include_str!("../src/accounts/config.rs")),
];

/// TOML table of each configuration struct ("" is the top level).
const TABLES: &[(&str, &str)] = &[
    ("Config", ""),
    ("ListenConfig", "listen"),
    ("BackendConfig", "backend"),
    ("UserConfig", "users"),
    ("LogConfig", "log"),
    ("RoutingConfig", "routing"),
    ("CacheConfig", "routing.cache"),
    ("DataplaneConfig", "dataplane"),
    ("PoolConfig", "pool"),
    ("LoginConfig", "login"),
    ("MetricsConfig", "metrics"),
    ("TlsConfig", "tls"),
    ("BackendTls", "backend.tls"),
    ("ClusterConfig", "clusters"),
    ("DialledDefault", "listen.dialled"),
    ("AuthConfig", "auth"),
];

#[test]
fn example_loads_with_the_real_loader() {
    let config = Config::parse(EXAMPLE, "dist/gateway.example.toml").unwrap();
    assert_eq!(config.listen.address.port(), 2883, "a port below 1024 would need CAP_NET_BIND_SERVICE");
}

#[test]
fn example_with_every_setting_switched_on_deserialises() {
    // deny_unknown_fields catches misspelt keys and wrong types among the commented settings.
    let all: Config = toml::from_str(&uncommented(EXAMPLE)).unwrap_or_else(|e| panic!("{e}"));
    assert!(all.routing.is_some() && all.dataplane.is_some());
}

#[test]
fn example_names_every_field_of_every_config_struct() {
    let structs = config_structs();
    let tables: BTreeMap<_, _> = TABLES.iter().copied().collect();
    let keys = keys_by_table(&uncommented(EXAMPLE));
    let mut missing = Vec::new();
    for (name, fields) in &structs {
        let Some(table) = tables.get(name.as_str()) else {
            panic!("config struct {name} has no table in TABLES (tests/example_config.rs): add it and document it");
        };
        for field in fields {
            if !keys.get(*table).is_some_and(|k| k.contains(field)) {
                missing.push(format!("[{table}] {field}"));
            }
        }
    }
    assert!(missing.is_empty(), "fields missing from dist/gateway.example.toml: {missing:?}");
    for name in tables.keys() {
        assert!(structs.contains_key(*name), "TABLES names {name}, which is no longer a config struct");
    }
}

#[test]
fn field_scanner_sees_the_known_fields() {
    // The scanner must find real fields, or the test above would pass vacuously.
    let structs = config_structs();
    assert!(structs["ListenConfig"].contains("handshake_timeout_secs"));
    assert!(structs["Config"].contains("login"));
    assert!(structs["LoginConfig"].contains("username_separator"));
    assert!(structs.values().map(BTreeSet::len).sum::<usize>() > 50);
}

/// Lines `#key = …` and `#[table]` become active; documentation lines start with `# `.
fn uncommented(text: &str) -> String {
    text.lines()
        .map(|l| match l.strip_prefix('#') {
            Some(rest) if rest.starts_with(|c: char| c.is_ascii_lowercase() || c == '[') => rest,
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Keys per table of a TOML text (tables by header; `[[users]]` counts as `users`).
fn keys_by_table(text: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut table = String::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            table = line.trim_matches(|c| c == '[' || c == ']').to_string();
            // The parent table exists too, even when it has no keys of its own.
            out.entry(table.clone()).or_default();
        } else if let Some((key, _)) = line.split_once('=').filter(|_| !line.starts_with('#')) {
            out.entry(table.clone()).or_default().insert(key.trim().to_string());
        }
    }
    // A sub-table is a key of its parent (`cache` in [routing], `listen` at the top level).
    let tables: Vec<String> = out.keys().cloned().collect();
    for t in tables.iter().filter(|t| !t.is_empty()) {
        let (parent, child) = t.rsplit_once('.').unwrap_or(("", t));
        out.entry(parent.to_string()).or_default().insert(child.to_string());
    }
    out
}

/// Deserialize structs of the sources and their `pub` field names.
fn config_structs() -> BTreeMap<String, BTreeSet<String>> {
    let mut out = BTreeMap::new();
    for (file, text) in SOURCES {
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let Some(name) = line.strip_prefix("pub struct ").and_then(|r| r.strip_suffix(" {")) else {
                continue;
            };
            let derive = lines[..i].iter().rev().take_while(|l| l.starts_with("#[") || l.starts_with("///"));
            if !derive.into_iter().any(|l| l.contains("Deserialize")) {
                continue;
            }
            let fields = lines[i + 1..]
                .iter()
                .take_while(|l| !l.starts_with('}'))
                .filter_map(|l| l.trim().strip_prefix("pub ")?.split_once(':').map(|(f, _)| f.to_string()))
                .collect();
            assert!(out.insert(name.to_string(), fields).is_none(), "{name} defined twice ({file})");
        }
    }
    out
}
