#!/usr/bin/env bash
# Cost per traced call of `sysmeter calls` (in process, sampled and every call timed)
# against `ltrace -c` and a bpftrace uprobe+uretprobe summing script, on the same functions
# (malloc, free) of tests/fixtures/programs/calls_loop.c (issue #27). Each tool runs the
# fixture twice: with the workload and with none (N=0, M=0), so its start-up cancels out;
# the difference over the untraced difference is the in-workload slowdown.
#
#   scripts/calls-overhead.sh            # N=1000000 loop turns + M=10000000 timed pairs
#   N=20000 M=0 SLOW_N=5000 scripts/calls-overhead.sh
#
# ltrace and bpftrace cost tens of µs per call: they run a smaller workload (SLOW_N turns,
# no timed block) and their slowdown is per traced call, like the others'. Needs cc,
# ltrace, bpftrace (root), and a built sysmeter (SYSMETER=path, default the debug build:
# the in-process cost is the preload library's, compiled -O2 either way).
set -euo pipefail

N=${N:-1000000}
M=${M:-10000000}
SLOW_N=${SLOW_N:-5000}
BIN=${SYSMETER:-${CARGO_TARGET_DIR:-target}/debug/sysmeter}
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
cc -O1 -g -o "$DIR/loop" "$(dirname "$0")/../crates/sysmeter/tests/fixtures/programs/calls_loop.c"
LIBC=$(ldd "$DIR/loop" | awk '/libc.so.6/ {print $3}')

now() { date +%s%N; }
# seconds of the best of 3 runs of "$@"
best() {
    local b=0 t0 t1 d
    for _ in 1 2 3; do
        t0=$(now); "$@" >/dev/null 2>&1; t1=$(now); d=$((t1 - t0))
        if [ "$b" = 0 ] || [ "$d" -lt "$b" ]; then b=$d; fi
    done
    echo "$b"
}
cat >"$DIR/sum.bt" <<BT
uprobe:$LIBC:malloc, uprobe:$LIBC:free /pid == cpid/ { @s[tid] = nsecs; @n[probe] = count(); }
uretprobe:$LIBC:malloc, uretprobe:$LIBC:free /pid == cpid && @s[tid]/ { @t[probe] = sum(nsecs - @s[tid]); delete(@s[tid]); }
BT

# The untraced time per call comes from the big workload (the small one is lost in the
# noise of process start-up): base = (plain work - plain empty) / its calls.
row() { # name, calls, work ns, empty ns
    awk -v n="$1" -v c="$2" -v w="$3" -v e="$4" -v base="$BASE" 'BEGIN {
        per = (w - e) / c
        printf "| %s | %d | %.3f s | %.2f ns | %.1f ns | %.2f |\n", n, c, (w - e) / 1e9, per, per - base, per / base }'
}

calls=$((2 * N + 2 * M)); slow_calls=$((2 * SLOW_N))
pw=$(best "$DIR/loop" "$N" "$M"); pe=$(best "$DIR/loop" 0 0)
BASE=$(awk -v w="$pw" -v e="$pe" -v c="$calls" 'BEGIN { print (w - e) / c }')
echo "| tool | traced calls | in-workload time | time per call | added per call | slowdown |"
echo "|---|---|---|---|---|---|"
row "untraced" "$calls" "$pw" "$pe"
S=("$BIN" calls --no-store -e malloc,free)
row "sysmeter calls (1 in 64 timed)" "$calls" "$(best "${S[@]}" -- "$DIR/loop" "$N" "$M")" \
    "$(best "${S[@]}" -- "$DIR/loop" 0 0)"
row "sysmeter calls --time-every-call" "$calls" "$(best "${S[@]}" --time-every-call -- "$DIR/loop" "$N" "$M")" \
    "$(best "${S[@]}" --time-every-call -- "$DIR/loop" 0 0)"
row "sysmeter calls --backend uprobe" "$slow_calls" "$(best "${S[@]}" --backend uprobe -- "$DIR/loop" "$SLOW_N" 0)" \
    "$(best "${S[@]}" --backend uprobe -- "$DIR/loop" 0 0)"
row "ltrace -c -e malloc+free" "$slow_calls" "$(best ltrace -c -e malloc+free "$DIR/loop" "$SLOW_N" 0)" \
    "$(best ltrace -c -e malloc+free "$DIR/loop" 0 0)"
row "bpftrace uprobe+uretprobe" "$slow_calls" "$(best bpftrace "$DIR/sum.bt" -c "$DIR/loop $SLOW_N 0")" \
    "$(best bpftrace "$DIR/sum.bt" -c "$DIR/loop 0 0")"
