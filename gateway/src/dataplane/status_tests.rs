//! Unit tests of the data-plane status model and its rendering.

use super::*;

fn sample_status() -> DataplaneStatus {
    DataplaneStatus {
        pid: 4242,
        mode: "router".into(),
        ebpf: EbpfState::Active,
        interface: Some("gw0".into()),
        vip_cidrs: vec!["10.255.0.0/16".into(), "10.254.0.0/24".into()],
        steering: Some(SteeringStatus {
            programs: vec![ProgramStatus {
                name: "router_assign".into(),
                kind: "sched_cls".into(),
                target: "tc ingress gw0".into(),
                id: Some(77),
            }],
            maps: vec![
                MapStatus { name: "VIP_CIDRS".into(), entries: 4, capacity: 1024 },
                MapStatus { name: "LISTENER".into(), entries: 1, capacity: 1 },
            ],
            counters: vec![("vip_packets".into(), 12), ("assign_listener".into(), 2)],
            ports: vec![2881, 3306],
            routes_added: vec!["10.255.0.0/16".into()],
            routes_kept: vec!["10.254.0.0/24".into()],
        }),
        splice: Some(SpliceStatus {
            active: 1,
            spliced_total: 3,
            kernel_bytes: 1 << 20,
            budget_fallbacks: 2,
            wakeups: 5,
            wakeups_lost: 1,
        }),
        cgroup: None,
    }
}

#[test]
fn prometheus_text_round_trips() {
    let st = sample_status();
    let text = st.to_prometheus();
    assert!(text.contains("gateway_dataplane_steering_events_total{event=\"assign_listener\"} 2\n"), "{text}");
    assert!(text.contains("# TYPE gateway_splice_kernel_bytes_total counter\n"), "{text}");
    assert_eq!(DataplaneStatus::from_prometheus(&text).unwrap(), st);
}

#[test]
fn unavailable_reason_survives_escaping() {
    let st = DataplaneStatus {
        pid: 1,
        mode: "sk_lookup".into(),
        ebpf: EbpfState::Unavailable("needs root \"CAP_BPF\"\\x\nnext".into()),
        vip_cidrs: vec!["10.0.0.0/8".into()],
        ..Default::default()
    };
    let back = DataplaneStatus::from_prometheus(&st.to_prometheus()).unwrap();
    assert_eq!(back, st);
    assert!(back.report().contains("userspace only"));
}

#[test]
fn report_names_every_section() {
    let r = sample_status().report();
    for want in [
        "mode:             router (eBPF active; daemon pid 4242)",
        "10.255.0.0/16 (local route added by the gateway)",
        "10.254.0.0/24 (local route pre-existing, kept)",
        "steered ports:    2881, 3306",
        "router_assign (sched_cls) on tc ingress gw0, id 77",
        "VIP_CIDRS 4/1024 entries",
        "vip_packets=12 assign_listener=2",
        "1 spliced now, 3 in total, 1048576 bytes forwarded in kernel, 2 budget fallbacks, 5 wake-ups (1 lost)",
    ] {
        assert!(r.contains(want), "missing {want:?} in:\n{r}");
    }
    let none = DataplaneStatus { mode: "off".into(), ..Default::default() }.report();
    assert!(none.contains("splice:           not reported"), "{none}");
}

#[test]
fn foreign_pages_are_rejected() {
    assert!(DataplaneStatus::from_prometheus("# nothing\nup 1\n").is_err());
    assert!(DataplaneStatus::from_prometheus("gateway_dataplane_info{mode=\"x} 1").is_err());
}
