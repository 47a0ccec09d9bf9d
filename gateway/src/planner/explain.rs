//! EXPLAIN ROUTE text in ODP's layout: the query, Route Prompts, Route Plan (docs/routing.md §15).

use super::Planned;

/// The one text value EXPLAIN ROUTE returns for `query`.
pub fn render_explain(query: &str, planned: &Planned) -> String {
    let mut out = format!("Trans Current Query:\"{query}\"\n\n");
    out.push_str(&planned.plan.render_prompts());
    out.push('\n');
    out.push_str(&planned.plan.render_plan());
    if let Err(e) = &planned.decision {
        out.push_str(&format!("\nRoute Error\n-----------------\n> {e}\n"));
    }
    out
}
