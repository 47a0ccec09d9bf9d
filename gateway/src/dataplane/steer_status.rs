//! Self-check of cgroup steering as `gateway dataplane status` shows it: per configured cgroup
//! (exists, cgroup v2, processes, processes in another network namespace, which steering programs
//! the kernel reports as effective there) and per address family (attached, rewrite targets,
//! intercepted destinations), with the warnings for a configuration that would steer nothing.

use std::fmt::Write as _;

use super::status::{family, sample};

const CGROUP: &str = "gateway_dataplane_cgroup_info";
const CGROUP_PROCS: &str = "gateway_dataplane_cgroup_processes";
const CGROUP_OTHER_NETNS: &str = "gateway_dataplane_cgroup_processes_other_netns";
const CGROUP_PROGRAM: &str = "gateway_dataplane_cgroup_program_effective";
const FAMILY: &str = "gateway_dataplane_steering_family_attached";
const FAMILY_TARGETS: &str = "gateway_dataplane_steering_family_targets";

/// One configured application cgroup.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CgroupCheck {
    /// Resolved directory.
    pub path: String,
    /// The directory exists.
    pub exists: bool,
    /// It is on a cgroup v2 file system.
    pub cgroup2: bool,
    /// Processes in it and its descendants.
    pub processes: u64,
    /// Of those, processes in another network namespace than the gateway's (containers).
    pub other_netns: u64,
    /// Steering program → whether the kernel reports it effective for this cgroup.
    pub programs: Vec<(String, bool)>,
}

/// One address family.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FamilyCheck {
    /// `ipv4` or `ipv6`.
    pub family: String,
    /// Its connect and getpeername programs are effective in every configured cgroup and it has
    /// a rewrite target.
    pub attached: bool,
    /// Rewrite target for the gateway's own network namespace (empty: none).
    pub host: String,
    /// Rewrite target for other network namespaces (empty: none).
    pub container: String,
    /// Intercepted destinations of this family.
    pub targets: u64,
}

/// The self-check of cgroup steering.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CgroupSteering {
    /// Per configured cgroup.
    pub cgroups: Vec<CgroupCheck>,
    /// Per family (`ipv4`, `ipv6`).
    pub families: Vec<FamilyCheck>,
}

