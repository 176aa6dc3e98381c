#!/usr/bin/env bash
# Power of `compare` (issue 12): how often it finds a slowdown that is really there.
#
#   scripts/compare-power.sh DIR [PCT] [EXPERIMENT]
#   (DIR: pairs kept by `KEEP=1 scripts/compare-pairs.sh`; default 10% into cpu.ops)
#
# For every kept pair (A, B) of identical runs, writes B' = B with every time metric of
# EXPERIMENT made PCT% slower (its raw samples, summary and round medians multiplied by
# 1 + PCT/100; nothing else touched), compares A with B' and counts: the injected metrics
# called slower (found), and the other metrics not called "no change" (false alarms beside
# a real change). Machine-explained verdicts (machine_busier/quieter) are counted apart.
# When DIR holds the runs' database (runs.db, as compare-pairs.sh now keeps), B' is
# imported into a copy of it and compared by run id, so the comparison uses the stored
# history as `compare` of stored runs does; the line says which.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:?usage: scripts/compare-power.sh DIR [PCT] [EXPERIMENT]}
pct=${2:-10}
exp=${3:-cpu.ops}
bin=${BIN:-target/release/sysmeter}
[ -x "$bin" ] || cargo build --release --locked >&2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$dir" "$work" "$pct" "$exp" "$bin" <<'PY'
import json, os, shutil, subprocess, sys
d, work, pct, exp, binary = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4], sys.argv[5]
f = 1 + pct / 100
pairs = sorted(int(n[:-6]) for n in os.listdir(d) if n.endswith("a.json"))
NO_CHANGE = {"no_change", "machine_slower", "machine_faster"}
NOT_JUDGED = {"machine_busier", "machine_quieter"}
found = injected = false = others = not_judged = 0
history = os.path.exists(f"{d}/runs.db")
db = f"{work}/runs.db"
for i in pairs:
    b = json.load(open(f"{d}/{i}b.json"))
    for e in b["results"]:
        if e["id"] != exp:
            continue
        for m in e["metrics"]:
            if m["unit"] != "ns":
                continue
            m["samples"] = [x * f for x in m.get("samples", [])]
            for k, v in list(m["summary"].items()):
                if k not in ("n", "cv", "outliers", "stddev") and isinstance(v, (int, float)):
                    m["summary"][k] = v * f
            m["summary"]["stddev"] = m["summary"]["stddev"] * f
            m["summary"]["ci95"] = [x * f for x in m["summary"]["ci95"]]
            if m.get("rounds"):
                m["rounds"]["medians"] = [x * f for x in m["rounds"]["medians"]]
                m["rounds"]["median"] *= f
    path = f"{work}/{i}b.json"
    if history:
        b["id"] += "-slowed"
    json.dump(b, open(path, "w"))
    if history:
        # A fresh copy per pair: an earlier pair's slowed run must not enter the history.
        shutil.copy(f"{d}/runs.db", db)
        subprocess.run([binary, "import", "--db", db, path], capture_output=True, check=True)
        a_id = json.load(open(f"{d}/{i}a.json"))["id"]
        args = ["--db", db, a_id, b["id"]]
    else:
        args = [f"{d}/{i}a.json", path]
    out = subprocess.run([binary, "compare", *args, "--format", "json"],
                         capture_output=True, text=True).stdout
    for m in json.loads(out)["metrics"]:
        if not m.get("comparison"):
            continue
        v = m["verdict"]
        if m["experiment"] == exp and m["unit"] == "ns":
            injected += 1
            found += v == "slower"
            not_judged += v in NOT_JUDGED
        else:
            others += 1
            false += v not in NO_CHANGE | NOT_JUDGED
how = "with the stored history" if history else "on the runs alone (no database in DIR)"
print(f"{len(pairs)} pairs compared {how}, {pct:g}% injected into {exp}: found {found} of {injected} "
      f"({100 * found / max(injected, 1):.1f}%; {not_judged} put down to the machine); "
      f"false alarms among the other metrics {false} of {others} ({100 * false / max(others, 1):.1f}%)")
PY
