#!/usr/bin/env bash
# Side-by-side cross-check of os.syscall's null call and os.ctxsw's same-CPU pipe round trip
# against `perf bench`, everything pinned to one CPU, alternating R rounds.
# Usage: scripts/crosscheck-os.sh [ROUNDS] [CPU]
set -euo pipefail
rounds=${1:-3}; cpu=${2:-1}
bin=${SYSMETER:-target/release/sysmeter}
command -v perf >/dev/null || { echo "skipped: perf is not installed (apt-get install linux-perf)"; exit 0; }
for r in $(seq 1 "$rounds"); do
  p_sys=$(taskset -c "$cpu" perf bench syscall basic -l 5000000 2>&1 | awk '/usecs\/op/ {print $1*1000}')
  p_pipe=$(taskset -c "$cpu" perf bench sched pipe -l 200000 2>&1 | awk '/usecs\/op/ {print $1*1000}')
  p_pipe_t=$(taskset -c "$cpu" perf bench sched pipe -T -l 200000 2>&1 | awk '/usecs\/op/ {print $1*1000}')
  ours=$("$bin" bench --only os.syscall,os.ctxsw --cpu "$cpu" --no-store --format json 2>/dev/null | python3 -c '
import json, sys
r = json.load(sys.stdin)
d = {(x["id"], m["name"]): m["summary"] for x in r["results"] for m in x["metrics"]}
s = d[("os.syscall", "null (getppid)")]
p = d[("os.ctxsw", "process round trip, same CPU (pipes)")]
t = d[("os.ctxsw", "thread round trip, same CPU (pipes)")]
print("%.1f %.1f %.1f %.1f %.1f" % (s["median"], s["mean"], p["median"], p["mean"], t["median"]))')
  read -r s_med s_mean p_med p_mean t_med <<<"$ours"
  printf 'round %d  null syscall: perf %6.1f ns  sysmeter median %6.1f mean %6.1f | pipe rtt (processes): perf %7.1f ns  sysmeter median %7.1f mean %7.1f | threads: perf -T %7.1f  sysmeter %7.1f\n' \
    "$r" "$p_sys" "$s_med" "$s_mean" "$p_pipe" "$p_med" "$p_mean" "$p_pipe_t" "$t_med"
done
