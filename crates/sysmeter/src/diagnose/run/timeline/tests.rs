use std::time::Duration;

use super::*;
use crate::diagnose::run::procfs::{DiskCounters, NetCounters, VmCounters};

fn sys(
    t_ms: u64,
    cpu: [u64; 5],
    sectors: (u64, u64),
    busy_ms: u64,
    net: (u64, u64),
    vm: [u64; 4],
) -> SystemSample {
    SystemSample {
        t: Duration::from_millis(t_ms),
        cpu: Some(CpuTimes {
            user: cpu[0],
            system: cpu[1],
            iowait: cpu[2],
            idle: cpu[3],
            steal: cpu[4],
        }),
        disks: vec![DiskCounters {
            name: "vda".into(),
            read_sectors: sectors.0,
            write_sectors: sectors.1,
            io_ticks_ms: busy_ms,
        }],
        nets: vec![NetCounters {
            name: "eth0".into(),
            rx_bytes: net.0,
            tx_bytes: net.1,
        }],
        vm: Some(VmCounters {
            pgfault: vm[0],
            pgmajfault: vm[1],
            pswpin: vm[2],
            pswpout: vm[3],
        }),
        dentries: Some(crate::host::procfs::DentryState {
            total: 1000 + t_ms,
            unused: 400,
            negative: Some(50),
        }),
    }
}

#[test]
fn rates_over_one_interval() {
    let a = sys(0, [100, 50, 0, 50, 0], (0, 0), 1000, (0, 0), [10, 1, 0, 0]);
    let b = sys(
        500,
        [150, 60, 10, 80, 0],
        (2048, 1024),
        1250,
        (5000, 500),
        [110, 6, 2, 4],
    );
    let p = point(&a, &b, None, 100);
    assert_eq!(p.t_s, 0.5);
    let c = p.cpu.expect("cpu shares");
    assert!((c[0] - 50.0).abs() < 1e-9 && (c[1] - 10.0).abs() < 1e-9);
    assert!((c[2] - 10.0).abs() < 1e-9 && (c[3] - 30.0).abs() < 1e-9);
    assert_eq!(p.disk_rw, [2048.0 * 512.0 * 2.0, 1024.0 * 512.0 * 2.0]);
    assert!((p.disk_busy_pct - 50.0).abs() < 1e-9);
    assert_eq!(p.net_rx_tx, [10_000.0, 1000.0]);
    assert_eq!(p.paging, Some([200.0, 10.0, 4.0, 8.0]));
    assert_eq!(p.cmd_cpu_pct, None);
}

#[test]
fn command_cpu_counts_children_and_totals_name_the_busiest_devices() {
    let a = sys(0, [0, 0, 0, 100, 0], (0, 0), 0, (0, 0), [0; 4]);
    let b = sys(
        1000,
        [80, 20, 0, 100, 0],
        (0, 2000),
        300,
        (1000, 1000),
        [0, 0, 5, 5],
    );
    let pa = ProcessSample::default();
    let mut pb = ProcessSample {
        t: Duration::from_millis(1000),
        ..ProcessSample::default()
    };
    pb.stat.utime = 40;
    pb.stat.cstime = 10;
    let p = point(&a, &b, Some((&pa, &pb)), 100);
    assert_eq!(p.cmd_cpu_pct, Some(50.0), "clock ticks without schedstats");
    // With schedstats the per-thread ns count instead of the process's own ticks; a thread
    // first seen now counts from zero; reaped children still count by ticks (10 here).
    let thread = |ns| crate::diagnose::run::sample::ThreadSample {
        oncpu_ns: Some(ns),
        runqueue_ns: Some(0),
        ..Default::default()
    };
    let mut pa2 = pa.clone();
    pa2.threads.insert(1, thread(100_000_000));
    let mut pb2 = pb.clone();
    pb2.threads.insert(1, thread(300_000_000));
    pb2.threads.insert(2, thread(50_000_000));
    let q = point(&a, &b, Some((&pa2, &pb2)), 100);
    assert!((q.cmd_cpu_pct.expect("cpu") - 35.0).abs() < 1e-9);
    let t = totals(&a, &b);
    let disk = t.disk.expect("disk");
    assert_eq!(disk.name, "vda");
    assert_eq!(disk.busy_pct, Some(30.0));
    assert_eq!(disk.bytes_per_s, 2000.0 * 512.0);
    assert_eq!(t.net.expect("net").bytes_per_s, 2000.0);
    assert_eq!(t.swap_pages_per_s, 10.0);
    let series = to_series(&[p]);
    assert!(series.iter().any(|s| s.name == "command CPU %"));
    assert!(series.iter().all(|s| s.x_label == "seconds since start"));
    let busy = series
        .iter()
        .find(|s| s.name == "disk busy %")
        .expect("busy");
    assert_eq!(busy.points[0].summary.median, 30.0);
}

#[test]
fn the_dentry_cache_is_a_level_in_use_unused_and_negative() {
    let a = sys(0, [0; 5], (0, 0), 0, (0, 0), [0; 4]);
    let b = sys(1000, [0; 5], (0, 0), 0, (0, 0), [0; 4]);
    let p = point(&a, &b, None, 100);
    assert_eq!(p.dentries, Some([Some(1600.0), Some(400.0), Some(50.0)]));
    let series = to_series(&[p]);
    let level = |name: &str| {
        let s = series.iter().find(|s| s.name == name).expect(name);
        s.points[0].summary.median
    };
    assert_eq!(level("dentries in use"), 1600.0);
    assert_eq!(level("dentries unused"), 400.0);
    assert_eq!(level("negative dentries"), 50.0);
    let mut old = b.clone();
    old.dentries.as_mut().expect("d").negative = None;
    let q = point(&a, &old, None, 100);
    assert!(
        !to_series(&[q])
            .iter()
            .any(|s| s.name == "negative dentries")
    );
}
