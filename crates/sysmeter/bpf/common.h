// What the BPF programs of this directory share (included by each *.bpf.c after it has
// defined MAX_TARGETS, MAX_STACKS, C_SLOTS, BUCKETS and `struct snapshot`): the target
// processes (`targets`, filled by user space and follow.h; `armed`, a launched command
// before its execve), the stack-trace map, the counters and the per-CPU scratch snapshot, and the small helpers that read them and the
// tracepoint records. scripts/build-bpf.sh compiles each program with this directory as
// its working directory, so the include needs no path.
#ifndef SYSMETER_BPF_COMMON_H
#define SYSMETER_BPF_COMMON_H

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_TARGETS);
	__type(key, __u32);
	__type(value, __u8);
} targets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u8);
} armed SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, MAX_STACKS);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, 127 * sizeof(__u64));
} stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, C_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

// Scratch space: a snapshot does not fit the 512-byte BPF stack.
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct snapshot);
} scratch SEC(".maps");

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

static __always_inline __u32 log2_bucket(__u64 v)
{
	__u32 b = 0;
#pragma unroll
	for (int i = 0; i < BUCKETS - 1; i++) {
		if (v > 1) {
			v >>= 1;
			b++;
		}
	}
	return b;
}

#endif
