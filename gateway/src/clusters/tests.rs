//! Unit tests: config-server JSON, `[[clusters]]` validation, the login defaults' precedence.

use super::config_server::{parse_cluster, parse_list};
use super::ClusterError;
use crate::config::Config;
use crate::login_name::{defaults_for, parse, resolve_for, Origin};

const BASE: &str = "[listen]\naddress = \"127.0.0.1:2883\"\n[backend]\naddress = \"127.0.0.1:3306\"\n\
                    [[users]]\nname = \"app\"\npassword = \"\"\n[[users]]\nname = \"own\"\npassword = \"\"\ntenant = \"t9\"\n";

fn config(extra: &str) -> Result<Config, String> {
    Config::parse(&format!("{BASE}{extra}"), "t").map_err(|e| e.to_string())
}

#[test]
fn cluster_entry_json_gives_sql_addresses() {
    let body = r#"{"Message":"successful","Success":true,"Code":200,
        "Data":{"ObRegion":"c1","ObRegionId":1,"RsList":[{"address":"10.0.0.1:2882","role":"leader","sql_port":2881},
        {"address":"10.0.0.2:2882","role":"follower","sql_port":3881}],"ReadonlyRsList":[]}}"#;
    let e = parse_cluster("u", body).unwrap();
    assert_eq!(e.region.as_deref(), Some("c1"));
    assert_eq!(e.rslist, vec!["10.0.0.1:2881".parse().unwrap(), "10.0.0.2:3881".parse().unwrap()]);
}

