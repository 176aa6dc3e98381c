use super::*;

/// A single-threaded command on a 2-CPU machine with the given time split.
fn times(real: f64, user: f64, system: f64) -> Evidence {
    Evidence {
        real_s: real,
        user_s: user,
        system_s: system,
        cpus: 2,
        ..Evidence::default()
    }
}

#[test]
fn a_spin_is_cpu_bound_and_points_to_profile() {
    let v = classify(&times(2.0, 1.97, 0.01));
    assert_eq!(v.class, Class::Cpu);
    assert_eq!(v.label, "CPU-bound");
    assert!(v.next.contains("sysmeter profile"), "{}", v.next);
    assert!(v.remedies.contains("algorithm"));
    assert!(v.reason.contains("real 2.00 s"), "{}", v.reason);
    assert!(
        v.reason.contains("0.990 CPUs busy of 2 usable"),
        "{}",
        v.reason
    );
    assert!((v.demand - 0.99).abs() < 1e-9);
}

#[test]
fn more_system_than_user_time_is_kernel_bound_and_points_to_trace() {
    let v = classify(&times(0.2, 0.05, 0.14));
    assert_eq!(v.class, Class::Kernel);
    assert!(v.next.contains("sysmeter trace"));
    assert!(v.remedies.contains("fewer system calls"));
}

#[test]
fn equal_user_and_system_time_is_cpu_bound_strictly_more_system_is_kernel() {
    assert_eq!(classify(&times(1.0, 0.5, 0.5)).class, Class::Cpu);
    assert_eq!(classify(&times(1.0, 0.5, 0.500_001)).class, Class::Kernel);
}

#[test]
fn several_busy_threads_are_cpu_bound() {
    let v = classify(&times(1.0, 1.9, 0.05));
    assert_eq!(v.class, Class::Cpu);
    assert!(v.reason.contains("1.95 CPUs busy of 2"), "{}", v.reason);
}

#[test]
fn waiting_for_a_cpu_counts_as_demand() {
    // Half the time on a CPU, half in the run queue: a spin on a loaded machine.
    let mut e = times(1.0, 0.5, 0.0);
    assert!(matches!(classify(&e).class, Class::Mixed { .. }));
    e.runqueue_s = Some(0.45);
    let v = classify(&e);
    assert_eq!(v.class, Class::Cpu);
    assert!(v.reason.contains("waited 450 ms for a CPU"), "{}", v.reason);
    assert!(
        v.reason.contains("off a CPU for 45% of the run"),
        "{}",
        v.reason
    );
    // Below the contention share there is no warning.
    e.runqueue_s = Some(0.19);
    e.user_s = 0.7;
    assert!(!classify(&e).reason.contains("Other load"));
}

#[test]
fn demand_boundaries() {
    // Exactly 0.8 computes; just below is mixed.
    assert_eq!(classify(&times(1.0, 0.8, 0.0)).class, Class::Cpu);
    assert!(matches!(
        classify(&times(1.0, 0.79, 0.0)).class,
        Class::Mixed {
            compute: Compute::User,
            wait: Wait::Other
        }
    ));
    // Exactly 1/3 is mixed; just below is I/O-bound.
    assert!(matches!(
        classify(&times(3.0, 1.0, 0.0)).class,
        Class::Mixed { .. }
    ));
    assert_eq!(
        classify(&times(3.0, 0.99, 0.0)).class,
        Class::Io(Wait::Other)
    );
}

#[test]
fn a_sleep_is_waiting_and_says_on_what() {
    let mut e = times(0.5, 0.001, 0.001);
    e.voluntary_switches = 1;
    e.idle_pct = Some(93.0);
    let v = classify(&e);
    assert_eq!(v.class, Class::Io(Wait::Other));
    assert_eq!(v.label, "I/O-bound (waiting)");
    assert!(
        v.reason.contains("1 voluntary context switches"),
        "{}",
        v.reason
    );
    assert!(v.reason.contains("93% idle"), "{}", v.reason);
    assert!(v.next.contains("sysmeter trace"));
}

#[test]
fn paging_wins_over_disk() {
    let mut e = times(2.0, 0.1, 0.1);
    e.major_faults = 20; // exactly 10 per second
    e.disk_wait_share = Some(0.9);
    let v = classify(&e);
    assert_eq!(v.class, Class::Io(Wait::Paging));
    assert!(v.reason.contains("20 major faults"), "{}", v.reason);
    e.major_faults = 19;
    assert_eq!(classify(&e).class, Class::Io(Wait::Disk));
    e.major_faults = 1;
    e.swap_pages_per_s = 10.0;
    assert_eq!(classify(&e).class, Class::Io(Wait::Paging));
    e.major_faults = 0;
    assert_eq!(classify(&e).class, Class::Io(Wait::Disk));
}

