#!/bin/sh
# The semaphore ping-pong of issue 26 (two threads, N round trips, everything pinned to one
# CPU) under each futex recorder, interleaved: untraced, `locks --backend bpf`, `--backend
# perf`, and bpftrace running scripts/locks-pingpong.bt (the same aggregation in the kernel).
# Prints one line per run: the program's own time (it measures itself), the waits and futex
# calls seen, the records lost, and the overhead per futex call against the untraced run of
# the same round. Then paired runs: bpftrace system-wide on the threads named `pingpong`
# while `locks --backend bpf` observes one run, so both count the same waits.
# docs/bpf.md has the figures of this machine.
# Needs root, bpftrace, cc, taskset. Usage:
#   scripts/locks-pingpong.sh [path/to/sysmeter] [round trips, 20000] [rounds, 5]
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$here/target/release/sysmeter}
trips=${2:-20000}
rounds=${3:-5}
work=$(mktemp -d /var/tmp/locks-pp.XXXXXX)
trap 'rm -rf "$work"' EXIT
cc -O1 -g -pthread -o "$work/pingpong" \
    "$here/crates/sysmeter/tests/fixtures/programs/locks_sempingpong.c"
ms() { sed -n 's/.* round trips in \([0-9.]*\) ms/\1/p' "$1" | tail -n 1; }
per_call() { awk -v t="$1" -v u="$2" -v n="$3" 'BEGIN { printf "%.2f", (t - u) * 1000 / (n > 0 ? n : 1) }'; }
sysmeter_run() {
    taskset -c 0 "$bin" locks --backend "$1" --no-store --format json \
        --out "$work/run.json" -- "$work/pingpong" "$trips" >"$work/out" 2>/dev/null
    python3 - "$work/run.json" <<'PY'
import json, re, sys
run = json.load(open(sys.argv[1]))
r = run["results"][0]
waits = sum(m["summary"]["n"] for m in r["metrics"])
calls, lost = 0, "0%"
for f in r["findings"]:
    if f["key"] == "observed":
        calls = int(f["value"])
    if f["key"] == "lost":
        lost = f"{100 * f['value']:.1f}%"
print(waits, calls, lost)
PY
}
for r in $(seq "$rounds"); do
    taskset -c 0 "$work/pingpong" "$trips" >"$work/out"
    base=$(ms "$work/out")
    echo "round $r untraced: $base ms"
    for b in bpf perf; do
        set -- $(sysmeter_run "$b")
        t=$(ms "$work/out")
        echo "round $r $b: $t ms, waits $1, futex calls $2, lost $3, $(per_call "$t" "$base" "$2") µs per call"
    done
    taskset -c 0 bpftrace "$here/scripts/locks-pingpong.bt" -c "$work/pingpong $trips" \
        >"$work/out" 2>&1
    t=$(ms "$work/out")
    waits=$(sed -n 's/^@n: //p' "$work/out")
    calls=$(sed -n 's/^@calls: //p' "$work/out")
    lost=$(sed -n 's/.*Lost \([0-9]*\) events.*/\1/p' "$work/out" | head -n 1)
    echo "round $r bpftrace: $t ms, waits $waits, futex calls $calls, lost ${lost:-0}, $(per_call "$t" "$base" "$calls") µs per call"
done
sed 's/pid == cpid/comm == "pingpong"/' "$here/scripts/locks-pingpong.bt" >"$work/paired.bt"
for r in $(seq "$rounds"); do
    bpftrace "$work/paired.bt" >"$work/bt" 2>&1 &
    bt=$!
    until grep -q Attaching "$work/bt"; do sleep 0.2; done
    sleep 1
    set -- $(sysmeter_run bpf)
    kill -INT "$bt"
    wait "$bt" || true
    echo "paired $r: locks --backend bpf waits $1, futex calls $2; bpftrace waits $(sed -n 's/^@n: //p' "$work/bt"), futex calls $(sed -n 's/^@calls: //p' "$work/bt")"
done
