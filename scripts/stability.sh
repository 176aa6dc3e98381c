#!/usr/bin/env bash
# Run `sysmeter bench os` N times back to back and report, for the key metrics, each run's
# median and the coefficient of variation of those medians (issue #2 asks for <= 5%).
# Usage: scripts/stability.sh [N] [extra bench args...]
set -euo pipefail
n=${1:-5}; shift || true
bin=${SYSMETER:-target/release/sysmeter}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for i in $(seq 1 "$n"); do
  "$bin" bench os --no-store --format json "$@" > "$tmp/run$i.json" 2>/dev/null
done
python3 - "$tmp" "$n" <<'PY'
import json, statistics, sys
tmp, n = sys.argv[1], int(sys.argv[2])
keys = [("os.syscall", "null (getppid)"), ("os.task", "thread create+join"),
        ("os.ctxsw", "process round trip, same CPU (pipes)"),
        ("os.ctxsw", "thread round trip, same CPU (pipes)"),
        ("os.ctxsw", "process round trip, cross CPU (pipes)")]
runs = [json.load(open(f"{tmp}/run{i}.json")) for i in range(1, n + 1)]
for exp, name in keys:
    meds = []
    for r in runs:
        for res in r["results"]:
            for m in res["metrics"]:
                if res["id"] == exp and m["name"] == name:
                    meds.append(m["summary"]["median"])
    if len(meds) < 2:
        continue
    cv = statistics.stdev(meds) / statistics.mean(meds)
    print(f"{exp:11} {name:40} medians(ns) {' '.join(f'{x:9.1f}' for x in meds)}  CV {100*cv:5.2f}%")
PY