#[test]
fn disk_needs_disk_wait_or_own_io_on_a_busy_disk() {
    let mut e = times(2.0, 0.05, 0.1);
    e.disk = Some(DeviceLoad {
        name: "vda".into(),
        busy_pct: Some(20.0),
        bytes_per_s: 50e6,
    });
    e.storage_bytes = Some((1 << 20) - 1);
    assert_eq!(classify(&e).class, Class::Io(Wait::Other));
    e.storage_bytes = Some(1 << 20);
    let v = classify(&e);
    assert_eq!(v.class, Class::Io(Wait::Disk));
    assert_eq!(v.label, "I/O-bound (disk vda)");
    assert!(v.next.contains("iostat -x vda 1"), "{}", v.next);
    assert!(v.reason.contains("vda busy 20%"), "{}", v.reason);
    assert!(v.remedies.contains("faster device"));
    if let Some(d) = e.disk.as_mut() {
        d.busy_pct = Some(19.9);
    }
    assert_eq!(classify(&e).class, Class::Io(Wait::Other));
    e.disk_wait_share = Some(0.25);
    assert_eq!(classify(&e).class, Class::Io(Wait::Disk));
    e.disk_wait_share = Some(0.24);
    assert_eq!(classify(&e).class, Class::Io(Wait::Other));
}

#[test]
fn sockets_make_it_network_and_name_the_interface() {
    let mut e = times(1.0, 0.01, 0.02);
    e.sockets = 1;
    e.net = Some(DeviceLoad {
        name: "eth0".into(),
        busy_pct: None,
        bytes_per_s: 1.2e6,
    });
    let v = classify(&e);
    assert_eq!(v.class, Class::Io(Wait::Network));
    assert_eq!(v.label, "I/O-bound (network eth0)");
    assert!(v.reason.contains("1 socket(s)"), "{}", v.reason);
    assert!(v.next.contains("eth0"));
}

#[test]
fn mixed_names_both_parts_and_both_next_commands() {
    let mut e = times(1.0, 0.1, 0.4);
    e.sockets = 2;
    let v = classify(&e);
    assert_eq!(
        v.class,
        Class::Mixed {
            compute: Compute::Kernel,
            wait: Wait::Network
        }
    );
    assert!(v.label.starts_with("mixed (kernel CPU"), "{}", v.label);
    assert!(v.next.contains("sysmeter trace --"), "{}", v.next);
    assert!(v.next.contains("-e network"), "{}", v.next);
    assert!((v.wait_share - 0.5).abs() < 1e-9);
}

#[test]
fn zero_real_time_does_not_divide_by_zero() {
    let v = classify(&times(0.0, 0.0, 0.0));
    assert!(v.demand.is_finite());
    assert_eq!(v.class, Class::Io(Wait::Other));
}

#[test]
fn next_commands_name_the_target() {
    let mut e = times(1.0, 0.9, 0.0);
    assert!(classify(&e).next.contains("`sysmeter profile -- CMD`"));
    e.target = "-p 42".into();
    assert!(classify(&e).next.contains("`sysmeter profile -p 42`"));
    e.target = "-- make -j2".into();
    e.system_s = 0.95;
    assert!(classify(&e).next.contains("`sysmeter trace -- make -j2`"));
}

#[test]
fn mixed_with_more_run_queue_wait_than_cpu_is_contention() {
    // The O_DIRECT dd seen on a loaded machine: little CPU, long waits for one, disk waits.
    let mut e = times(1.44, 0.0099, 0.104);
    e.runqueue_s = Some(0.49);
    e.disk_wait_share = Some(0.71);
    let v = classify(&e);
    assert_eq!(
        v.class,
        Class::Mixed {
            compute: Compute::Contention,
            wait: Wait::Disk
        }
    );
    assert!(
        v.label
            .starts_with("mixed (waiting for a CPU and waiting on disk"),
        "{}",
        v.label
    );
    assert!(v.remedies.contains("more CPUs"), "{}", v.remedies);
}

#[test]
fn waiting_points_to_the_off_cpu_profile_with_the_exact_command() {
    let mut e = times(1.0, 0.01, 0.01);
    e.target = "-- ./server --once".into();
    let v = classify(&e);
    assert_eq!(v.class, Class::Io(Wait::Other));
    assert!(
        v.next
            .starts_with("`sysmeter profile --off-cpu -- ./server --once`"),
        "{}",
        v.next
    );
    assert!(!v.next.contains("sysmeter locks"), "{}", v.next);
    // Mixed: the compute part's command first, then the off-CPU profile.
    let mut e = times(1.0, 0.5, 0.0);
    e.target = "-p 42".into();
    let v = classify(&e);
    assert!(matches!(v.class, Class::Mixed { .. }), "{:?}", v.class);
    assert!(
        v.next.contains("`sysmeter profile --off-cpu -p 42`"),
        "{}",
        v.next
    );
    // CPU-bound: no off-CPU profile.
    assert!(!classify(&times(1.0, 0.95, 0.0)).next.contains("--off-cpu"));
}

#[test]
fn futex_waits_dominating_point_to_locks_first() {
    let mut e = times(1.0, 0.01, 0.01);
    e.futex_wait_share = Some(0.8);
    assert!(futex_dominated(&e));
    let v = classify(&e);
    assert!(v.next.starts_with("`sysmeter locks -- CMD`"), "{}", v.next);
    assert!(
        v.next.contains("`sysmeter profile --off-cpu -- CMD`"),
        "{}",
        v.next
    );
    e.futex_wait_share = Some(FUTEX_WAIT_SHARE - 0.01);
    assert!(!futex_dominated(&e));
    assert!(classify(&e).next.starts_with("`sysmeter profile --off-cpu"));
    e.futex_wait_share = None;
    assert!(!futex_dominated(&e));
}
