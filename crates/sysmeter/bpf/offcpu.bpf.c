// SPDX-License-Identifier: GPL-2.0
//
// In-kernel aggregation for `sysmeter profile --off-cpu --backend bpf` (docs/bpf.md).
//
// Each blocked interval of a target thread (switch-out to next switch-in) is added to
// `blocked`, keyed by the thread, its user and kernel stack ids, its state at switch-out and
// the last thread that woke it (with that waker's stacks): a count, a sum and a log2
// histogram. No record per switch leaves the kernel; user space reads the maps at the end
// and reads `counters` for the live line.
//
// Tracepoint field offsets are not compiled in: user space reads them from tracefs and sets
// the `off_*` globals before loading, because they move between kernels (sched_process_fork's
// comms became __data_loc strings in 6.x).
//
// Built by scripts/build-bpf.sh; the object next to this file is committed.

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define MAX_TARGETS 4096
#define MAX_THREADS 16384
#define MAX_KEYS 32768
#define MAX_STACKS 16384
// A snapshot (common.h) is taken at the first switch-out of a (thread, user stack) and at
// a target's waking, and holds the top 512 bytes of the user stack.
#define STACK_WORDS 64
#define BUCKETS 40

// Counter slots, read by user space (crates/sysmeter/src/diagnose/profile/offcpu/bpf.rs).
#define C_INTERVALS 0
#define C_USTACK_LOST 1
#define C_KSTACK_LOST 2
#define C_KEYS_FULL 3
#define C_STARTS_FULL 4
#define C_WAKINGS 5
#define C_SNAPSHOT_FAILED 6
// Switches the kernel did not report (seen under heavy load, by bpftrace too): a second
// switch-out with no switch-in between, closed at its waking when one was seen after it
// (C_CLOSED_AT_WAKING) or else lost (C_IN_MISSED); a second switch-in with no switch-out
// between (C_OUT_MISSED, an interval lost). Both read `on_cpu` of the thread's `starts`
// entry, which every switch looks up anyway.
#define C_CLOSED_AT_WAKING 7
#define C_IN_MISSED 8
#define C_OUT_MISSED 9
#define C_SLOTS 10

// Offsets of the tracepoint fields, from tracefs; set by the loader.
const volatile __u32 off_prev_pid = 24;
const volatile __u32 off_prev_state = 32;
const volatile __u32 off_next_pid = 56;
const volatile __u32 off_waking_pid = 24;

struct start {
	__u64 ts;
	__u64 state;
	__s32 ustack;
	__s32 kstack;
	// The process of the thread (the switch-in runs as another task, so it is kept here).
	__u32 pid;
	// 1 from the thread's switch-in to its next switch-out: the entry stays, so that a
	// switch the kernel did not report shows without a second lookup on every switch.
	__u32 on_cpu;
};

#include "common.h"

struct waker {
	__u32 pid;
	__u32 tid;
	__s32 ustack;
	__s32 kstack;
	__u64 ts;
};

struct key {
	__u32 pid;
	__u32 tid;
	__s32 ustack;
	__s32 kstack;
	__u64 state;
	// The waker; `seen` is 0 when no waking of this thread happened while it was off.
	__u32 seen;
	__u32 waker_pid;
	__u32 waker_tid;
	__s32 waker_ustack;
	__s32 waker_kstack;
	__u32 pad;
};

struct span {
	__u64 first;
	__u64 last;
	__u32 pid;
	__u32 pad;
};

// Per thread, as in locks.bpf.c: two threads whose frame-pointer walks end alike in a
// frameless leaf share a stack id, not a copy of their stack.
struct snap_key {
	__u32 tid;
	__s32 ustack;
};

MAP(wakers, HASH, MAX_THREADS, __u32, struct waker);

MAP(blocked, HASH, MAX_KEYS, struct key, struct value);

MAP(spans, HASH, MAX_THREADS, __u32, struct span);

MAP(snapshots, HASH, MAX_THREADS, struct snap_key, struct snapshot);

MAP(comms, HASH, MAX_TARGETS, __u32, char[16]);

static __always_inline void see(__u32 tid, __u32 pid, __u64 now)
{
	struct span *s = bpf_map_lookup_elem(&spans, &tid);
	if (s) {
		s->last = now;
		return;
	}
	struct span fresh = { .first = now, .last = now, .pid = pid };
	bpf_map_update_elem(&spans, &tid, &fresh, BPF_NOEXIST);
}

static __always_inline void snapshot(__u32 tid, __s32 ustack, __u64 now)
{
	struct snap_key sk = { .tid = tid, .ustack = ustack };
	if (ustack < 0 || bpf_map_lookup_elem(&snapshots, &sk))
		return;
	struct snapshot *s = take_snapshot(now, 0);
	if (s)
		bpf_map_update_elem(&snapshots, &sk, s, BPF_NOEXIST);
}

