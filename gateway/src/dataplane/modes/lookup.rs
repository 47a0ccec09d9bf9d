//! sk_lookup mode attachment: the `vip_lookup` program on the network namespace of the calling
//! thread (`/proc/thread-self/ns/net`).

use std::fs::File;

use aya::programs::SkLookup;
use aya::Ebpf;
use gateway_common::router::SK_LOOKUP_PROGRAM;

use super::super::status::ProgramStatus;
use super::super::DataplaneError;
use super::{program_error, program_status};

/// The calling thread's network namespace (threads may have entered another one, see netns.rs).
const OWN_NETNS: &str = "/proc/thread-self/ns/net";

/// The attached program; detached by [`LookupLink::detach`] (the owner calls it).
pub(super) struct LookupLink {
    link: aya::programs::sk_lookup::SkLookupLinkId,
}

impl LookupLink {
    /// Loads the program and attaches it to this thread's network namespace.
    pub(super) fn attach(ebpf: &mut Ebpf) -> Result<Self, DataplaneError> {
        let netns = File::open(OWN_NETNS).map_err(|source| DataplaneError::Netns { path: OWN_NETNS.into(), source })?;
        let program = program_mut(ebpf)?;
        program.load().map_err(|e| program_error(SK_LOOKUP_PROGRAM, e).classify())?;
        let link = program.attach(netns).map_err(|e| program_error(SK_LOOKUP_PROGRAM, e).classify())?;
        tracing::debug!("sk_lookup program attached to the network namespace");
        Ok(Self { link })
    }

    pub(super) fn detach(self, ebpf: &mut Ebpf) -> Result<(), DataplaneError> {
        program_mut(ebpf)?.detach(self.link).map_err(|e| program_error(SK_LOOKUP_PROGRAM, e))?;
        tracing::debug!("sk_lookup program detached");
        Ok(())
    }

    pub(super) fn status(&self, ebpf: &Ebpf) -> ProgramStatus {
        program_status(ebpf.program(SK_LOOKUP_PROGRAM), SK_LOOKUP_PROGRAM, "sk_lookup", "netns".into())
    }
}

fn program_mut(ebpf: &mut Ebpf) -> Result<&mut SkLookup, DataplaneError> {
    ebpf.program_mut(SK_LOOKUP_PROGRAM)
        .and_then(|p| <&mut SkLookup>::try_from(p).ok())
        .ok_or(DataplaneError::ProgramMissing { name: SK_LOOKUP_PROGRAM })
}
