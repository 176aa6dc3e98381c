// SPDX-License-Identifier: GPL-2.0
//
// In-kernel aggregation for the uprobe fallback of `sysmeter alloc` (docs/alloc.md): a heap
// profile of a process the preload library cannot enter (`-p PID`, a static program).
//
// Uprobes on the C library's (or a static program's own) malloc, calloc, realloc,
// posix_memalign, aligned_alloc, memalign, valloc, pvalloc and free, and uretprobes on the
// allocating ones. At an allocation's return its user stack id (`bpf_get_stackid`, the
// kernel's frame-pointer walk from the return address: the allocating function is always
// exact) is counted in `sites`, the block kept in `blocks` (pointer -> size, stack, thread,
// the thread's allocation number), and the process's live bytes, peak and size histogram
// in `stats`. A free finds its block, counts it against the block's stack, and counts a
// temporary allocation when the allocating thread has not allocated since. Once per stack
// id, a snapshot of the registers and the top of the user stack lets user space walk the
// whole stack with the DWARF unwind tables (code without frame pointers). No record per
// call leaves the kernel: nothing can be lost on the way, only what the maps cannot hold,
// which `stats` counts.
//
// Nested calls (realloc(NULL, n) calls malloc, realloc(p, 0) calls free, inside the C
// library) are told apart by the stack pointer: a thread's call in progress is the one
// whose stack pointer is highest; an entry or free below it is the allocator's own.
//
// The uprobe programs return 0, unlike the tracepoint programs of locks and offcpu (which
// return common.h's KEEP_SAMPLE so that nobody's perf samples of a shared tracepoint are
// dropped): a uprobe that aya attaches is a perf event of the uprobe PMU made for this
// process alone (the kernel's local trace_uprobe), which nobody else can read, so its
// return value hides nothing from anyone; 0 spares the kernel counting into it.
//
// Built by scripts/build-bpf.sh; the object next to this file is committed.

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define MAX_BLOCKS (1 << 20)
#define MAX_THREADS 16384
#define MAX_SITES 32768
#define MAX_STACKS 32768
#define MAX_SNAPSHOTS 8192
#define STACK_WORDS 256
#define SHORT_WORDS 64
#define HIST 48

// Slots of `stats`, read by user space (crates/sysmeter/src/diagnose/alloc/uprobe/maps.rs).
#define S_LIVE 0
#define S_LIVE_COUNT 1
#define S_PEAK 2
#define S_PEAK_NS 3
#define S_ALLOCS 4
#define S_FREES 5
#define S_TEMPS 6
#define S_FOREIGN 7
#define S_UNTRACKED 8
#define S_LOST_STACKS 9
#define S_SNAPSHOT_FAILED 10
#define S_THREADS_FULL 11
#define S_SITES_FULL 12
#define S_HITS 13
#define S_REPLACED 14
#define S_HIST 16
#define S_SLOTS (S_HIST + HIST)

// How the call in progress returns its block.
#define K_RETURNED 0
#define K_MEMPTR 1

// The process observed (its threads share it as their tgid); set by the loader.
const volatile __u32 target_tgid = 0;

struct block {
	__u64 size;
	__u64 seq;
	__s32 stack;
	__u32 tid;
};

struct thread {
	__u64 seq;
	__u64 sp;
	__u64 size;
	__u64 arg;
	__u32 active;
	__u32 kind;
};

struct site {
	__u64 allocs;
	__u64 bytes;
	__u64 frees;
	__u64 freed;
	__u64 temps;
	__u64 mmaps;
};

// The stack-trace map, `struct snapshot`, its scratch copy and the `pt_regs` offsets.
#include "stack.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_BLOCKS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u64);
	__type(value, struct block);
} blocks SEC(".maps");

MAP(threads, HASH, MAX_THREADS, __u32, struct thread);

MAP(sites, HASH, MAX_SITES, __s32, struct site);

MAP(snapshots, HASH, MAX_SNAPSHOTS, __s32, struct snapshot);

