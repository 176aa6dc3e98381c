#!/bin/sh
# Cross-check of `sysmeter profile --off-cpu` against bpftrace on the same run: bpftrace
# sums the off-CPU intervals (sched_switch out, not preempted, to the next switch-in) of the
# fixture's threads by user stack while sysmeter profiles the same process. Prints both
# totals, interval counts and sysmeter's top stacks. Needs root, bpftrace, cc, a release or
# debug build. Usage: scripts/offcpu-crosscheck.sh [path/to/sysmeter]
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$here/target/release/sysmeter}
work=$(mktemp -d /var/tmp/offcpu-xc.XXXXXX)
trap 'rm -rf "$work"' EXIT
src=$here/crates/sysmeter/tests/fixtures/programs
cat > "$work/offcpu.bt" <<'BT'
tracepoint:sched:sched_switch
/args->prev_comm == str($1) && args->prev_state != 0/
{
  @start[args->prev_pid] = nsecs;
}
tracepoint:sched:sched_switch
/@start[args->next_pid]/
{
  $d = nsecs - @start[args->next_pid];
  @total_ns = sum($d);
  @intervals = count();
  delete(@start[args->next_pid]);
}
END { clear(@start); }
BT
for f in offcpu_spinnap offcpu_direct offcpu_pipe; do
  cc -O1 -g -fno-omit-frame-pointer -pthread -o "$work/$f" "$src/$f.c"
  args=""
  [ "$f" = offcpu_direct ] && args=$work
  echo "== $f"
  bpftrace "$work/offcpu.bt" "$f" \
    -c "$bin profile --off-cpu --no-store --format json --out $work/$f.json -- $work/$f $args" \
    2>/dev/null | grep -E '^@(total_ns|intervals)' | sed 's/^/bpftrace  /'
  python3 - "$work/$f.json" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))
off = next(r for r in run["results"] if r["id"] == "offcpu")
m = {x["name"]: x["summary"]["median"] for x in off["metrics"]}
print(f"sysmeter  @total_ns: {m['off-CPU time']:.0f}\nsysmeter  @intervals: {m['intervals']:.0f}")
stacks = json.loads(next(a for a in off["artifacts"] if a["name"] == "blocked stacks")["content"])
for s in stacks[:3]:
    print(f"  {s['caller']:<14} {s['reason']:<10} {s['count']:>6} × {s['blocked_ns']/1e6:9.3f} ms")
PY
done
