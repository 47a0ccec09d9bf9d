//! The result page of `cargo xtask bench` (`result.md`): the set-up in words, what the columns
//! mean, the summary table and every run.

use std::fmt::Write as _;

use gateway_tests::tls::ServerTlsFiles;

use super::{tls, BenchArgs, Rig};
use crate::report::{self, Sample};
use crate::sysbench;

/// The page: the set-up in words, what each column means, the table and every run.
pub(super) fn result_markdown(args: &BenchArgs, rig: &Rig, table: &report::Table, samples: &[Sample]) -> String {
    let mut md = String::from(if rig.tls.is_some() {
        "# sysbench over TLS: direct vs haproxy vs gateway (and the plain gateway)\n\n"
    } else {
        "# sysbench: direct vs haproxy vs gateway\n\n"
    });
    if args.cluster {
        let _ = writeln!(
            md,
            "Cluster mode: three MariaDB servers with the same sbtest rows (s1 :{}, s2 :{}, s3 :{}); \
             direct and haproxy use s1 only (an L4 proxy cannot split a session across servers); \
             the gateway routes with the static topology `topology.toml` next to this file (sbtest \
             tables HASH(id), leaders alternating s1/s2, read-only replicas on s3, gateway in idc1). \
             The `servers` column of every run is each server's share of the statements executed \
             during the run (its `Questions` counter).\n",
            rig.dbs[0].port(),
            rig.dbs[1].port(),
            rig.dbs[2].port()
        );
    }
    let _ = writeln!(
        md,
        "Direct: MariaDB 127.0.0.1:{}, haproxy 2.6 TCP mode (:{}), gateway release build (:{}); \
         sysbench {} tables x {} rows, {} threads, {} s per run, {} round(s), runs interleaved \
         direct → haproxy → gateway within each round. QPS and p95 are medians over rounds; the \
         ratios are medians of the per-round gateway/direct and gateway/haproxy QPS ratios.\n",
        rig.dbs[0].port(),
        rig.haproxy_port,
        rig.gateway.gateway.port(),
        sysbench::TABLES,
        sysbench::TABLE_SIZE,
        args.threads,
        args.time,
        args.rounds.max(1)
    );
    if let Some(certs) = &rig.tls {
        let _ = writeln!(md, "{}", tls_paragraph(&certs.server, rig));
    }
    if rig.routed.is_some() {
        md.push_str(
            "`routed` is a gateway in routing mode in front of the same server, with the topology \
             `topology-one.toml` next to this file (sbtest tables HASH(id) 4 partitions, every one led \
             by that server): it analyses and routes every statement, so its ratio is the cost of \
             routing; its sessions are on tokio's epoll reactor, and `routed-uring`'s, the same \
             gateway otherwise, on io_uring session threads (the default). `spliced` (root only) is a 1:1 gateway with `[dataplane] splice = true` for root: \
             after login the kernel forwards the session's bytes.\n\n",
        );
    }
    if !rig.relays.is_empty() {
        md.push_str(
            "`relay`, `relay-tokio`, `relay-hybrid` and `relay-uring` read no MySQL, for reading \
             each proxy's cost against (`cargo xtask relay`): the least a userspace relay can do \
             with a thread per direction and blocking calls; one tokio thread on epoll, as the \
             gateway's sessions (`--tokio`); the same runtime with its receives and sends on an \
             io_uring (`--hybrid`); and one thread on io_uring alone, each receive linked to its send \
             in the kernel (`--uring`).\n\n",
        );
    }
    if args.cpu {
        md.push_str(
            "CPU us/stmt: the proxy process's user + system CPU time (`/proc/<pid>/stat`, every \
             thread) over the run divided by the statements sysbench sent (its `queries` total), \
             median over rounds; cpu/haproxy is the median per-round ratio to haproxy's. host \
             us/stmt: the whole machine's busy CPU time (`/proc/stat`: sysbench, MariaDB, the proxy, \
             kernel workers, interrupts) over the run per statement; added us/stmt is the median \
             per-round difference to direct's, the proxy's full cost including the kernel work it \
             causes outside its own process (a spliced session's redirects run in kernel workers).\n\n",
        );
    }
    md.push_str(&table.to_markdown());
    md.push_str("\n## Every run\n\n");
    md.push_str(&report::raw_markdown(samples));
    md
}

/// The TLS set-up of a `--tls` run.
fn tls_paragraph(files: &ServerTlsFiles, rig: &Rig) -> String {
    format!(
        "TLS (`--tls`): CA `{}`, server certificate `{}` for 127.0.0.1 on every MariaDB; sysbench \
         `--mysql-ssl=on` as `{}` (`REQUIRE SSL`) on direct, haproxy (TCP passthrough of the TLS \
         bytes) and gateway (`[listen] tls = \"required\"`, `[backend.tls] mode = \"verify_ca\"`). \
         gateway-plain (:{}) is a second gateway without TLS, root over plain TCP as in a run \
         without `--tls`, interleaved in the same rounds; gw/plain is the median per-round ratio \
         of the TLS gateway's QPS to it.\n",
        files.ca.display(),
        files.cert.display(),
        tls::USER,
        rig.plain_gateway.as_ref().map_or(0, |g| g.gateway.port())
    )
}