MAP(stats, ARRAY, S_SLOTS, __u32, __u64);

static const struct thread zero_thread;
static const struct site zero_site;

static __always_inline __u64 reg(void *ctx, __u32 off)
{
	return *(__u64 *)((char *)ctx + off);
}

static __always_inline __u64 *slot(__u32 i)
{
	return bpf_map_lookup_elem(&stats, &i);
}

static __always_inline void add(__u32 i, __u64 v)
{
	__u64 *c = slot(i);
	if (c)
		__sync_fetch_and_add(c, v);
}

static __always_inline __u32 log2_class(__u64 v)
{
	__u32 b = 0;
#pragma unroll
	for (int i = 0; i < HIST - 1; i++) {
		if (v) {
			v >>= 1;
			b++;
		}
	}
	return b;
}

// The calling thread's state when it belongs to the target; NULL otherwise.
static __always_inline struct thread *me(__u32 *tid)
{
	__u64 id = bpf_get_current_pid_tgid();
	if ((__u32)(id >> 32) != target_tgid)
		return 0;
	*tid = (__u32)id;
	add(S_HITS, 1);
	struct thread *t = bpf_map_lookup_elem(&threads, tid);
	if (t)
		return t;
	if (bpf_map_update_elem(&threads, tid, &zero_thread, BPF_NOEXIST) == -7 /* E2BIG */) {
		add(S_THREADS_FULL, 1);
		return 0;
	}
	return bpf_map_lookup_elem(&threads, tid);
}

// Whether the thread is inside an allocator call already (this one is nested in it).
static __always_inline int nested(struct thread *t, __u64 sp)
{
	return t->active && sp < t->sp;
}

// Takes block `ptr` out of the table and counts its free (`tid`: the freeing thread).
static __always_inline void forget(__u64 ptr, __u32 tid, struct thread *t)
{
	if (!ptr)
		return;
	struct block *b = bpf_map_lookup_elem(&blocks, &ptr);
	if (!b) {
		add(S_FOREIGN, 1);
		return;
	}
	__u64 size = b->size;
	__s32 stack = b->stack;
	int temp = b->tid == tid && b->seq == t->seq;
	bpf_map_delete_elem(&blocks, &ptr);
	struct site *s = bpf_map_lookup_elem(&sites, &stack);
	if (s) {
		__sync_fetch_and_add(&s->frees, 1);
		__sync_fetch_and_add(&s->freed, size);
		if (temp)
			__sync_fetch_and_add(&s->temps, 1);
	}
	add(S_FREES, 1);
	add(S_LIVE, -size);
	add(S_LIVE_COUNT, -1);
	if (temp)
		add(S_TEMPS, 1);
}

static __always_inline void enter(void *ctx, __u64 size, __u64 arg, __u32 kind)
{
	__u32 tid;
	struct thread *t = me(&tid);
	__u64 sp = reg(ctx, R_SP);
	if (!t || nested(t, sp))
		return;
	t->active = 1;
	t->sp = sp;
	t->size = size;
	t->arg = arg;
	t->kind = kind;
}

SEC("uprobe")
int malloc_enter(void *ctx)
{
	enter(ctx, reg(ctx, R_DI), 0, K_RETURNED);
	return 0;
}

SEC("uprobe")
int calloc_enter(void *ctx)
{
	enter(ctx, reg(ctx, R_DI) * reg(ctx, R_SI), 0, K_RETURNED);
	return 0;
}

// memalign, aligned_alloc: (alignment, size).
SEC("uprobe")
int memalign_enter(void *ctx)
{
	enter(ctx, reg(ctx, R_SI), 0, K_RETURNED);
	return 0;
}

// posix_memalign(memptr, alignment, size): the block is written to *memptr.
SEC("uprobe")
int posix_memalign_enter(void *ctx)
{
	enter(ctx, reg(ctx, R_DX), reg(ctx, R_DI), K_MEMPTR);
	return 0;
}