static __always_inline void add(struct key *k, __u64 ns)
{
	add_interval(&blocked, k, ns, C_INTERVALS, 0);
}

// The key of an interval begun at `st`, with the waker `w` when there is one.
static __always_inline void key_of(struct key *k, __u32 tid, struct start *st, struct waker *w)
{
	k->pid = st->pid;
	k->tid = tid;
	k->ustack = st->ustack;
	k->kstack = st->kstack;
	k->state = st->state;
	if (w) {
		k->seen = 1;
		k->waker_pid = w->pid;
		k->waker_tid = w->tid;
		k->waker_ustack = w->ustack;
		k->waker_kstack = w->kstack;
	}
}

// A switch-out while the last one is still open: the switch-in between was not reported.
// The thread was off the CPU at least until its waking, so the interval ends there when a
// waking after it was seen (its wait for a CPU after the waking is unknown).
static __always_inline void close_missed(__u32 tid, struct start *old)
{
	struct waker *w = bpf_map_lookup_elem(&wakers, &tid);
	if (!w || w->ts < old->ts) {
		count(C_IN_MISSED);
		return;
	}
	struct key k = {};
	key_of(&k, tid, old, w);
	add(&k, w->ts - old->ts);
	count(C_CLOSED_AT_WAKING);
}

static __always_inline void switch_out(void *ctx, __u64 now)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32, tid = (__u32)id;
	if (!bpf_map_lookup_elem(&targets, &pid))
		return;
	struct start st = { .ts = now, .state = field_u64(ctx, off_prev_state), .pid = pid };
	st.ustack = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK);
	st.kstack = bpf_get_stackid(ctx, &stacks, 0);
	if (st.ustack < 0 && st.ustack != -14 /* EFAULT: no user stack */)
		count(C_USTACK_LOST);
	if (st.kstack < 0)
		count(C_KSTACK_LOST);
	struct start *old = bpf_map_lookup_elem(&starts, &tid);
	if (old && !old->on_cpu)
		close_missed(tid, old);
	if (bpf_map_update_elem(&starts, &tid, &st, BPF_ANY))
		count(C_STARTS_FULL);
	bpf_map_delete_elem(&wakers, &tid);
	see(tid, pid, now);
	snapshot(tid, st.ustack, now);
}

static __always_inline void switch_in(__u32 tid, __u64 now)
{
	// No entry: not a thread of the target, or its first switch-in.
	struct start *st = bpf_map_lookup_elem(&starts, &tid);
	if (!st)
		return;
	if (st->on_cpu) {
		// Back from a switch-out that was not reported.
		count(C_OUT_MISSED);
		return;
	}
	struct key k = {};
	struct waker *w = bpf_map_lookup_elem(&wakers, &tid);
	key_of(&k, tid, st, w);
	__u64 ns = now - st->ts;
	if (w)
		bpf_map_delete_elem(&wakers, &tid);
	st->on_cpu = 1;
	struct span *sp = bpf_map_lookup_elem(&spans, &tid);
	if (sp)
		sp->last = now;
	add(&k, ns);
}

SEC("tracepoint/sched/sched_switch")
int sched_switch(void *ctx)
{
	__u64 now = bpf_ktime_get_ns();
	switch_out(ctx, now);
	switch_in(field_u32(ctx, off_next_pid), now);
	return KEEP_SAMPLE;
}

SEC("tracepoint/sched/sched_waking")
int sched_waking(void *ctx)
{
	__u32 tid = field_u32(ctx, off_waking_pid);
	struct start *st = bpf_map_lookup_elem(&starts, &tid);
	if (!st || st->on_cpu)
		return KEEP_SAMPLE;
	__u64 id = bpf_get_current_pid_tgid();
	__u64 now = bpf_ktime_get_ns();
	struct waker w = { .pid = id >> 32, .tid = (__u32)id, .ustack = -1, .ts = now };
	int target = bpf_map_lookup_elem(&targets, &w.pid) != 0;
	// Only a waker of the target gets its user stack kept (and repaired): another
	// process's is often whatever an interrupt happened to stop, and storing those
	// filled the stack map's buckets until a target's own stack collided with one.
	if (target)
		w.ustack = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK);
	w.kstack = bpf_get_stackid(ctx, &stacks, 0);
	bpf_map_update_elem(&wakers, &tid, &w, BPF_ANY);
	if (target)
		snapshot(w.tid, w.ustack, now);
	else if (!bpf_map_lookup_elem(&comms, &w.pid)) {
		char comm[16] = {};
		bpf_get_current_comm(comm, sizeof(comm));
		bpf_map_update_elem(&comms, &w.pid, comm, BPF_NOEXIST);
	}
	count(C_WAKINGS);
	return KEEP_SAMPLE;
}

#include "follow.h"