#[test]
fn bad_config_server_replies_are_clear_errors() {
    for (body, want) in [
        ("<html>oops</html>", "not the expected JSON"),
        (r#"{"Success":false,"Code":500,"Message":"no such cluster"}"#, "unsuccessful"),
        (r#"{"Success":true,"Code":200,"Data":{"RsList":[]}}"#, "RsList is empty"),
        (r#"{"Success":true,"Code":200}"#, "no Data"),
        (r#"{"Data":{"RsList":[{"address":"nohost","sql_port":1}]}}"#, "not ip:port"),
    ] {
        let e = parse_cluster("http://cs/x", body).unwrap_err();
        assert!(matches!(e, ClusterError::ConfigServer { .. }), "{e}");
        assert!(e.to_string().contains(want) && e.to_string().contains("http://cs/x"), "{body}: {e}");
    }
}

#[test]
fn cluster_list_json() {
    let body = r#"{"Code":200,"Success":true,"Data":{"ObRootServiceInfoUrlList":[
        {"ObRegion":"c1","ObRootServiceInfoUrl":"http://cs/c1"},{"ObRegion":"c2","ObRootServiceInfoUrl":"http://cs/c2"}]}}"#;
    let list = parse_list("u", body).unwrap();
    assert_eq!(list, vec![("c1".into(), "http://cs/c1".into()), ("c2".into(), "http://cs/c2".into())]);
}

#[test]
fn clusters_config_is_validated() {
    let ok = config("[routing]\n[[clusters]]\nname = \"c1\"\nrslist = [\"127.0.0.1:2881\"]\n").unwrap();
    let c = &ok.clusters[0];
    assert_eq!((c.sys_user.as_str(), c.refresh_ms, c.sys_password.as_str()), ("proxyro@sys", 15_000, ""));
    assert!(ok.routing.unwrap().topology.is_none());
    let cases = [
        ("[routing]\n", "needs topology"),
        ("[[clusters]]\nname = \"c1\"\nrslist = [\"127.0.0.1:1\"]\n", "needs a [routing]"),
        ("[routing]\n[[clusters]]\nname = \"c1\"\n", "set rslist or config_server_url"),
        ("[routing]\n[[clusters]]\nname = \"c1\"\nrslist = [\"127.0.0.1:1\"]\nconfig_server_url = \"http://x/\"\n", "not both"),
        ("[routing]\n[[clusters]]\nname = \"c1\"\nconfig_server_url = \"https://x/\"\n", "https is not supported"),
        (
            "[routing]\n[[clusters]]\nname = \"c1\"\nrslist = [\"127.0.0.1:1\"]\n[[clusters]]\nname = \"c1\"\nrslist = [\"127.0.0.1:2\"]\n",
            "configured twice",
        ),
        ("[routing]\nconfig_server_url = \"ftp://x\"\n", "routing.config_server_url"),
        ("[routing]\ntopology = \"demo\"\ntarget_db_server = \"10.0.0.1\"\n", "routing.target_db_server"),
        ("[routing]\ntopology = \"demo\"\ntarget_db_server = \" , \"\n", "not a list of ip:port"),
    ];
    for (extra, want) in cases {
        let e = config(extra).unwrap_err();
        assert!(e.contains(want), "{extra}: {e}");
    }
    assert!(config("[routing]\nconfig_server_url = \"http://cs:8080/list\"\n").is_ok());
    let targets = "[routing]\ntopology = \"demo\"\ntarget_db_server = \"10.0.0.1:2881, [::1]:2881\"\n";
    assert!(config(targets).is_ok());
}

const DIALLED: &str = "[[listen.dialled]]\naddress = \"127.0.0.1:2883\"\ncluster = \"c2\"\ntenant = \"t2\"\n\
                       [[listen.dialled]]\naddress = \"10.0.0.5:2881\"\ntenant = \"t5\"\n";

fn routed(extra: &str) -> Config {
    let text = BASE.replace("[backend]", &format!("{DIALLED}[backend]"));
    Config::parse(&format!("{text}[routing]\ndefault_tenant = \"td\"\n[[clusters]]\nname = \"c1\"\nrslist = [\"127.0.0.1:1\"]\n{extra}"), "t")
        .unwrap()
}

#[test]
fn dialled_address_defaults_come_after_account_and_login_config() {
    let c = routed("");
    let app = c.user("app");
    let listener = Some("127.0.0.1:2883".parse().unwrap());
    let steered = Some("10.0.0.5:2881".parse().unwrap());
    let d = defaults_for(app, &c, Some("c1".into()), listener);
    assert_eq!((d.tenant.as_deref(), d.cluster.as_deref()), (Some("t2"), Some("c2")));
    // An address mapping only a tenant keeps the default cluster.
    let d = defaults_for(app, &c, Some("c1".into()), steered);
    assert_eq!((d.tenant.as_deref(), d.cluster.as_deref()), (Some("t5"), Some("c1")));
    // Unmapped: [routing] default_tenant and the default cluster.
    let d = defaults_for(app, &c, Some("c1".into()), Some("127.0.0.1:9".parse().unwrap()));
    assert_eq!((d.tenant.as_deref(), d.cluster.as_deref()), (Some("td"), Some("c1")));
    // The account's tenant wins over the address's.
    let d = defaults_for(c.user("own"), &c, Some("c1".into()), listener);
    assert_eq!((d.tenant.as_deref(), d.cluster.as_deref()), (Some("t9"), Some("c2")));
    // The name's own parts win over everything.
    let r =
        resolve_for(&parse("app@t1#c1", &Default::default()).unwrap(), app, &c, Some("c1".into()), listener).unwrap();
    assert_eq!((r.tenant.as_deref(), r.cluster.as_deref(), r.cluster_from), (Some("t1"), Some("c1"), Origin::Name));
    let r = resolve_for(&parse("app", &Default::default()).unwrap(), app, &c, Some("c1".into()), listener).unwrap();
    assert_eq!((r.tenant.as_deref(), r.cluster.as_deref(), r.tenant_from), (Some("t2"), Some("c2"), Origin::Listener));
}

#[test]
fn login_section_wins_over_the_dialled_address() {
    let c = routed("[login]\ntenant = \"lt\"\ncluster = \"lc\"\n");
    let listener = Some("127.0.0.1:2883".parse().unwrap());
    let r = resolve_for(&parse("app", &Default::default()).unwrap(), c.user("app"), &c, Some("c1".into()), listener)
        .unwrap();
    assert_eq!((r.tenant.as_deref(), r.cluster.as_deref(), r.tenant_from), (Some("lt"), Some("lc"), Origin::Config));
}

#[tokio::test]
async fn unknown_cluster_is_unknown_and_default_is_the_first_entry() {
    let c = routed("");
    let clusters = super::Clusters::new(&c, None);
    assert!(clusters.routed());
    assert_eq!(clusters.default_cluster().await.as_deref(), Some("c1"));
    let e = clusters.planner("nope").await.unwrap_err();
    assert!(matches!(e, ClusterError::Unknown { .. }), "{e}");
    assert!(clusters.planners().is_empty());
}

/// A config server that answers every request with HTTP 503 and counts them.
async fn failing_config_server() -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/list", listener.local_addr().unwrap());
    let count = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = count.clone();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf).await;
            let _ = s
                .write_all(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                .await;
        }
    });
    (url, count)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_cluster_list_is_not_asked_again_by_every_login() {
    let (url, requests) = failing_config_server().await;
    let c = config(&format!("[routing]\nconfig_server_url = \"{url}\"\n")).unwrap();
    let clusters = super::Clusters::new(&c, None);
    for _ in 0..5 {
        assert_eq!(clusters.default_cluster().await, None, "no list, no default cluster");
        assert!(matches!(clusters.planner("c9").await, Err(ClusterError::ConfigServer { .. })));
    }
    assert_eq!(requests.load(std::sync::atomic::Ordering::SeqCst), 1, "one request within LIST_RETRY");
}
