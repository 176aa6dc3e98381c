// The user stack of a thread, kept the same way by every BPF program of this directory
// (included by common.h and alloc.bpf.c after they have defined MAX_STACKS and
// STACK_WORDS): the kernel's frame-pointer walks (`stacks`, from `bpf_get_stackid`), and the
// copy of the user registers and the top STACK_WORDS words of the user stack (`struct
// snapshot`) with which user space walks the whole stack with the DWARF unwind tables,
// putting back the callers that code without frame pointers hides. A snapshot is built in
// the per-CPU `scratch` (it does not fit the 512-byte BPF stack) before it is kept; the
// registers are read at their offsets in `struct pt_regs` (R_*).
#ifndef SYSMETER_BPF_STACK_H
#define SYSMETER_BPF_STACK_H

#include "maps.h"

// x86-64 `struct pt_regs` offsets (an ABI: the order of the saved registers).
#define R_BP 32
#define R_AX 80
#define R_DX 96
#define R_SI 104
#define R_DI 112
#define R_IP 128
#define R_SP 152

struct snapshot {
	// When it was taken (the tracepoint programs of common.h: the interval's start), or
	// where (alloc's uretprobe: the instruction pointer at the return).
	union {
		__u64 ts;
		__u64 ip;
	};
	__u64 sp;
	__u64 bp;
	__u64 words[STACK_WORDS];
};

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, MAX_STACKS);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, 127 * sizeof(__u64));
} stacks SEC(".maps");

MAP(scratch, PERCPU_ARRAY, 1, __u32, struct snapshot);

// The per-CPU scratch snapshot; NULL when the map has no entry (never, in practice).
static __always_inline struct snapshot *scratch_snapshot(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&scratch, &zero);
}

// Copies the top of the user stack at `s->sp` into `s->words`; where the whole does not
// read (the stack holds less), the first `short_words` words (0: no second try). Nonzero
// when nothing could be read.
static __always_inline int copy_stack_top(struct snapshot *s, __u32 short_words)
{
	return bpf_probe_read_user(s->words, sizeof(s->words), (void *)s->sp) &&
	       (!short_words || bpf_probe_read_user(s->words, short_words * 8, (void *)s->sp));
}

#endif
