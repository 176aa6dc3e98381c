#!/bin/sh
# The pipe ping-pong of issue 26 (two threads, N round trips, everything pinned to one CPU)
# under each off-CPU recorder, interleaved: untraced, `profile --off-cpu --backend bpf`,
# `--backend perf`, and bpftrace running scripts/offcpu-pingpong.bt (the same aggregation).
# Prints one line per run: the program's own time (it measures itself), the intervals seen
# (blocked + preempted) and the records lost. docs/bpf.md has the figures of this machine.
# Needs root, bpftrace, cc, taskset. Usage:
#   scripts/offcpu-pingpong.sh [path/to/sysmeter] [round trips, 20000] [rounds, 5]
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$here/target/release/sysmeter}
trips=${2:-20000}
rounds=${3:-5}
work=$(mktemp -d /var/tmp/offcpu-pp.XXXXXX)
trap 'rm -rf "$work"' EXIT
cc -O1 -g -fno-omit-frame-pointer -pthread -o "$work/pingpong" \
    "$here/crates/sysmeter/tests/fixtures/programs/offcpu_pingpong.c"
ms() { sed -n 's/.* round trips in \([0-9.]*\) ms/\1/p' "$1" | tail -n 1; }
sysmeter_run() {
    taskset -c 0 "$bin" profile --off-cpu --backend "$1" --no-store --format json \
        --out "$work/run.json" -- "$work/pingpong" "$trips" >"$work/out" 2>/dev/null
    python3 - "$work/run.json" <<'PY'
import json, re, sys
run = json.load(open(sys.argv[1]))
off = next(r for r in run["results"] if r["id"] == "offcpu")
m = {x["name"]: x for x in off["metrics"]}
pre = int(re.match(r"(\d+)", m["preempted (runnable)"]["note"]).group(1))
blocked = int(m["intervals"]["summary"]["median"])
lost = int(m["lost records"]["summary"]["median"])
ms = m["off-CPU time"]["summary"]["median"] / 1e6
print(f"intervals {blocked + pre} (blocked {blocked}, preempted {pre}) lost {lost}, blocked {ms:.1f} ms")
PY
}
for r in $(seq "$rounds"); do
    taskset -c 0 "$work/pingpong" "$trips" >"$work/out"
    echo "round $r untraced: $(ms "$work/out") ms"
    for b in bpf perf; do
        line=$(sysmeter_run "$b")
        echo "round $r $b: $(ms "$work/out") ms, $line"
    done
    taskset -c 0 bpftrace "$here/scripts/offcpu-pingpong.bt" -c "$work/pingpong $trips" \
        >"$work/out" 2>&1
    blocked=$(sed -n 's/^@intervals\[1\]: //p' "$work/out")
    pre=$(sed -n 's/^@intervals\[0\]: //p' "$work/out")
    lost=$(sed -n 's/.*Lost \([0-9]*\) events.*/\1/p' "$work/out" | head -n 1)
    total=$(sed -n 's/^@total_ns\[1\]: //p' "$work/out")
    echo "round $r bpftrace: $(ms "$work/out") ms, intervals $((blocked + pre)) (blocked $blocked, preempted $pre) lost ${lost:-0}, blocked $((total / 1000000)) ms"
done
