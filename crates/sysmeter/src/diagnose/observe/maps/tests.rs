//! Tests of the address spaces: which mapping wins, exec and fork, the visible list the
//! unwinder builds its modules from, and `/proc/PID/maps` lines.

use super::*;

fn map(pid: u32, time: u64, start: u64, len: u64, pgoff: u64, path: &str) -> MapEvent {
    MapEvent {
        pid,
        time,
        start,
        len,
        pgoff,
        path: path.into(),
    }
}

/// The module of process `pid`'s address `a` at time `t`.
fn module_at(s: &AddressSpaces, pid: u32, t: u64, a: u64) -> Option<String> {
    s.lookup(pid, t, a)
        .map(|l| s.modules()[l.module as usize].clone())
}

#[test]
fn latest_covering_mapping_wins_and_offsets_include_pgoff() {
    let maps = [
        map(1, 10, 0x1000, 0x1000, 0x0, "/bin/a"),
        map(1, 20, 0x5000, 0x1000, 0x2000, "/lib/late.so"),
    ];
    let s = AddressSpaces::new(&maps, &[], &[]);
    let at = |t, a| {
        s.lookup(1, t, a)
            .map(|l| (s.modules()[l.module as usize].clone(), l.offset))
    };
    assert_eq!(at(15, 0x1010), Some(("/bin/a".into(), 0x10)));
    // The late library is unknown before it was mapped, known after.
    assert_eq!(at(15, 0x5010), None);
    assert_eq!(at(25, 0x5010), Some(("/lib/late.so".into(), 0x2010)));
    assert_eq!(at(25, 0x9000), None);
}

#[test]
fn exec_discards_older_mappings_but_not_for_older_samples() {
    let maps = [
        map(1, 10, 0x1000, 0x1000, 0, "/bin/sh"),
        map(1, 31, 0x1000, 0x1000, 0, "/bin/prog"),
        map(1, 5, 0x8000, 0x1000, 0, "/lib/old.so"),
    ];
    let execs = [ExecEvent { pid: 1, time: 30 }];
    let s = AddressSpaces::new(&maps, &execs, &[]);
    let module = |t, a| module_at(&s, 1, t, a);
    assert_eq!(module(20, 0x1000), Some("/bin/sh".into()));
    assert_eq!(module(40, 0x1000), Some("/bin/prog".into()));
    assert_eq!(
        module(40, 0x8000),
        None,
        "pre-exec library must not survive exec"
    );
    assert_ne!(s.epoch(1, 20), s.epoch(1, 40));
}

#[test]
fn forked_child_inherits_parent_mappings_until_it_execs() {
    let maps = [
        map(1, 0, 0x1000, 0x1000, 0, "/bin/parent"),
        map(1, 50, 0x2000, 0x1000, 0, "/lib/after-fork.so"),
        map(2, 70, 0x1000, 0x1000, 0, "/bin/child"),
    ];
    let forks = [ForkEvent {
        pid: 2,
        ppid: 1,
        time: 40,
    }];
    let execs = [ExecEvent { pid: 2, time: 60 }];
    let s = AddressSpaces::new(&maps, &execs, &forks);
    let module = |t, a| module_at(&s, 2, t, a);
    assert_eq!(module(45, 0x1000), Some("/bin/parent".into()));
    assert_eq!(
        module(55, 0x2000),
        None,
        "mapped by the parent after the fork"
    );
    assert_eq!(module(80, 0x1000), Some("/bin/child".into()));
    let starts = |t| s.visible(2, t).iter().map(|m| m.start).collect::<Vec<_>>();
    assert_eq!(starts(45), vec![0x1000], "the parent's, as at the fork");
    assert_eq!(
        starts(80),
        vec![0x1000],
        "only the child's own after its exec"
    );
    assert_eq!(
        s.visible(2, 80)[0].module,
        s.lookup(2, 80, 0x1000).unwrap().module
    );
}

#[test]
fn extending_keeps_module_indexes_and_newer_mappings_hide_older_ones() {
    let mut s = AddressSpaces::new(&[map(1, 10, 0x1000, 0x2000, 0, "/bin/a")], &[], &[]);
    assert!(s.knows(1) && !s.knows(2));
    s.extend(&[map(1, 20, 0x2000, 0x1000, 0, "/lib/b.so")], &[], &[]);
    assert_eq!(s.modules(), ["/bin/a".to_string(), "/lib/b.so".to_string()]);
    let list = s.visible(1, 30);
    assert_eq!(
        list.len(),
        1,
        "the newer mapping covers part of the older: {list:?}"
    );
    assert_eq!((list[0].start, list[0].module), (0x2000, 1));
    assert_eq!(s.visible(1, 15)[0].module, 0);
}

#[test]
fn proc_maps_lines_become_executable_mappings() {
    let text = "\
55d0c0000000-55d0c0001000 r--p 00000000 fe:01 123 /usr/bin/prog
55d0c0001000-55d0c0005000 r-xp 00001000 fe:01 123 /usr/bin/prog
7ffd1000-7ffd3000 r-xp 00000000 00:00 0 [vdso]
7f0000000000-7f0000001000 r-xp 00000000 00:00 0
7f0000002000-7f0000003000 r-xp 00002000 fe:01 9 /tmp/a b (deleted)
";
    let maps = parse_proc_maps(7, text);
    assert_eq!(maps.len(), 4);
    assert_eq!(maps[0].start, 0x55d0c0001000);
    assert_eq!(maps[0].len, 0x4000);
    assert_eq!(maps[0].pgoff, 0x1000);
    assert_eq!(maps[1].path, "[vdso]");
    assert_eq!(maps[2].path, "//anon");
    assert_eq!(maps[3].path, "/tmp/a b (deleted)");
}
