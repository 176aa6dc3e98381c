// SPDX-License-Identifier: GPL-2.0
//
// In-kernel aggregation for `sysmeter locks --backend bpf` (docs/bpf.md).
//
// Each waiting futex call of a target thread (WAIT, WAIT_BITSET, LOCK_PI, LOCK_PI2,
// WAIT_REQUEUE_PI, from sys_enter_futex to sys_exit_futex) is added to `waits`, keyed by its
// word, operation, user stack id, return value and waker (the last other thread that called
// a waking operation on the same word while it waited, with that thread's user stack): a
// count, a sum and a log2 histogram. No record per call leaves the kernel; user space reads
// the maps at the end and `counters` for the live line.
//
// Field offsets are not compiled in: user space reads them from tracefs and sets the `off_*`
// globals before loading (they move between kernels). Operation numbers are linux/futex.h's.
//
// Built by scripts/build-bpf.sh; the object next to this file is committed.

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define MAX_TARGETS 4096
#define MAX_THREADS 16384
#define MAX_WORDS 16384
#define MAX_KEYS 32768
#define MAX_STACKS 16384
// A snapshot (common.h) is taken at the first call of a (thread, user stack, word) and
// holds the top 2 KiB of the user stack, as the perf backend copies: a stripped library's
// waits (xz's liblzma) need more than 512 bytes to reach their caller. Where the stack holds
// less, the first 512 bytes are kept.
#define STACK_WORDS 256
#define SHORT_WORDS 64
#define MAX_SNAPSHOTS 4096
#define BUCKETS 40

// Counter slots, read by user space (crates/sysmeter/src/diagnose/locks/bpf.rs).
#define C_WAITS 0
#define C_USTACK_LOST 1
#define C_CALLS 2
#define C_KEYS_FULL 3
#define C_STARTS_FULL 4
#define C_WAKES 5
#define C_SNAPSHOT_FAILED 6
#define C_SLOTS 8

// Offsets of the tracepoint fields, from tracefs; set by the loader.
const volatile __u32 off_uaddr = 24;
const volatile __u32 off_op = 32;
const volatile __u32 off_uaddr2 = 56;
const volatile __u32 off_ret = 16;

// FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME: bits that do not change the operation.
#define FLAGS (128 | 256)

struct start {
	__u64 ts;
	__u64 uaddr;
	__u32 op;
	__s32 ustack;
};

#include "common.h"

struct wake_key {
	__u64 uaddr;
	__u32 pid;
	__u32 pad;
};

struct wake {
	__u64 ts;
	__u32 tid;
	__s32 ustack;
};

struct key {
	__u64 uaddr;
	__u32 pid;
	__u32 tid;
	__u32 op;
	__s32 ustack;
	__s32 ret;
	// The waker's thread (0: none seen while the call waited) and its user stack.
	__u32 waker_tid;
	__s32 waker_ustack;
	__u32 pad;
};

// A snapshot is kept per (thread, user stack id, word), not per stack id alone: glibc's
// futex leaves keep no frame pointer, so the kernel's walk skips their caller and two call
// sites (a condition variable's wait and a pthread_join, say) can share one stack id; the
// word tells them apart in the common case, and the thread tells apart two threads whose
// walks end alike (main and a worker both waiting in pthread_mutex_lock: with one copy per
// process, main's waits were charged to the worker's stack).
struct snap_key {
	__u64 uaddr;
	__u32 tid;
	__s32 ustack;
};

MAP(wakes, LRU_HASH, MAX_WORDS, struct wake_key, struct wake);

MAP(waits, HASH, MAX_KEYS, struct key, struct value);

MAP(snapshots, HASH, MAX_SNAPSHOTS, struct snap_key, struct snapshot);

static __always_inline void snapshot(__u32 tid, __s32 ustack, __u64 uaddr, __u64 now)
{
	struct snap_key sk = { .uaddr = uaddr, .tid = tid, .ustack = ustack };
	if (ustack < 0 || bpf_map_lookup_elem(&snapshots, &sk))
		return;
	struct snapshot *s = take_snapshot(now, SHORT_WORDS);
	if (s)
		bpf_map_update_elem(&snapshots, &sk, s, BPF_NOEXIST);
}

static __always_inline int is_wait(__u32 op)
{
	op &= ~FLAGS;
	return op == 0 || op == 6 || op == 9 || op == 11 || op == 13;
}

static __always_inline int is_wake(__u32 op)
{
	op &= ~FLAGS;
	return op == 1 || op == 3 || op == 4 || op == 5 || op == 7 || op == 10 || op == 12;
}

// Requeue and wake-op operations also wake (or move waiters to) the second word.
static __always_inline int touches_uaddr2(__u32 op)
{
	op &= ~FLAGS;
	return op == 3 || op == 4 || op == 5 || op == 12;
}

static __always_inline void woke(__u32 pid, __u64 uaddr, struct wake *w)
{
	struct wake_key wk = { .uaddr = uaddr, .pid = pid };
	bpf_map_update_elem(&wakes, &wk, w, BPF_ANY);
}

SEC("tracepoint/syscalls/sys_enter_futex")
int sys_enter_futex(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32, tid = (__u32)id;
	if (!bpf_map_lookup_elem(&targets, &pid))
		return KEEP_SAMPLE;
	count(C_CALLS);
	__u32 op = field_u32(ctx, off_op);
	if (!is_wait(op) && !is_wake(op))
		return KEEP_SAMPLE;
	__u64 now = bpf_ktime_get_ns();
	__u64 uaddr = field_u64(ctx, off_uaddr);
	__s32 ustack = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK);
	if (ustack < 0)
		count(C_USTACK_LOST);
	snapshot(tid, ustack, uaddr, now);
	if (is_wake(op)) {
		struct wake w = { .ts = now, .tid = tid, .ustack = ustack };
		count(C_WAKES);
		woke(pid, uaddr, &w);
		if (touches_uaddr2(op)) {
			__u64 uaddr2 = field_u64(ctx, off_uaddr2);
			woke(pid, uaddr2, &w);
			snapshot(tid, ustack, uaddr2, now);
		}
		return KEEP_SAMPLE;
	}
	struct start st = { .ts = now, .uaddr = uaddr, .op = op, .ustack = ustack };
	if (bpf_map_update_elem(&starts, &tid, &st, BPF_ANY))
		count(C_STARTS_FULL);
	return KEEP_SAMPLE;
}

SEC("tracepoint/syscalls/sys_exit_futex")
int sys_exit_futex(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32, tid = (__u32)id;
	struct start *st = bpf_map_lookup_elem(&starts, &tid);
	if (!st)
		return KEEP_SAMPLE;
	__u64 now = bpf_ktime_get_ns();
	struct key k = {
		.uaddr = st->uaddr,
		.pid = pid,
		.tid = tid,
		.op = st->op,
		.ustack = st->ustack,
		.ret = (__s32)field_u64(ctx, off_ret),
	};
	__u64 ns = now - st->ts;
	if (k.ret == 0) {
		struct wake_key wk = { .uaddr = st->uaddr, .pid = pid };
		struct wake *w = bpf_map_lookup_elem(&wakes, &wk);
		if (w && w->ts >= st->ts && w->tid != tid) {
			k.waker_tid = w->tid;
			k.waker_ustack = w->ustack;
		}
	}
	bpf_map_delete_elem(&starts, &tid);
	add_interval(&waits, &k, ns, C_WAITS, 0);
	return KEEP_SAMPLE;
}

#include "follow.h"
