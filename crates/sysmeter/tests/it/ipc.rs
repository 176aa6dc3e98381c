//! Integration tests of the ipc group on loopback (`bench ipc --quick`): every transport
//! reports round trips, bandwidth and (TCP) connection cost with sane units and values, the
//! comparison findings appear, and the net group without --remote is skipped with a hint.

use serde_json::Value;

use crate::support::skip::{Cap, Missing};
use crate::support::{BENCH_JSON, bench_json, finding_keys as keys, json_out_code, median};
use crate::support::{error_of, not_a_result, result, sysmeter};

fn unit(r: &Value, name: &str) -> Option<String> {
    r["metrics"]
        .as_array()?
        .iter()
        .find(|m| m["name"] == name)
        .and_then(|m| m["unit"].as_str().map(str::to_string))
}

/// Whether a 1-byte round trip of `places` is marked not a result: no finding quotes it.
fn unquotable(r: &Value, places: &[&str]) -> bool {
    (places.iter()).any(|p| not_a_result(r, &format!("round trip 1 B, {p} CPU")))
}

#[test]
fn bench_ipc_quick_measures_every_transport() {
    let run = bench_json(&["ipc"]);
    let two_cpus = run["results"][0]["metrics"]
        .as_array()
        .is_some_and(|m| m.iter().any(|x| x["name"] == "round trip 1 B, cross CPU"));
    if !two_cpus {
        Missing::new(Cap::Cpus2, "this process may use only one CPU")
            .skip_part("cross-CPU round trips");
    }
    let places: &[&str] = if two_cpus {
        &["same", "cross"]
    } else {
        &["same"]
    };
    for id in ["ipc.pipe", "ipc.unix", "ipc.tcp", "ipc.udp"] {
        let r = result(&run, id);
        assert_eq!(r["status"], "ok", "{r}");
        for size in ["1 B", "1 KiB"] {
            for place in places {
                let name = format!("round trip {size}, {place} CPU");
                let m = median(r, &name).unwrap_or_else(|| panic!("{id}: {name} missing"));
                // Two system calls and a wake-up each way: above 100 ns, below 100 ms.
                assert!(m > 100.0 && m < 1e8, "{id} {name} = {m} ns");
                assert_eq!(unit(r, &name).as_deref(), Some("ns"));
            }
        }
        for place in places {
            let name = format!("bandwidth, reader {place} CPU");
            let bw = median(r, &name).unwrap_or_else(|| panic!("{id}: {name} missing"));
            assert_eq!(unit(r, &name).as_deref(), Some("bytes_per_sec"));
            assert!(bw > 1e6 && bw < 1e12, "{id} {name} {bw} B/s");
        }
        let k = keys(r);
        assert!(
            k.contains(&"cross_vs_same_cpu".to_string())
                || k.contains(&"cross_cpu_skipped".to_string())
                || unquotable(r, places),
            "{id}: {k:?}"
        );
        assert!(
            r["about"]["methodology"]
                .as_str()
                .is_some_and(|m| m.len() > 200)
        );
    }
    let tcp = result(&run, "ipc.tcp");
    for name in ["connect+accept", "close seen by peer"] {
        let m = median(tcp, name).unwrap_or_else(|| panic!("{name} missing"));
        assert!(m > 100.0 && m < 1e8, "{name} = {m} ns");
    }
    assert!(keys(result(&run, "ipc.unix")).contains(&"pipe_vs_socket".to_string()));
    let k = keys(tcp);
    assert!(
        k.contains(&"unix_vs_tcp".to_string()) && k.contains(&"connect_vs_round_trip".to_string()),
        "{k:?}"
    );
    assert!(keys(result(&run, "ipc.udp")).contains(&"udp_vs_tcp".to_string()));
}

#[test]
fn net_group_without_remote_is_skipped_with_a_hint() {
    let run = bench_json(&["net"]);
    for id in ["net.rtt", "net.bandwidth", "net.connect", "net.udp_rr"] {
        let r = result(&run, id);
        assert_eq!(r["status"], "skipped", "{r}");
        let hint = r["skip"]["hint"].as_str().unwrap_or("");
        assert!(
            hint.contains("sysmeter serve") && hint.contains("--remote"),
            "{hint}"
        );
    }
}

#[test]
fn an_unreachable_remote_fails_with_a_clear_message() {
    // Port 1 on loopback: nothing listens there, so connect is refused at once.
    let mut bench = sysmeter();
    bench.args(BENCH_JSON);
    let run = json_out_code(
        bench.args(["--only", "net.rtt", "--remote", "127.0.0.1:1"]),
        1,
    );
    let e = error_of(result(&run, "net.rtt"));
    assert!(
        e.contains("127.0.0.1:1") && e.contains("sysmeter serve"),
        "{e}"
    );
}

#[test]
fn the_pipe_round_trip_is_checked_against_os_ctxsw() {
    let run = bench_json(&["--only", "os.ctxsw,ipc.pipe"]);
    let k = keys(result(&run, "ipc.pipe"));
    assert!(k.contains(&"pipe_vs_ctxsw".to_string()), "{k:?}");
}
