// SPDX-License-Identifier: GPL-2.0
//
// In-kernel aggregation for `sysmeter trace --backend bpf` (docs/bpf.md, docs/trace.md).
//
// Every system call of a target thread, from the raw tracepoint sys_enter to sys_exit (the
// ones under raw_syscalls' perf tracepoints), is added to `calls`, keyed by (process,
// thread, call number): a count, a sum of durations and a log2 histogram (common.h's `struct value`). A failed call (return value -4095..-1) is also
// counted in `errors` by (process, thread, call number, errno). No record per call leaves
// the kernel, so nothing can be lost to a full ring: only a full map loses calls, and that
// is counted (C_KEYS_FULL, C_ERRORS_FULL, C_STARTS_FULL) for the report's first line.
// User space reads `counters` at every drain (the live count) and the maps once at the end;
// a call still open then (a `starts` entry whose time is not 0: exit, exit_group, or cut
// short) is reported apart.
//
// The fork and exec tracepoints' field offsets (follow.h) are not compiled in: user space
// reads them from tracefs and sets the `off_*` globals before loading. Built by
// scripts/build-bpf.sh; the object next to this file is committed.

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define MAX_TARGETS 4096
#define MAX_THREADS 16384
#define MAX_KEYS 65536
#define MAX_ERRORS 16384
// trace keeps no stacks: common.h's stack map and scratch snapshot are made as small as
// they can be.
#define MAX_STACKS 1
#define STACK_WORDS 1
#define BUCKETS 40

// Counter slots, read by user space (crates/sysmeter/src/diagnose/trace/kernel/maps.rs).
#define C_CALLS 0
#define C_KEYS_FULL 1
#define C_STARTS_FULL 2
#define C_ERRORS_FULL 3
#define C_SNAPSHOT_FAILED 4
#define C_SLOTS 8

// The call a thread is in: when it entered (0: in none), which, and the thread's process.
struct start {
	__u64 ts;
	__u64 nr;
	__u32 pid;
	__u32 pad;
};

#include "common.h"

struct key {
	__u32 pid;
	__u32 tid;
	__u64 nr;
};

struct error_key {
	__u32 pid;
	__u32 tid;
	__u32 nr;
	__s32 errno;
};

MAP(calls, HASH, MAX_KEYS, struct key, struct value);

MAP(errors, HASH, MAX_ERRORS, struct error_key, __u64);

// Raw tracepoints: the kernel hands the program the call's arguments as they are, without
// building the tracepoint's record first (what a perf-attached tracepoint program costs
// more), and perf's own readers of raw_syscalls are not touched by them at all.
SEC("raw_tp/sys_enter")
int sys_enter(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32, tid = (__u32)id;
	if (!bpf_map_lookup_elem(&targets, &pid))
		return 0;
	// A thread's entry is made at its first call and kept: each call then only writes it
	// (an insert and a delete per call cost more than the rest of the program).
	struct start *open = bpf_map_lookup_elem(&starts, &tid);
	if (!open) {
		struct start fresh = { .pid = pid };
		if (bpf_map_update_elem(&starts, &tid, &fresh, BPF_NOEXIST)) {
			count(C_STARTS_FULL);
			return 0;
		}
		open = bpf_map_lookup_elem(&starts, &tid);
		if (!open)
			return 0;
	}
	// sys_enter(struct pt_regs *regs, long id)
	open->nr = ctx->args[1];
	// The clock is read last, so that the program's own work falls outside the interval.
	open->ts = bpf_ktime_get_ns();
	return 0;
}

static __always_inline void count_error(struct key *k, __s64 ret)
{
	struct error_key ek = { .pid = k->pid, .tid = k->tid, .nr = (__u32)k->nr,
				.errno = (__s32)-ret };
	__u64 *n = bpf_map_lookup_elem(&errors, &ek);
	if (n) {
		__sync_fetch_and_add(n, 1);
		return;
	}
	// The key holds the thread: no other CPU inserts it at the same time, so a failed
	// insert is a full map.
	__u64 one = 1;
	if (bpf_map_update_elem(&errors, &ek, &one, BPF_NOEXIST))
		count(C_ERRORS_FULL);
}

SEC("raw_tp/sys_exit")
int sys_exit(struct bpf_raw_tracepoint_args *ctx)
{
	// The clock is read first, before the program's own work.
	__u64 now = bpf_ktime_get_ns();
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32, tid = (__u32)id;
	struct start *st = bpf_map_lookup_elem(&starts, &tid);
	if (!st || !st->ts)
		return 0;
	struct key k = { .pid = pid, .tid = tid, .nr = st->nr };
	__u64 ns = now > st->ts ? now - st->ts : 0;
	// Closed: ts 0 is "in no call" (an entry left open at the end never returned).
	st->ts = 0;
	// sys_exit(struct pt_regs *regs, long ret)
	__s64 ret = (__s64)ctx->args[1];
	if (ret >= -4095 && ret <= -1)
		count_error(&k, ret);
	add_interval(&calls, &k, ns, C_CALLS, 1);
	return 0;
}

#include "follow.h"
