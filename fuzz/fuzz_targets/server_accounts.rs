//! Accounts read from the servers (`[auth] accounts = "servers"`): rows of `mysql.global_priv`
//! and `mysql.user` with any text (the JSON of `Priv` is the server's, still bounded), host
//! patterns against client addresses, stored `mysql_native_password` hashes, and a client's
//! `client_ed25519` answer of any length.
#![no_main]

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use arbitrary::Arbitrary;
use gateway::accounts::{entry, host, Flavour, Proof};
use gateway::protocol::{auth, ed25519};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input {
    /// A row of either query (any column may be NULL).
    row: Vec<Option<String>>,
    /// Read as `mysql.global_priv` (else as `mysql.user`).
    global_priv: bool,
    /// The client's address.
    v4: u32,
    v6: Option<u128>,
    /// The client's answer to a scramble or a nonce.
    answer: Vec<u8>,
    salt: [u8; 20],
    nonce: [u8; 32],
}

fuzz_target!(|input: Input| {
    let account = if input.global_priv {
        entry::from_global_priv(&input.row, Flavour::MariaDb)
    } else {
        entry::from_user_table(&input.row, Flavour::OceanBase)
    };
    let client = match input.v6 {
        Some(v6) => IpAddr::V6(Ipv6Addr::from(v6)),
        None => IpAddr::V4(Ipv4Addr::from(input.v4)),
    };
    // Host patterns also come from arbitrary text: every row's second column.
    if let Some(Some(pattern)) = input.row.get(1) {
        let _ = (host::matches(pattern, client), host::specificity(pattern));
        if pattern.bytes().all(|b| b == b'%') && pattern.len() <= 255 {
            assert!(host::matches(pattern, client), "{pattern:?} admits every client");
        }
    }
    let Some(account) = account else { return };
    assert!(!account.user.is_empty(), "anonymous accounts are skipped");
    let _ = account.locked_error(&client.to_string());
    if let Proof::Native(hash) = account.proof() {
        if let Some(stage2) = auth::parse_native_hash(&hash) {
            let _ = auth::native_verify(&input.answer, &input.salt, &stage2);
        }
    }
    let key = ed25519::public_key(account.auth_string.as_bytes());
    assert!(!ed25519::verify(&key, &input.nonce, &input.answer[..input.answer.len().min(63)]), "a short answer");
});
