#!/usr/bin/env bash
# Regenerates docs/screenshots/*.png: the HTML page of every run kind, `compare --html` and
# `fleet --format html`, each rendered by headless Chromium in a 1400 x 900 window (the bench
# page also at 800 px, bench-narrow.png). The pages come from committed run records, so the
# screenshots change only when the renderers do:
#   bench                         crates/sysmeter/tests/fixtures/runs/default-bench.json (a real
#                                 default run)
#   run trace calls profile scale locks alloc
#                                 crates/sysmeter/src/report/html/fixtures/KIND.json
#   compare                       that bench run against a copy with every sample 30% slower
#   fleet                         six hosts made from that bench run (medians jittered by ±3%,
#                                 one host on another kernel with os.syscall twice as slow)
#
# usage: scripts/screenshots.sh [SYSMETER] [OUT_DIR]     (defaults: target/release/sysmeter,
#        docs/screenshots). Needs chromium (or chromium-browser, google-chrome) and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
sysmeter=${1:-target/release/sysmeter}
out=${2:-docs/screenshots}
[ -x "$sysmeter" ] || { echo "error: $sysmeter not found; cargo build --release first" >&2; exit 2; }
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$browser" ] || { echo "error: no chromium found; apt-get install chromium" >&2; exit 2; }
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# shot PAGE PNG WIDTH: one screenshot of the first screen, in a fresh browser profile.
shot() {
    local profile
    profile=$(mktemp -d "$work/profile.XXXX")
    timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$profile" --hide-scrollbars --window-size="$3,900" \
        --screenshot="$2" "file://$1" >/dev/null 2>&1
    [ -s "$2" ] || { echo "error: chromium wrote no $2" >&2; exit 1; }
    echo "$2 (${3} px)"
}

bench=crates/sysmeter/tests/fixtures/runs/default-bench.json
"$sysmeter" report "$bench" --html "$work/bench.html" 2>/dev/null
for kind in run trace calls profile scale locks alloc; do
    "$sysmeter" report "crates/sysmeter/src/report/html/fixtures/$kind.json" --html "$work/$kind.html" 2>/dev/null
done

python3 - "$bench" "$work" <<'PY'
import copy, json, random, sys
bench, work = json.load(open(sys.argv[1])), sys.argv[2]
slow = copy.deepcopy(bench)
slow["id"] = bench["id"][:-8] + "5c0a1e30"
for r in slow["results"]:
    for m in r["metrics"]:
        m["samples"] = [s * 1.3 for s in m["samples"]]
        for k in ("min", "p5", "median", "mean", "p95", "p99", "max", "stddev"):
            m["summary"][k] *= 1.3
        m["summary"]["ci95"] = [c * 1.3 for c in m["summary"]["ci95"]]
json.dump(slow, open(f"{work}/slower.json", "w"))
for i in range(6):
    host = copy.deepcopy(bench)
    host["id"] = bench["id"][:-8] + f"f1ee70{i:02d}"
    host["host"]["hostname"] = f"node-{i + 1:02d}"
    host["started_ns"] += i * 60_000_000_000
    if host["finished_ns"]:
        host["finished_ns"] += i * 60_000_000_000
    odd = i == 4
    if odd:
        host["host"]["kernel"] = "6.11.0-9-generic"
    rng = random.Random(i)
    for r in host["results"]:
        for m in r["metrics"]:
            k = 2.0 if odd and r["id"] == "os.syscall" else 1 + rng.uniform(-0.03, 0.03)
            m["samples"] = [s * k for s in m["samples"]]
            for f in ("min", "p5", "median", "mean", "p95", "p99", "max", "stddev"):
                m["summary"][f] *= k
            m["summary"]["ci95"] = [c * k for c in m["summary"]["ci95"]]
    json.dump(host, open(f"{work}/node-{i + 1:02d}.json", "w"))
PY
"$sysmeter" compare "$bench" "$work/slower.json" --html "$work/compare.html" >/dev/null 2>&1 || true
"$sysmeter" import --db "$work/fleet.db" "$work"/node-*.json >/dev/null
"$sysmeter" fleet --db "$work/fleet.db" --format html >"$work/fleet.html"

for kind in bench run trace calls profile scale locks alloc compare fleet; do
    shot "$work/$kind.html" "$out/$kind.png" 1400
done
shot "$work/bench.html" "$out/bench-narrow.png" 800
