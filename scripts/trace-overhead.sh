#!/usr/bin/env bash
# Slowdown of a system-call-heavy command under `sysmeter trace` (ptrace and tracepoint
# backends) compared with `strace -c -f`, measured side by side with hyperfine (issue #6).
#
#   scripts/trace-overhead.sh                 # dd bs=1 count=200000: 400k read/write calls
#   COUNT=20000 RUNS=3 scripts/trace-overhead.sh
#
# "taskset -c 0" runs strace and dd on one CPU, as sysmeter's ptrace backend places tracer
# and tracee by default (cross-CPU ptrace stops are expensive in VMs; docs/trace.md).
# Needs: hyperfine, strace, taskset, dd; a release build (cargo build --release). The tracepoint
# rows need root (or perf_event_paranoid ≤ -1). Every sysmeter row includes its fixed costs
# (start-up, the overhead calibration, reading the host description); --no-store leaves
# the database out. Results: a markdown table (hyperfine --export-markdown) in
# ${OUT:-target/trace-overhead.md} and the slowdowns (traced − untraced) printed at the end.
set -euo pipefail

COUNT=${COUNT:-200000}
RUNS=${RUNS:-5}
BIN=${SYSMETER:-target/release/sysmeter}
OUT=${OUT:-target/trace-overhead.md}
JSON=${OUT%.md}.json
CMD="dd if=/dev/zero of=/dev/null bs=1 count=$COUNT"

for tool in hyperfine strace taskset dd; do
    command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install -y hyperfine strace)" >&2; exit 2; }
done
[ -x "$BIN" ] || { echo "no $BIN: run cargo build --release first" >&2; exit 2; }

commands=(
    -n untraced "$CMD"
    -n "strace -c -f" "strace -c -f -o /dev/null $CMD"
    -n "strace -c -f, taskset -c 0" "taskset -c 0 strace -c -f -o /dev/null $CMD"
    -n "sysmeter ptrace (pinned)" "$BIN trace --no-store --backend ptrace -- $CMD"
    -n "sysmeter ptrace --no-pin" "$BIN trace --no-store --backend ptrace --no-pin -- $CMD"
)
if "$BIN" trace --no-store --backend tracepoint -- true 2>/dev/null; then
    commands+=(-n "sysmeter tracepoint" "$BIN trace --no-store --backend tracepoint -- $CMD")
else
    echo "tracepoint backend not permitted here: its row is left out" >&2
fi

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
hyperfine --warmup 1 --runs "$RUNS" --export-markdown "$OUT" --export-json "$JSON" \
    "${commands[@]}"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

# Slowdown = mean(traced) − mean(untraced), and each as a fraction of strace's.
python3 - "$JSON" <<'PY'
import json, sys
results = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
base = results["untraced"]["mean"]
strace = results["strace -c -f"]["mean"] - base
print(f"\nslowdown over untraced ({base*1e3:.1f} ms):")
for name, r in results.items():
    if name == "untraced":
        continue
    s = r["mean"] - base
    print(f"  {name:28s} +{s:8.3f} s  ({s/strace:6.3f} × strace's)")
PY
