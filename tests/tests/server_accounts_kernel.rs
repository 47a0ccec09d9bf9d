//! Accounts from the servers on the real OceanBase kernel (seekdb): `[auth] accounts = "servers"`
//! reads `mysql.user` (hash in `password`, plugin `ob_native_password`) through a metadata
//! account with `SELECT` on it; an account made with `CREATE USER` logs in through a 1:1 gateway
//! with the `mariadb` CLI, a changed password works at once, and a locked account gets the
//! kernel's own ERROR 3118 "User locked".
//!
//! Needs root and the seekdb binary from `scripts/setup.sh`; otherwise the test prints `SKIP:`.

use gateway_tests::clients::MariadbCli;
use gateway_tests::gateway::{Gateway, GatewayConfig};
use gateway_tests::seekdb::{Seekdb, SQL_PORT};

/// What the CLI answered: stdout when it succeeded, else its `ERROR …` line.
fn answer(cli: &MariadbCli, sql: &str) -> String {
    let out = cli.run(sql).unwrap();
    if out.success() {
        out.stdout.trim().to_string()
    } else {
        out.stderr.lines().find(|l| l.starts_with("ERROR")).unwrap_or(out.stderr.trim()).to_string()
    }
}

#[test]
fn kernel_accounts_log_in_without_a_users_entry() {
    if let Some(reason) = Seekdb::skip_reason() {
        gateway_tests::skip::skip("server_accounts_kernel", &reason);
        return;
    }
    let db = Seekdb::start("server-accounts-kernel").unwrap();
    db.sql(
        "CREATE USER gwmeta IDENTIFIED BY 'meta-pw'; GRANT SELECT ON mysql.user TO gwmeta; \
         CREATE USER ka IDENTIFIED BY 'ka-pw'; CREATE USER kl IDENTIFIED BY 'kl-pw'; ALTER USER kl ACCOUNT LOCK",
    )
    .unwrap();
    let mut cfg = GatewayConfig::new(([127, 0, 0, 1], SQL_PORT).into()).unwrap();
    cfg.extra_tables.push("[auth]\naccounts = \"servers\"\nuser = \"gwmeta\"\npassword = \"meta-pw\"\n".into());
    let gw = Gateway::start_in_netns(db.netns(), &cfg.to_toml()).unwrap();
    let via = |user: &str, pw: &str| MariadbCli::new(gw.port()).in_netns(db.netns()).user(user).password(pw);
    let direct = |user: &str, pw: &str| MariadbCli::new(SQL_PORT).in_netns(db.netns()).user(user).password(pw);
    assert_eq!(answer(&via("ka", "ka-pw"), "SELECT CURRENT_USER()"), "ka@%", "{}", gw.log_tail(3000));
    let locked = answer(&direct("kl", "kl-pw"), "SELECT 1");
    assert_eq!(locked, "ERROR 3118 (HY000): User locked");
    assert_eq!(answer(&via("kl", "kl-pw"), "SELECT 1"), locked);
    db.sql("ALTER USER ka IDENTIFIED BY 'ka-new'").unwrap();
    assert_eq!(answer(&via("ka", "ka-new"), "SELECT CURRENT_USER()"), "ka@%", "{}", gw.log_tail(3000));
    assert!(answer(&via("ka", "ka-pw"), "SELECT 1").starts_with("ERROR 1045"), "old password refused");
    assert!(answer(&via("ka", "wrong"), "SELECT 1").starts_with("ERROR 1045"));
}
