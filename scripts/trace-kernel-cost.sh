#!/usr/bin/env bash
# What `sysmeter trace` costs the traced program, beside a bpftrace script that counts the
# same tracepoint in the kernel (issue 42; docs/trace.md, docs/bpf.md): dd copying COUNT
# single bytes (COUNT reads and writes), timed by dd itself ("copied, X s": the copy loop
# only, without the tracer's start and end), alone, under `sysmeter trace` with each
# backend, and under
#     bpftrace -e 'tracepoint:raw_syscalls:sys_enter /pid == cpid/ { @[args->id] = count(); }'
# ROUNDS rounds, the variants interleaved in each; the median of each variant, its cost
# (median − median alone) and the ratio of each sysmeter backend's cost to bpftrace's.
# With CPU=1 the workload is a small C program doing dd's loop (COUNT one-byte reads of
# /dev/zero and writes to /dev/null) that reports its own CPU time (user + system, where the
# kernel charges the BPF programs run at its system calls) in dd's format: on a machine that
# is not quiet, wall time mostly measures the other work, CPU time much less.
# Needs root, bpftrace and a built sysmeter (SYSMETER, default target/release/sysmeter, else
# target/debug/sysmeter). Usage: [CPU=1] scripts/trace-kernel-cost.sh [ROUNDS] [COUNT]
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${1:-5}
count=${2:-200000}
sysmeter=${SYSMETER:-}
if [ -z "$sysmeter" ]; then
    for b in target/release/sysmeter target/debug/sysmeter; do
        [ -x "$b" ] && { sysmeter=$b; break; }
    done
fi
[ -n "$sysmeter" ] || { echo "error: no sysmeter binary (cargo build --release)" >&2; exit 1; }
command -v bpftrace >/dev/null || { echo "error: no bpftrace (apt-get install -y bpftrace)" >&2; exit 1; }

dd_cmd="$(readlink -f "$(command -v dd)") if=/dev/zero of=/dev/null bs=1 count=$count"
if [ "${CPU:-0}" = 1 ]; then
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    cat >"$work/ddcpu.c" <<'C'
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 200000;
    int in = open("/dev/zero", O_RDONLY), out = open("/dev/null", O_WRONLY);
    char c;
    struct timespec a, b;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
    for (long i = 0; i < n; i++)
        if (read(in, &c, 1) != 1 || write(out, &c, 1) != 1)
            return 1;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
    double s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
    fprintf(stderr, "%ld bytes copied, %.6f s, CPU time\n", n, s);
    return 0;
}
C
    cc -O2 -o "$work/ddcpu" "$work/ddcpu.c"
    dd_cmd="$work/ddcpu $count"
fi
# dd's own time of the copy, in seconds, from the stderr text given on stdin.
copied() { sed -n 's/.*copied, \([0-9.e+-]*\) s,.*/\1/p' | tail -n 1; }

run() {
    case $1 in
        alone) $dd_cmd 2>&1 | copied ;;
        bpf | tracepoint | ptrace)
            "$sysmeter" trace --backend "$1" --no-store -- $dd_cmd 2>&1 | copied ;;
        bpftrace)
            bpftrace -e 'tracepoint:raw_syscalls:sys_enter /pid == cpid/ { @[args->id] = count(); }' \
                -c "$dd_cmd" 2>&1 | copied ;;
    esac
}

variants=(alone bpf tracepoint bpftrace)
declare -A times
echo "# $(uptime)"
echo "# $dd_cmd, $rounds rounds, sysmeter $sysmeter"
for r in $(seq "$rounds"); do
    for v in "${variants[@]}"; do
        t=$(run "$v")
        times[$v]+="$t "
        echo "round $r $v ${t}s"
    done
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
alone=$(echo "${times[alone]}" | median)
bpft=$(echo "${times[bpftrace]}" | median)
echo
printf '%-11s %10s %10s %14s\n' variant "median s" "cost s" "cost/bpftrace"
for v in "${variants[@]}"; do
    m=$(echo "${times[$v]}" | median)
    awk -v v="$v" -v m="$m" -v a="$alone" -v b="$bpft" 'BEGIN {
        c = m - a; cb = b - a
        printf "%-11s %10.3f %10.3f %14s\n", v, m, c, (v == "alone" ? "" : sprintf("%.2f", c / cb)) }'
done
echo "# $(uptime)"
