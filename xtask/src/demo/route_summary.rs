//! The one-line summary of an `EXPLAIN ROUTE` answer: chosen server, its role, partition and
//! consistency (docs/routing.md §15 for the text, docs/routing.md §3 for the LDC letter code).

/// What the route engine decided for one statement.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RouteSummary {
    /// `chosen_server` of ROUTE_POLICY (`ip:port`).
    pub server: Option<String>,
    /// Role of the chosen replica, from the LDC code: leader, follower, read-only, tenant server.
    pub role: Option<String>,
    /// Partition index as EXPLAIN ROUTE prints it (`p3`), if a partition was computed.
    pub partition: Option<String>,
    /// Tablet id of that partition.
    pub tablet: Option<u64>,
    /// `STRONG` or `WEAK`.
    pub consistency: Option<String>,
}

impl RouteSummary {
    /// Parses the Route Plan section of an EXPLAIN ROUTE answer.
    pub fn parse(text: &str) -> RouteSummary {
        RouteSummary {
            server: field(text, "ROUTE_POLICY", "chosen_server"),
            role: field(text, "ROUTE_POLICY", "ldc").and_then(|c| role(&c)),
            partition: field(text, "PARTITION_ID_CALC_DONE", "partitions")
                .map(|p| p.trim_matches(|c| c == '(' || c == ')').to_string()),
            tablet: field(text, "PARTITION_ID_CALC_DONE", "partition_id").and_then(|t| t.parse().ok()),
            consistency: field(text, "ROUTE_POLICY", "consistency_level"),
        }
    }

    /// `s2 leader p3 STRONG`, with the server named by `name_of` (address → topology name).
    pub fn text(&self, name_of: impl Fn(&str) -> String) -> String {
        let server = self.server.as_deref().map_or_else(|| "?".to_string(), name_of);
        let mut parts = vec![server];
        parts.extend(self.role.clone());
        parts.push(self.partition.clone().unwrap_or_else(|| "-".into()));
        parts.extend(self.consistency.clone());
        parts.join(" ")
    }
}

/// The value of `key` in the `> POINT:{…}` line: a quoted string or a bare token.
fn field(text: &str, point: &str, key: &str) -> Option<String> {
    let head = format!("> {point}:{{");
    let line = text.lines().find(|l| l.trim_start().starts_with(&head))?;
    let body = &line[line.find(&head)? + head.len()..];
    let needle = format!("{key}:");
    let at = body
        .match_indices(&needle)
        .map(|(i, _)| i)
        .find(|&i| i == 0 || body[..i].ends_with(' ') || body[..i].ends_with('{'))?;
    let value = &body[at + needle.len()..];
    if let Some(quoted) = value.strip_prefix('"') {
        return quoted.split('"').next().map(str::to_string);
    }
    value.split([',', '}']).next().map(|v| v.trim().to_string())
}

/// Role from the LDC letter code `<A|B|C><N|M>[R|W]<P|T>[L|F|D]`.
fn role(code: &str) -> Option<String> {
    let letters: Vec<char> = code.chars().collect();
    let rest = letters.get(2..)?;
    let (read_only, rest) = match rest.first() {
        Some('R') => (true, &rest[1..]),
        Some('W') => (false, &rest[1..]),
        _ => (false, rest),
    };
    let text = match (rest.first(), rest.get(1)) {
        (Some('T'), _) => "tenant-server",
        (_, _) if read_only => "read-only",
        (_, Some('L')) => "leader",
        (_, Some('F')) => "follower",
        (_, Some('D')) => "duplicate",
        _ => "replica",
    };
    Some(text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLAN: &str = r#"Route Plan
-----------------
> SQL_PARSE:{cmd:"COM_QUERY", table:"t0"}
  > PARTITION_ID_CALC_DONE:{partition_id:200065, level:1, partitions:"(p3)"}
  > PARTITION_ENTRY_LOOKUP_DONE:{leader:"127.0.0.1:3312", entry_from_remote:false}
> ROUTE_POLICY:{chosen_route_type:"ROUTE_TYPE_LEADER", route_policy:"ONLY_READWRITE_ZONE", consistency_level:"STRONG", chosen_server:"127.0.0.1:3312", ldc:"BNWPL", type:"FULL", seed:1}
> CONGESTION_CONTROL:{svr_addr:"127.0.0.1:3312"}"#;

    #[test]
    fn strong_read_on_a_partition() {
        let s = RouteSummary::parse(PLAN);
        assert_eq!(s.server.as_deref(), Some("127.0.0.1:3312"));
        assert_eq!((s.partition.as_deref(), s.tablet), (Some("p3"), Some(200_065)));
        assert_eq!(s.text(|_| "s2".into()), "s2 leader p3 STRONG");
    }

    #[test]
    fn no_table_and_roles() {
        let text = "> ROUTE_POLICY:{consistency_level:\"WEAK\", chosen_server:\"127.0.0.1:1\", ldc:\"ANWT\"}";
        assert_eq!(RouteSummary::parse(text).text(|a| a.to_string()), "127.0.0.1:1 tenant-server - WEAK");
        assert_eq!(role("CNRPF").as_deref(), Some("read-only"));
        assert_eq!(role("ANPF").as_deref(), Some("follower"));
        assert_eq!(RouteSummary::parse("ERROR"), RouteSummary::default());
    }
}
