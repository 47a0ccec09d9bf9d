//! Route policy engine: consistency, LDC classification, policy orders, congestion, decision and trace.
//!
//! A pure decision engine (docs/routing.md §2, §4, §6, §15): [`decide`] takes a [`RouteRequest`]
//! (request facts, session and configuration settings, the candidate servers with their zone,
//! role and congestion state, an RNG seed) and returns a [`RouteDecision`] (chosen server, retry
//! order, policy, consistency, LDC codes and an EXPLAIN ROUTE trace). It reads no configuration,
//! cache or clock; [`congestion`] keeps the per-server congestion state machines that feed the
//! candidates' congestion field.

pub(crate) mod candidate;
pub mod congestion;
pub(crate) mod consistency;
pub(crate) mod decision;
pub(crate) mod entry;
pub(crate) mod error;
mod explain;
pub(crate) mod ldc;
pub(crate) mod order;
pub(crate) mod orders;
pub(crate) mod policy;
pub(crate) mod primary_zone;
pub(crate) mod request;
pub(crate) mod select;
pub(crate) mod trace;

#[cfg(test)]
mod tests;

pub use candidate::{Candidate, ReplicaType, Role, ZoneType};
pub use congestion::{Calm, CongestionConfig, CongestionKind, CongestionManager, CongestionState, ServerStatus};
pub use consistency::{decide_consistency, Consistency, ConsistencyInputs, ConsistencyRule, ReadConsistency};
pub use decision::{decide, decide_untraced, RouteDecision};
pub use entry::{RoleMatch, RouteEntry};
pub use error::{RouteError, TargetRefusal};
pub use ldc::{ClientLocation, IdcType, LdcCode, LdcContext};
pub use order::{Ranked, RankedCandidate, Via};
pub use policy::{ProxyRoutePolicy, RoutePolicy};
pub use primary_zone::{parse_zone_list, PrimaryZone};
pub use request::{PartitionState, RequestKind, RouteRequest, TargetDbServer, TargetSource, MAX_TARGETS};
pub use select::{choose_policy, PolicyChoice, TenantFacts};
pub use trace::{FieldValue, PlanStep, Point, Prompt, PromptLevel, RouteInfoType, RoutePlan};
