//! The net group against a real second host: a network namespace joined to this one by a
//! veth pair with addresses the test picks, `sysmeter serve` started inside it, and
//! `bench net --remote` run from here. Needs root and `ip` (iproute2); anywhere else it
//! says `skipped: <reason>` (capabilities `root`, `ip`, `netns`, and `rawsock` for the ICMP
//! part). Everything it creates is removed on drop, also on panic (`support::netns`).

use std::process::Command;

use serde_json::Value;

use crate::support::needs::root;
use crate::support::netns::Netns;
use crate::support::serve::{Serve, check_net_results};
use crate::support::skip::{Cap, Missing};
use crate::support::{bench_json, need, skip};

#[test]
fn net_group_against_serve_in_a_network_namespace() {
    need!(root("create a network namespace"));
    if let Err(e) = Command::new("ip").arg("-V").output() {
        skip!(Ip, "`ip` (iproute2) is not runnable: {e}");
    }
    // Unique per run: the pid picks the names and a /30 inside 10.213.0.0/16.
    let pid = std::process::id();
    let (x, y) = ((pid / 64) % 250 + 1, (pid % 64) * 4);
    let (host_ip, ns_ip) = (
        format!("10.213.{x}.{}", y + 1),
        format!("10.213.{x}.{}", y + 2),
    );
    let name = format!("sysmeter-test-{pid}");
    let (veth, peer) = (format!("smh{pid}"), format!("smn{pid}"));
    let ns = Netns::create(&name, &veth, &peer, &host_ip, &ns_ip);
    let ns = need!(ns.map_err(|e| {
        Missing::new(Cap::Netns, format!("cannot build the namespace here: {e}"))
    }));
    // Not loopback: the server needs a token (or an explicit --no-token).
    let server = Serve::start_with(
        &["ip", "netns", "exec", &name],
        &["--bind", &format!("{ns_ip}:0"), "--token", "netns-t0ken"],
    );
    let addr = server.addr.to_string();
    let run = bench_json(&["net", "--remote", &addr, "--token", "netns-t0ken"]);
    check_net_results(&run);
    check_icmp(&run);
    let setup = run["results"]
        .as_array()
        .and_then(|r| r.iter().find(|x| x["id"] == "net.connect"))
        .and_then(|r| r["metrics"][0]["summary"]["median"].as_f64())
        .expect("setup");
    assert!(setup < 100e6, "connection setup {setup} ns");
    drop(server);
    drop(ns);
}

/// As root the ICMP echo runs too (raw socket), unless raw sockets are denied (a container
/// without CAP_NET_RAW): then a finding must say why.
fn check_icmp(run: &Value) {
    let rtt = run["results"]
        .as_array()
        .and_then(|r| r.iter().find(|x| x["id"] == "net.rtt"))
        .expect("net.rtt");
    let icmp = rtt["metrics"]
        .as_array()
        .and_then(|m| m.iter().find(|x| x["name"] == "ICMP echo round trip"));
    match icmp {
        Some(m) => assert!(
            m["summary"]["median"].as_f64().is_some_and(|v| v > 0.0),
            "{m}"
        ),
        None => {
            let why = rtt["findings"]
                .as_array()
                .and_then(|f| f.iter().find(|x| x["key"] == "icmp_skipped"))
                .unwrap_or_else(|| panic!("no ICMP figure and no reason: {rtt}"));
            let why = why["text"].as_str().unwrap_or("no reason given");
            Missing::new(Cap::Rawsock, why).skip_part("ICMP echo");
        }
    }
}
