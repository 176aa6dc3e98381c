#!/usr/bin/env bash
# Five default `bench` runs back to back: each run's wall time, how many experiments were
# measured again, and the run-to-run CV (stdev/mean of the five medians) of the headline
# metrics (null syscall, L1, L2, fork, TCP round trip). Run it on an otherwise idle machine.
# usage: scripts/bench-wall-cv.sh [SYSMETER] [RUNS] [DIR]
set -euo pipefail
sysmeter=${1:-target/release/sysmeter}
runs=${2:-5}
dir=${3:-$(mktemp -d)}
mkdir -p "$dir"
uptime
for i in $(seq "$runs"); do
    start=$(date +%s.%N)
    "$sysmeter" bench --db "$dir/runs.db" --format json --out "$dir/run-$i.json" 2>"$dir/run-$i.err"
    end=$(date +%s.%N)
    echo "run $i: $(echo "$end - $start" | bc) s wall, load $(cut -d' ' -f1 /proc/loadavg)"
done
python3 - "$dir" <<'PY'
import glob, json, statistics, sys
heads = [("os.syscall", "null (getppid)"), ("mem.latency", "L1 latency"), ("mem.latency", "L2 latency"),
         ("os.task", "fork+exit+wait"), ("ipc.tcp", "round trip 1 B, same CPU")]
runs = [json.load(open(f)) for f in sorted(glob.glob(sys.argv[1] + "/run-*.json"))]
again = [sum(any(f["key"] == "machine.remeasured" for f in e["findings"]) for e in r["results"]) for r in runs]
print("measured again per run:", again)
print("| metric | medians | CV |\n|---|---|---|")
for exp, name in heads:
    v = [m["summary"]["median"] for r in runs for e in r["results"] if e["id"] == exp
         for m in e["metrics"] if m["name"] == name]
    if len(v) >= 2:
        cv = statistics.stdev(v) / statistics.mean(v) * 100
        print(f"| {exp} {name} | {', '.join(f'{x:.4g}' for x in v)} | {cv:.1f}% |")
PY
