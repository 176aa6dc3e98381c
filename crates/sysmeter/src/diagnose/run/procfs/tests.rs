use super::*;

#[test]
fn cpu_line_folds_nice_and_interrupts() {
    let text = "cpu  287937 10 51646 438007 6081 3 715 2457 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n";
    let c = parse_cpu_times(text).expect("cpu line");
    assert_eq!(c.user, 287_947);
    assert_eq!(c.system, 51_646 + 3 + 715);
    assert_eq!(c.idle, 438_007);
    assert_eq!(c.iowait, 6081);
    assert_eq!(c.steal, 2457);
    assert!(parse_cpu_times("intr 1 2 3\n").is_none());
}

#[test]
fn diskstats_take_sectors_and_busy_time() {
    let text = " 254       0 vda 397952 16947 21569666 422809 86043 145587 83908128 704354 0 93972 1160870 32394 55 17773928 28311 11781 5395\n   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0\nbad line\n";
    let d = parse_diskstats(text);
    assert_eq!(d.len(), 2);
    assert_eq!(d[0].name, "vda");
    assert_eq!(d[0].read_sectors, 21_569_666);
    assert_eq!(d[0].write_sectors, 83_908_128);
    assert_eq!(d[0].io_ticks_ms, 93_972);
}

#[test]
fn net_dev_takes_rx_and_tx_bytes() {
    let text = "Inter-|   Receive |  Transmit\n face |bytes    packets errs drop fifo frame compressed multicast|bytes\n    lo:    3193      29    0    0    0     0          0         0     3193      29    0    0    0     0       0          0\n  eth0: 282474666   10801    0    0    0     0          0         0   548687    6779    0    0    0     0       0          0\n";
    let n = parse_net_dev(text);
    assert_eq!(n.len(), 2);
    assert_eq!(n[1].name, "eth0");
    assert_eq!(n[1].rx_bytes, 282_474_666);
    assert_eq!(n[1].tx_bytes, 548_687);
}

#[test]
fn vmstat_reads_the_paging_counters() {
    let v =
        parse_vmstat("nr_free_pages 5\npswpin 3\npswpout 4\npgfault 73210225\npgmajfault 60459\n");
    assert_eq!(
        v,
        VmCounters {
            pgfault: 73_210_225,
            pgmajfault: 60_459,
            pswpin: 3,
            pswpout: 4
        }
    );
}

#[test]
fn stat_survives_a_name_with_spaces_and_parentheses() {
    let text =
        "4242 (my (odd) prog) S 1 4242 4242 0 -1 4194304 120 7 3 1 250 40 6 2 20 0 1 0 100 1000 50";
    let s = parse_pid_stat(text).expect("stat");
    assert_eq!(s.state, 'S');
    assert_eq!((s.minflt, s.cminflt, s.majflt, s.cmajflt), (120, 7, 3, 1));
    assert_eq!((s.utime, s.stime, s.cutime, s.cstime), (250, 40, 6, 2));
    assert!(parse_pid_stat("4242 (x) S 1").is_none());
}

#[test]
fn io_status_and_schedstat() {
    let io = parse_pid_io("rchar: 100\nwchar: 200\nsyscr: 3\nsyscw: 4\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 0\n")
        .expect("io");
    assert_eq!(
        (io.rchar, io.wchar, io.read_bytes, io.write_bytes),
        (100, 200, 4096, 8192)
    );
    assert!(parse_pid_io("").is_none());
    let st = parse_pid_status(
        "Name:\tx\nVmHWM:\t  1234 kB\nCpus_allowed_list:\t0-1\nvoluntary_ctxt_switches:\t5\nnonvoluntary_ctxt_switches:\t6\n",
    );
    assert_eq!(st.vm_hwm_kib, Some(1234));
    assert_eq!(st.voluntary, Some(5));
    assert_eq!(st.involuntary, Some(6));
    assert_eq!(st.cpus_allowed_list.as_deref(), Some("0-1"));
    assert_eq!(parse_schedstat("0 1244053 1\n"), Some((0, 1_244_053)));
    assert_eq!(parse_schedstat("x"), None);
}

#[test]
fn socket_inodes_from_net_tcp() {
    let text = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 41234 1 0000000000000000 100 0 0 10 0\n";
    assert_eq!(parse_socket_inodes(text), vec![41234]);
    assert!(parse_socket_inodes("header only\n").is_empty());
}
