// Following the target's processes, the same in every BPF program of this directory
// (included last by each *.bpf.c, after its `targets` and `armed` maps): a forked child of
// a target is a target, and a launched command becomes one at its execve. The offsets of
// the two fields it reads are set by the loader (`observe::bpf::FOLLOW_FIELDS`).
#ifndef SYSMETER_BPF_FOLLOW_H
#define SYSMETER_BPF_FOLLOW_H

// Offsets of the tracepoint fields, from tracefs; set by the loader.
const volatile __u32 off_fork_child = 20;
const volatile __u32 off_exec_pid = 12;

// A process of the target forks: its child is a target too (threads share the tgid already).
SEC("tracepoint/sched/sched_process_fork")
int sched_process_fork(void *ctx)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	if (!bpf_map_lookup_elem(&targets, &pid))
		return KEEP_SAMPLE;
	__u32 child = field_u32(ctx, off_fork_child);
	__u8 one = 1;
	bpf_map_update_elem(&targets, &child, &one, BPF_ANY);
	return KEEP_SAMPLE;
}

// A launched command becomes a target at its execve (before it, it is sysmeter's child
// waiting to be released).
SEC("tracepoint/sched/sched_process_exec")
int sched_process_exec(void *ctx)
{
	__u32 pid = field_u32(ctx, off_exec_pid);
	if (!bpf_map_lookup_elem(&armed, &pid))
		return KEEP_SAMPLE;
	__u8 one = 1;
	bpf_map_update_elem(&targets, &pid, &one, BPF_ANY);
	bpf_map_delete_elem(&armed, &pid);
	return KEEP_SAMPLE;
}

char LICENSE[] SEC("license") = "GPL";

#endif
