//! Router mode attachment: the `router_assign` classifier on the clsact ingress of one interface
//! (TCX link on kernels ≥ 6.6), in the calling thread's network namespace.

use aya::programs::tc::SchedClassifierLinkId;
use aya::programs::{SchedClassifier, TcAttachType};
use aya::Ebpf;
use gateway_common::router::ROUTER_PROGRAM;

use super::super::status::ProgramStatus;
use super::super::DataplaneError;
use super::{program_error, program_status};

/// The attached classifier; detached by [`RouterLink::detach`] (the owner calls it).
pub(super) struct RouterLink {
    iface: String,
    link: SchedClassifierLinkId,
}

impl RouterLink {
    /// Adds the clsact qdisc (an existing one is fine), loads and attaches the classifier.
    pub(super) fn attach(ebpf: &mut Ebpf, iface: &str) -> Result<Self, DataplaneError> {
        crate::dataplane::counter::add_clsact(iface)?;
        let program = program_mut(ebpf)?;
        program.load().map_err(|e| program_error(ROUTER_PROGRAM, e).classify())?;
        let link =
            program.attach(iface, TcAttachType::Ingress).map_err(|e| program_error(ROUTER_PROGRAM, e).classify())?;
        tracing::debug!(iface, "router classifier attached");
        Ok(Self { iface: iface.to_owned(), link })
    }

    pub(super) fn detach(self, ebpf: &mut Ebpf) -> Result<(), DataplaneError> {
        program_mut(ebpf)?.detach(self.link).map_err(|e| program_error(ROUTER_PROGRAM, e))?;
        tracing::debug!(iface = %self.iface, "router classifier detached");
        Ok(())
    }

    pub(super) fn status(&self, ebpf: &Ebpf) -> ProgramStatus {
        program_status(ebpf.program(ROUTER_PROGRAM), ROUTER_PROGRAM, "sched_cls", format!("tc ingress {}", self.iface))
    }
}

fn program_mut(ebpf: &mut Ebpf) -> Result<&mut SchedClassifier, DataplaneError> {
    ebpf.program_mut(ROUTER_PROGRAM)
        .and_then(|p| <&mut SchedClassifier>::try_from(p).ok())
        .ok_or(DataplaneError::ProgramMissing { name: ROUTER_PROGRAM })
}