// realloc(ptr, size): the old block is forgotten before the call (another thread may be
// given its address at once), the new one kept at the return.
SEC("uprobe")
int realloc_enter(void *ctx)
{
	__u32 tid;
	struct thread *t = me(&tid);
	__u64 sp = reg(ctx, R_SP);
	if (!t || nested(t, sp))
		return 0;
	forget(reg(ctx, R_DI), tid, t);
	t->active = 1;
	t->sp = sp;
	t->size = reg(ctx, R_SI);
	t->arg = 0;
	t->kind = K_RETURNED;
	return 0;
}

SEC("uprobe")
int free_enter(void *ctx)
{
	__u32 tid;
	struct thread *t = me(&tid);
	if (!t || nested(t, reg(ctx, R_SP)))
		return 0;
	forget(reg(ctx, R_DI), tid, t);
	return 0;
}

// Once per stack id: the registers at the return and the top of the user stack.
static __always_inline void snapshot(void *ctx, __s32 stack)
{
	if (bpf_map_lookup_elem(&snapshots, &stack))
		return;
	struct snapshot *s = scratch_snapshot();
	if (!s)
		return;
	s->ip = reg(ctx, R_IP);
	s->sp = reg(ctx, R_SP);
	s->bp = reg(ctx, R_BP);
	if (copy_stack_top(s, SHORT_WORDS)) {
		add(S_SNAPSHOT_FAILED, 1);
		return;
	}
	bpf_map_update_elem(&snapshots, &stack, s, BPF_NOEXIST);
}

static __always_inline void peak(__u64 size)
{
	add(S_LIVE, size);
	add(S_LIVE_COUNT, 1);
	__u64 *live = slot(S_LIVE), *top = slot(S_PEAK), *when = slot(S_PEAK_NS);
	if (!live || !top || !when)
		return;
	// Read after the add: another CPU's add may be in it (a value the heap did reach).
	__u64 now = *(volatile __u64 *)live;
	if ((__s64)now > (__s64)*top) {
		*top = now;
		*when = bpf_ktime_get_ns();
	}
}

static __always_inline void keep(void *ctx, __u64 ptr, __u64 size, __u32 tid, struct thread *t)
{
	struct block *old = bpf_map_lookup_elem(&blocks, &ptr);
	if (old) {
		// Freed by a path not probed (the allocator's own internal free): count it so.
		add(S_REPLACED, 1);
		forget(ptr, 0, t);
	}
	__s32 stack = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK);
	if (stack < 0) {
		add(S_LOST_STACKS, 1);
		stack = -1;
	} else {
		snapshot(ctx, stack);
	}
	struct site *s = bpf_map_lookup_elem(&sites, &stack);
	if (!s) {
		if (bpf_map_update_elem(&sites, &stack, &zero_site, BPF_NOEXIST) == -7)
			add(S_SITES_FULL, 1);
		s = bpf_map_lookup_elem(&sites, &stack);
	}
	if (s) {
		__sync_fetch_and_add(&s->allocs, 1);
		__sync_fetch_and_add(&s->bytes, size);
	}
	t->seq++;
	add(S_ALLOCS, 1);
	add(S_HIST + log2_class(size), 1);
	struct block b = { .size = size, .seq = t->seq, .stack = stack, .tid = tid };
	if (bpf_map_update_elem(&blocks, &ptr, &b, BPF_ANY)) {
		add(S_UNTRACKED, 1);
		return;
	}
	peak(size);
}

SEC("uretprobe")
int alloc_return(void *ctx)
{
	__u32 tid;
	struct thread *t = me(&tid);
	// The call's own return pops its return address: the stack pointer is 8 above entry's.
	if (!t || !t->active || reg(ctx, R_SP) != t->sp + 8)
		return 0;
	t->active = 0;
	__u64 ptr = reg(ctx, R_AX);
	if (t->kind == K_MEMPTR) {
		__u64 out = 0;
		if (ptr != 0 || bpf_probe_read_user(&out, sizeof(out), (void *)t->arg))
			return 0;
		ptr = out;
	}
	if (ptr)
		keep(ctx, ptr, t->size, tid, t);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
