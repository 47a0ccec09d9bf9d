//! `local` routes for the VIP ranges over rtnetlink: the equivalent of
//! `ip route add local <cidr> dev lo` (table `local`, scope host) and its removal.
//!
//! Router mode needs them because `bpf_sk_assign` only takes effect for packets routed locally;
//! sk_lookup mode needs them because sk_lookup only runs for local destinations (docs/dataplane.md
//! docs/dataplane.md §2, docs/dataplane.md §2). Requests go to the network namespace of the calling thread.

use std::io;

use netlink_packet_core::{
    NetlinkHeader, NetlinkMessage, NetlinkPayload, NLM_F_ACK, NLM_F_CREATE, NLM_F_EXCL, NLM_F_REQUEST,
};
use netlink_packet_route::route::{
    RouteAddress, RouteAttribute, RouteHeader, RouteMessage, RouteProtocol, RouteScope, RouteType,
};
use netlink_packet_route::{AddressFamily, RouteNetlinkMessage};
use netlink_sys::{protocols::NETLINK_ROUTE, Socket, SocketAddr};

use super::super::DataplaneError;
use super::plan::Ipv4Cidr;

/// `RT_TABLE_LOCAL`: where `ip route add local …` puts routes of type `local`.
const RT_TABLE_LOCAL: u8 = 255;

/// The `local` routes this process added; dropping the value removes them again. Routes that
/// already existed (added by an administrator) are used but left in place.
#[derive(Debug)]
pub struct LocalRoutes {
    lo_index: u32,
    added: Vec<Ipv4Cidr>,
    preexisting: Vec<Ipv4Cidr>,
}

impl LocalRoutes {
    /// Adds a `local` route on `lo` for every range. On failure, the routes added so far are
    /// removed before the error is returned.
    pub fn add(cidrs: &[Ipv4Cidr]) -> Result<Self, DataplaneError> {
        let lo_index = loopback_index()?;
        let mut routes = Self { lo_index, added: Vec::new(), preexisting: Vec::new() };
        for cidr in cidrs {
            match request(&new_message(*cidr, lo_index), true) {
                Ok(()) => routes.added.push(*cidr),
                Err(e) if e.raw_os_error() == Some(libc::EEXIST) => routes.preexisting.push(*cidr),
                Err(e) => return Err(route_error("adding", *cidr, e)),
            }
        }
        tracing::info!(added = ?cidr_list(&routes.added), kept = ?cidr_list(&routes.preexisting), "local routes for the VIP ranges");
        Ok(routes)
    }

    /// Ranges whose route this process added (and will remove).
    pub fn added(&self) -> &[Ipv4Cidr] {
        &self.added
    }

    /// Ranges whose route existed before and is left in place.
    pub fn preexisting(&self) -> &[Ipv4Cidr] {
        &self.preexisting
    }

    /// Removes the added routes now, reporting the first failure.
    pub fn remove(mut self) -> Result<(), DataplaneError> {
        self.remove_all()
    }

    fn remove_all(&mut self) -> Result<(), DataplaneError> {
        let mut first = None;
        for cidr in std::mem::take(&mut self.added) {
            match request(&del_message(cidr, self.lo_index), false) {
                // Already gone (an administrator or the namespace's end removed it): fine.
                Ok(()) => {}
                Err(e) if e.raw_os_error() == Some(libc::ESRCH) => {}
                Err(e) => {
                    first.get_or_insert(route_error("removing", cidr, e));
                }
            }
        }
        first.map_or(Ok(()), Err)
    }
}

impl Drop for LocalRoutes {
    fn drop(&mut self) {
        if let Err(e) = self.remove_all() {
            tracing::warn!(error = %e, "removing the VIP local routes failed");
        }
    }
}

fn cidr_list(cidrs: &[Ipv4Cidr]) -> Vec<String> {
    cidrs.iter().map(ToString::to_string).collect()
}

fn route_error(what: &'static str, cidr: Ipv4Cidr, source: io::Error) -> DataplaneError {
    DataplaneError::Route { what, cidr: cidr.to_string(), source }.classify()
}

/// Index of `lo` in the calling thread's network namespace.
fn loopback_index() -> Result<u32, DataplaneError> {
    let name = c"lo";
    // SAFETY: `name` is a valid NUL-terminated string that outlives the call.
    let index = unsafe { libc::if_nametoindex(name.as_ptr()) };
    if index == 0 {
        return Err(DataplaneError::Route {
            what: "finding interface lo for",
            cidr: String::new(),
            source: io::Error::last_os_error(),
        });
    }
    Ok(index)
}

fn route_message(cidr: Ipv4Cidr, lo_index: u32) -> RouteMessage {
    let mut msg = RouteMessage::default();
    msg.header = RouteHeader {
        address_family: AddressFamily::Inet,
        destination_prefix_length: cidr.len,
        table: RT_TABLE_LOCAL,
        protocol: RouteProtocol::Boot,
        scope: RouteScope::Host,
        kind: RouteType::Local,
        ..Default::default()
    };
    msg.attributes = vec![RouteAttribute::Destination(RouteAddress::Inet(cidr.addr)), RouteAttribute::Oif(lo_index)];
    msg
}

fn new_message(cidr: Ipv4Cidr, lo_index: u32) -> RouteNetlinkMessage {
    RouteNetlinkMessage::NewRoute(route_message(cidr, lo_index))
}

fn del_message(cidr: Ipv4Cidr, lo_index: u32) -> RouteNetlinkMessage {
    RouteNetlinkMessage::DelRoute(route_message(cidr, lo_index))
}

/// Sends one request and waits for its acknowledgement; a NACK becomes its `io::Error`.
fn request(message: &RouteNetlinkMessage, create: bool) -> io::Result<()> {
    let mut socket = Socket::new(NETLINK_ROUTE)?;
    socket.bind_auto()?;
    socket.connect(&SocketAddr::new(0, 0))?;
    let mut header = NetlinkHeader::default();
    header.flags = NLM_F_REQUEST | NLM_F_ACK;
    if create {
        header.flags |= NLM_F_CREATE | NLM_F_EXCL;
    }
    header.sequence_number = 1;
    let mut msg = NetlinkMessage::new(header, NetlinkPayload::from(message.clone()));
    msg.finalize();
    let mut out = vec![0u8; msg.buffer_len()];
    msg.serialize(&mut out);
    socket.send(&out, 0)?;
    loop {
        let mut buf: Vec<u8> = Vec::with_capacity(8192);
        let n = socket.recv(&mut buf, 0)?;
        let mut offset = 0;
        while offset < n {
            let reply = NetlinkMessage::<RouteNetlinkMessage>::deserialize(&buf[offset..n])
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("netlink reply: {e}")))?;
            let len = reply.header.length as usize;
            match reply.payload {
                NetlinkPayload::Error(err) => {
                    return match err.code {
                        None => Ok(()),
                        Some(code) => Err(io::Error::from_raw_os_error(-code.get())),
                    };
                }
                NetlinkPayload::Done(_) => return Ok(()),
                _ => {}
            }
            if len == 0 {
                break;
            }
            offset += len;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_is_a_local_host_route_in_the_local_table() {
        let cidr = Ipv4Cidr::parse("10.255.0.0/16").unwrap();
        let msg = route_message(cidr, 1);
        assert_eq!(msg.header.kind, RouteType::Local);
        assert_eq!(msg.header.scope, RouteScope::Host);
        assert_eq!(msg.header.table, RT_TABLE_LOCAL);
        assert_eq!(msg.header.destination_prefix_length, 16);
        assert!(msg.attributes.contains(&RouteAttribute::Oif(1)));
    }
}