impl CgroupSteering {
    /// What in this state steers nothing, one sentence each (logged loudly at start, shown by
    /// `gateway dataplane status`).
    pub fn warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        for c in &self.cgroups {
            if !c.exists {
                w.push(format!("cgroup {} does not exist: nothing in it can be steered", c.path));
            } else if !c.cgroup2 {
                w.push(format!("{} is not a cgroup v2 directory: cgroup programs cannot attach there", c.path));
            } else if c.processes == 0 {
                w.push(format!("cgroup {} holds no process: nothing is steered until one starts there", c.path));
            }
            let missing: Vec<&str> = c.programs.iter().filter(|(_, on)| !on).map(|(p, _)| p.as_str()).collect();
            if c.exists && !missing.is_empty() {
                w.push(format!("cgroup {}: not effective: {}", c.path, missing.join(", ")));
            }
        }
        let containers = self.cgroups.iter().map(|c| c.other_netns).sum::<u64>();
        let no_container_target = self.families.iter().all(|f| f.container.is_empty());
        if containers > 0 && no_container_target {
            w.push(format!(
                "{containers} process(es) in the configured cgroups live in another network namespace (containers) \
                 but [dataplane] container_addresses is empty: their connects are NOT steered"
            ));
        }
        for f in &self.families {
            if f.targets > 0 && f.host.is_empty() && f.container.is_empty() {
                w.push(format!(
                    "{} destinations are intercepted but the gateway has no {} listener: not steered",
                    f.family, f.family
                ));
            }
        }
        if self.families.iter().all(|f| f.targets == 0) {
            w.push("no intercepted destination: nothing is steered".into());
        }
        w
    }

    /// Prometheus samples.
    pub fn encode(&self, out: &mut String) {
        family(out, CGROUP, "gauge", "Configured application cgroup: exists, cgroup v2 (always 1).");
        for c in &self.cgroups {
            sample(out, CGROUP, &[("path", &c.path), ("exists", yes(c.exists)), ("cgroup2", yes(c.cgroup2))], 1);
        }
        family(out, CGROUP_PROCS, "gauge", "Processes in a configured cgroup and its descendants.");
        for c in &self.cgroups {
            sample(out, CGROUP_PROCS, &[("path", &c.path)], c.processes);
        }
        family(out, CGROUP_OTHER_NETNS, "gauge", "Of those, processes in another network namespace.");
        for c in &self.cgroups {
            sample(out, CGROUP_OTHER_NETNS, &[("path", &c.path)], c.other_netns);
        }
        family(out, CGROUP_PROGRAM, "gauge", "Steering program effective in a configured cgroup (1) or not (0).");
        for c in &self.cgroups {
            for (p, on) in &c.programs {
                sample(out, CGROUP_PROGRAM, &[("path", &c.path), ("program", p)], u64::from(*on));
            }
        }
        family(out, FAMILY, "gauge", "Steering of an address family attached (1) or not (0).");
        for f in &self.families {
            let labels =
                [("family", f.family.as_str()), ("host", f.host.as_str()), ("container", f.container.as_str())];
            sample(out, FAMILY, &labels, u64::from(f.attached));
        }
        family(out, FAMILY_TARGETS, "gauge", "Intercepted destinations of an address family.");
        for f in &self.families {
            sample(out, FAMILY_TARGETS, &[("family", &f.family)], f.targets);
        }
    }

    /// Takes one sample written by [`Self::encode`]; false when `name` is not one of ours.
    pub fn decode(&mut self, name: &str, label: &dyn Fn(&str) -> String, value: u64) -> bool {
        match name {
            CGROUP => {
                let c = self.cgroup(label("path"));
                c.exists = label("exists") == "yes";
                c.cgroup2 = label("cgroup2") == "yes";
            }
            CGROUP_PROCS => self.cgroup(label("path")).processes = value,
            CGROUP_OTHER_NETNS => self.cgroup(label("path")).other_netns = value,
            CGROUP_PROGRAM => self.cgroup(label("path")).programs.push((label("program"), value != 0)),
            FAMILY => {
                let f = self.family(label("family"));
                f.attached = value != 0;
                f.host = label("host");
                f.container = label("container");
            }
            FAMILY_TARGETS => self.family(label("family")).targets = value,
            _ => return false,
        }
        true
    }

    fn cgroup(&mut self, path: String) -> &mut CgroupCheck {
        let i = match self.cgroups.iter().position(|c| c.path == path) {
            Some(i) => i,
            None => {
                self.cgroups.push(CgroupCheck { path, ..Default::default() });
                self.cgroups.len() - 1
            }
        };
        &mut self.cgroups[i]
    }

    fn family(&mut self, name: String) -> &mut FamilyCheck {
        let i = match self.families.iter().position(|f| f.family == name) {
            Some(i) => i,
            None => {
                self.families.push(FamilyCheck { family: name, ..Default::default() });
                self.families.len() - 1
            }
        };
        &mut self.families[i]
    }

    /// Report lines.
    pub fn report(&self, o: &mut String) {
        for c in &self.cgroups {
            let on: Vec<&str> = c.programs.iter().filter(|(_, on)| *on).map(|(p, _)| p.as_str()).collect();
            let _ = writeln!(
                o,
                "cgroup:           {} (exists: {}, cgroup v2: {}, processes: {}, in other netns: {}, effective: {})",
                c.path,
                yes(c.exists),
                yes(c.cgroup2),
                c.processes,
                c.other_netns,
                if on.is_empty() { "none".to_owned() } else { on.join(" ") }
            );
        }
        for f in &self.families {
            let or_none = |s: &str| if s.is_empty() { "none".to_owned() } else { s.to_owned() };
            let _ = writeln!(
                o,
                "steering {}:    {} (host -> {}, containers -> {}, {} intercepted)",
                f.family,
                if f.attached { "attached" } else { "NOT attached" },
                or_none(&f.host),
                or_none(&f.container),
                f.targets
            );
        }
        for w in self.warnings() {
            let _ = writeln!(o, "WARNING:          {w}");
        }
    }
}

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample_state() -> CgroupSteering {
        CgroupSteering {
            cgroups: vec![CgroupCheck {
                path: "/sys/fs/cgroup/unified/ctr".into(),
                exists: true,
                cgroup2: true,
                processes: 3,
                other_netns: 2,
                programs: vec![("steer_connect4".into(), true), ("steer_connect6".into(), false)],
            }],
            families: vec![
                FamilyCheck {
                    family: "ipv4".into(),
                    attached: true,
                    host: "127.0.0.1:6033".into(),
                    container: "10.77.0.1:6033".into(),
                    targets: 2,
                },
                FamilyCheck {
                    family: "ipv6".into(),
                    attached: false,
                    host: String::new(),
                    container: String::new(),
                    targets: 1,
                },
            ],
        }
    }

    #[test]
    fn round_trips_through_prometheus_text() {
        let st = sample_state();
        let mut text = String::new();
        st.encode(&mut text);
        let mut back = CgroupSteering::default();
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let (name, labels, value) = super::super::status::parse_sample(line).unwrap();
            let label = |k: &str| labels.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone()).unwrap_or_default();
            assert!(back.decode(&name, &label, value), "{line}");
        }
        assert_eq!(back, st);
    }

    #[test]
    fn warns_about_what_steers_nothing() {
        let mut st = sample_state();
        let w = st.warnings().join("\n");
        assert!(w.contains("not effective: steer_connect6"), "{w}");
        assert!(w.contains("ipv6 destinations are intercepted but the gateway has no ipv6 listener"), "{w}");
        assert!(!w.contains("container_addresses"), "{w}");
        st.families[0].container.clear();
        st.cgroups[0].programs.clear();
        st.families[1].targets = 0;
        let w = st.warnings().join("\n");
        assert!(w.contains("2 process(es)") && w.contains("NOT steered"), "{w}");
        st.cgroups[0].exists = false;
        st.families[0].targets = 0;
        let w = st.warnings().join("\n");
        assert!(w.contains("does not exist") && w.contains("no intercepted destination"), "{w}");
        let mut report = String::new();
        sample_state().report(&mut report);
        assert!(report.contains("steering ipv6:    NOT attached"), "{report}");
        assert!(report.contains("in other netns: 2"), "{report}");
    }
}
