// What the BPF programs of this directory that follow tracepoints share (included by
// locks.bpf.c and offcpu.bpf.c after they have defined MAX_TARGETS, MAX_THREADS, MAX_STACKS,
// STACK_WORDS, BUCKETS, C_SLOTS, C_SNAPSHOT_FAILED, C_KEYS_FULL and `struct start`): what a
// tracepoint program returns (`KEEP_SAMPLE`: others' perf samples of it are kept); the
// aggregate of intervals (`struct value`); the user stack as stack.h keeps it (which
// alloc.bpf.c shares too); the target processes (`targets`, filled by user space and
// follow.h; `armed`, a launched command before its execve), the open interval per thread
// (`starts`), and the counters; the small helpers that read them and the tracepoint
// records, take a snapshot, and add an interval to an aggregate. scripts/build-bpf.sh
// compiles each program with this directory as its working directory, so the includes need
// no path.
#ifndef SYSMETER_BPF_COMMON_H
#define SYSMETER_BPF_COMMON_H

// What every tracepoint program of this directory returns. The kernel runs a program
// attached to a tracepoint through perf (perf_trace_run_bpf_submit, and perf_syscall_enter
// and _exit for the syscalls: events) before it writes that tracepoint's perf samples, and
// when the program returns 0 it writes none: for every perf event on the machine, not
// only ours (`perf stat -e syscalls:sys_enter_futex` counted 0 while `sysmeter locks` ran
// on another program; sysmeter's own perf backends went blind the same way). 1 lets the
// sample through; with nobody else listening the kernel stops at its empty list at once.
#define KEEP_SAMPLE 1

// The intervals of one key: how many, their sum and their log2 histogram.
struct value {
	__u64 count;
	__u64 sum_ns;
	__u64 hist[BUCKETS];
};

// A snapshot (stack.h) is taken at the first interval of one of a thread's user stacks.
#include "stack.h"

MAP(targets, HASH, MAX_TARGETS, __u32, __u8);

MAP(armed, HASH, 64, __u32, __u8);

// The interval each thread has open (a futex wait, a switch-out), by thread id.
MAP(starts, HASH, MAX_THREADS, __u32, struct start);

MAP(counters, ARRAY, C_SLOTS, __u32, __u64);

static const struct value zero_value;

static __always_inline void count(__u32 slot)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &slot);
	if (c)
		__sync_fetch_and_add(c, 1);
}

static __always_inline __u32 field_u32(void *ctx, __u32 off)
{
	__u32 v = 0;
	bpf_probe_read_kernel(&v, sizeof(v), (char *)ctx + off);
	return v;
}

static __always_inline __u64 field_u64(void *ctx, __u32 off)
{
	__u64 v = 0;
	bpf_probe_read_kernel(&v, sizeof(v), (char *)ctx + off);
	return v;
}

// floor(log2(v)) (0 for 0 and 1), at most BUCKETS - 1: a binary search in six steps, not a
// loop of BUCKETS - 1 (which every interval ran in full, the bulk of trace's exit program).
static __always_inline __u32 log2_bucket(__u64 v)
{
	__u32 b = 0, s;
	s = (v > 0xffffffffULL) << 5; v >>= s; b |= s;
	s = (v > 0xffff) << 4; v >>= s; b |= s;
	s = (v > 0xff) << 3; v >>= s; b |= s;
	s = (v > 0xf) << 2; v >>= s; b |= s;
	s = (v > 0x3) << 1; v >>= s; b |= s;
	b |= (__u32)(v >> 1);
	return b < BUCKETS - 1 ? b : BUCKETS - 1;
}

// The current thread's user registers and the top of its user stack at `now`, in the
// per-CPU scratch snapshot; where the whole does not read, the first `short_words` words
// (0: no second try). NULL when nothing could be read (counted in C_SNAPSHOT_FAILED).
static __always_inline struct snapshot *take_snapshot(__u64 now, __u32 short_words)
{
	struct snapshot *s = scratch_snapshot();
	if (!s)
		return 0;
	struct task_struct *task = bpf_get_current_task_btf();
	char *regs = (char *)bpf_task_pt_regs(task);
	s->ts = now;
	if (bpf_probe_read_kernel(&s->sp, 8, regs + R_SP) ||
	    bpf_probe_read_kernel(&s->bp, 8, regs + R_BP) ||
	    copy_stack_top(s, short_words)) {
		count(C_SNAPSHOT_FAILED);
		return 0;
	}
	return s;
}

// Adds an interval of `ns` to key `k` of the hash map `map` of `struct value` (its count,
// sum and log2 histogram) and counts it in `slot`; a full map is counted in C_KEYS_FULL.
// `owned`: the key holds the current thread (trace's), so no other CPU adds to its value at
// the same time and plain adds do; a key threads share (a lock, a stack) takes locked adds.
static __always_inline void add_interval(void *map, void *k, __u64 ns, __u32 slot, int owned)
{
	struct value *v = bpf_map_lookup_elem(map, k);
	if (!v) {
		if (bpf_map_update_elem(map, k, &zero_value, BPF_NOEXIST) == -7 /* E2BIG */) {
			count(C_KEYS_FULL);
			return;
		}
		v = bpf_map_lookup_elem(map, k);
		if (!v) {
			count(C_KEYS_FULL);
			return;
		}
	}
	__u32 b = log2_bucket(ns);
	if (owned) {
		v->count += 1;
		v->sum_ns += ns;
		if (b < BUCKETS)
			v->hist[b] += 1;
	} else {
		__sync_fetch_and_add(&v->count, 1);
		__sync_fetch_and_add(&v->sum_ns, ns);
		if (b < BUCKETS)
			__sync_fetch_and_add(&v->hist[b], 1);
	}
	count(slot);
}

#endif
