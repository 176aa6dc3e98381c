#!/usr/bin/env bash
# The cost of `sysmeter alloc`'s uprobe fallback (docs/alloc.md, "The uprobe fallback"):
# tests/fixtures/programs/alloc_threads.c (4 threads x 250 000 malloc(64)+free, then 4 kept
# blocks; it prints its own run time as `elapsed_ns`) built static, untraced and under
# `sysmeter alloc` (uprobes: a static program cannot take the preload library), interleaved
# with the same program built dynamic, untraced, under `sysmeter alloc` (the preload
# library) and under heaptrack (which cannot profile a static program). Then the floor of
# the mechanism: 4 x 25 000 pairs on the static build, untraced, under `sysmeter alloc` and
# under bpftrace with the same three probes counting only (no stacks, no blocks). Needs
# root, cc with libc.a; heaptrack and bpftrace where installed.
# Usage: scripts/alloc-uprobe-overhead.sh [sysmeter] [rounds]
set -euo pipefail
cd "$(dirname "$0")/.."
sm=${1:-target/release/sysmeter}
rounds=${2:-5}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
src=crates/sysmeter/tests/fixtures/programs/alloc_threads.c
cc -O1 -g -pthread -o "$d/dyn" "$src"
cc -O1 -g -pthread -static -o "$d/static" "$src"
t() {
    local label=$1 s e
    shift
    s=$(date +%s%N)
    "$@" 2>"$d/err" >/dev/null
    e=$(date +%s%N)
    echo "$label wall_ms $(((e - s) / 1000000)) $(grep -o 'elapsed_ns [0-9]*' "$d/err")"
}
uptime
for r in $(seq "$rounds"); do
    t untraced-static "$d/static"
    t uprobes-static "$sm" alloc --no-store --format json --out "$d/u$r.json" -- "$d/static"
    t untraced-dyn "$d/dyn"
    t preload-dyn "$sm" alloc --no-store --format json --out "$d/p$r.json" -- "$d/dyn"
    if command -v heaptrack >/dev/null; then
        t heaptrack-dyn heaptrack -o "$d/ht$r" "$d/dyn"
    fi
done
uptime
bt="uprobe:$d/static:malloc { @e = count(); } uretprobe:$d/static:malloc { @r = count(); }
    uprobe:$d/static:free { @f = count(); }"
for r in $(seq "$rounds"); do
    t small-untraced "$d/static" 4 25000
    t small-uprobes "$sm" alloc --no-store --format json --out "$d/s$r.json" -- "$d/static" 4 25000
    if command -v bpftrace >/dev/null; then
        s=$(date +%s%N)
        bpftrace -e "$bt" -c "$d/static 4 25000" >"$d/err" 2>&1
        e=$(date +%s%N)
        echo "small-bpftrace wall_ms $(((e - s) / 1000000)) $(grep -o 'elapsed_ns [0-9]*' "$d/err")"
    fi
done
uptime
for f in "$d"/u*.json "$d"/p*.json; do
    python3 - "$f" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))
r = run["results"][0]
m = {x["name"]: x["summary"]["median"] for x in r["metrics"]}
print(sys.argv[1].rsplit("/", 1)[1], "allocations", int(m["allocations"]),
      "temporary", int(m["temporary allocations"]), "live blocks", int(m["blocks live at end"]))
PY
done
