#!/usr/bin/env bash
# Reproducibility of sysmeter across back-to-back runs on this machine (issue 12).
#
#   scripts/stability.sh [RUNS] [BENCH ARGS...]      (default: 5 default-profile runs)
#   KEEP=1 scripts/stability.sh ...                   keep the runs' JSON (the directory is printed)
#   scripts/stability.sh --again DIR                  the table again from the kept runs of DIR
#
# Runs `sysmeter bench` RUNS times back to back (each into a throwaway database) and prints,
# for named headline metrics of every group, the coefficient of variation of the medians
# across the runs: raw (ns, B/s) and probe-normalised (core cycles: time × the core clock the
# machine-state probe measured around that experiment in that run). A metric whose cost
# scales with the core clock should be steadier normalised; one bound by DRAM, disks or the
# network should not change much either way. Also prints the core clock of each run and,
# per experiment, how many runs flagged it unstable.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = --again ]; then
    dir=${2:?usage: scripts/stability.sh --again DIR}
    runs=$(find "$dir" -name 'run*.json' | wc -l)
else
runs=${1:-5}
shift || true
bin=${BIN:-target/release/sysmeter}
[ -x "$bin" ] || cargo build --release --locked >&2
dir=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] && echo "kept $dir" >&2 || rm -rf "$dir"' EXIT
for i in $(seq 1 "$runs"); do
    start=$(date +%s)
    "$bin" bench --no-store --format json "$@" > "$dir/run$i.json" 2> "$dir/run$i.err" || {
        echo "run $i failed:" >&2; tail -5 "$dir/run$i.err" >&2; exit 1; }
    echo "run $i: $(( $(date +%s) - start )) s" >&2
done
fi
python3 - "$dir" "$runs" <<'PY'
import fnmatch, json, statistics, sys
d, n = sys.argv[1], int(sys.argv[2])
runs = [json.load(open(f"{d}/run{i}.json")) for i in range(1, n + 1)]
HEADLINE = [
    ("cpu.timer", "clock_gettime(CLOCK_MONOTONIC)", "cpu"),
    ("cpu.call", "call, 0 args", "cpu"),
    ("cpu.ops", "int mul (dependent)", "cpu"),
    ("cpu.ops", "float div (dependent)", "cpu"),
    ("os.syscall", "null (getppid)", "cpu"),
    ("os.syscall", "open+close /dev/null", "cpu"),
    ("os.task", "thread create+join", "cpu"),
    ("os.task", "fork+exit+wait", "cpu"),
    ("os.ctxsw", "process context switch", "cpu"),
    ("mem.latency", "L1 latency", "cpu"),
    ("mem.latency", "L2 latency", "cpu"),
    # The deepest level the chase reached: "DRAM latency", or "last level latency" when the
    # series stops inside a large L3 (the buffer size follows the machine's caches).
    ("mem.latency", "DRAM latency|last level latency", "memory"),
    ("mem.bandwidth", "read, DRAM (*), 1 thread", "memory"),
    ("mem.pagefault", "minor fault, 4 KiB page (THP off)", "cpu"),
    ("ipc.pipe", "round trip 1 B, same CPU", "ipc"),
    ("ipc.pipe", "round trip 1 B, cross CPU", "ipc"),
    ("ipc.unix", "round trip 1 B, same CPU", "ipc"),
    ("ipc.tcp", "round trip 1 B, same CPU", "ipc"),
    ("ipc.tcp", "connect+accept", "ipc"),
    ("ipc.udp", "round trip 1 B, same CPU", "ipc"),
    ("fs.read", "uncached random 4 KiB read, 1 MiB file", "io"),
    ("fs.read", "cached random 4 KiB read, 1 MiB file", "cpu"),
    ("fs.write", "4 KiB write + fsync", "io"),
]
def find(run, exp, name):
    r = next((x for x in run["results"] if x["id"] == exp), None)
    if r is None or r["status"] != "ok":
        return None, None
    # NAME: alternatives separated by "|", each a shell-style pattern.
    m = next((m for m in r["metrics"] if any(fnmatch.fnmatchcase(m["name"], p) for p in name.split("|"))), None)
    if m is None:
        return None, None
    raw = (m.get("rounds") or {}).get("median", m["summary"]["median"])
    core = (m.get("core_cycles") or {}).get("median")
    return raw, core
def thr(run, exp):
    r = next((x for x in run["results"] if x["id"] == exp), None)
    m = (r or {}).get("machine")
    return "?" if not m else f"{m['throughput_start']:.0f}"
def cv(xs):
    xs = [x for x in xs if x is not None]
    if len(xs) < 2 or statistics.mean(xs) == 0:
        return None
    return statistics.stdev(xs) / abs(statistics.mean(xs))
def pct(x):
    return "   n/a" if x is None else f"{100 * x:5.1f}%"
print(f"{n} runs; core clock per run (median over experiments, GHz):",
      " ".join(f"{statistics.median([x['machine']['core_ghz_start'] for x in r['results'] if x.get('machine')]):.2f}"
               for r in runs))
print(f"{n} runs; throughput probe per run (median over experiments, adds/ns; it halves when the "
      "core's other hardware thread is busy):",
      " ".join(f"{statistics.median([x['machine']['throughput_start'] for x in r['results'] if x.get('machine')]):.1f}"
               for r in runs))
print(f"{'experiment':14} {'metric':42} {'kind':7} {'median':>10} {'raw CV':>7} {'norm CV':>7}  per run (throughput probe at its start)")
for exp, name, kind in HEADLINE:
    pairs = [find(r, exp, name) for r in runs]
    raws = [p[0] for p in pairs]
    cores = [p[1] for p in pairs]
    if all(x is None for x in raws):
        print(f"{exp:14} {name:42} {kind:7} {'(not measured)':>10}")
        continue
    med = statistics.median([x for x in raws if x is not None])
    per_run = " ".join("-" if x is None else f"{x:.4g}({t})" for x, t in zip(raws, (thr(r, exp) for r in runs)))
    print(f"{exp:14} {name[:42]:42} {kind:7} {med:10.4g} {pct(cv(raws)):>7} {pct(cv(cores)):>7}  {per_run}")
# The core_clock finding against the int mul (dependent) row of the same run (3 cycles per
# imul on x86-64): issue 12 asks for agreement within 10% in every run.
for i, r in enumerate(runs, 1):
    ops = next((x for x in r["results"] if x["id"] == "cpu.ops" and x["status"] == "ok"), None)
    if ops is None:
        continue
    clock = next((f["value"] for f in ops["findings"] if f["key"] == "core_clock"), None)
    mul = next((m["summary"]["median"] for m in ops["metrics"] if m["name"] == "int mul (dependent)"), None)
    if clock and mul:
        from_row = 3.0 / mul
        print(f"run {i}: core_clock {clock:.2f} GHz; int mul row {mul:.3f} ns = {from_row:.2f} GHz; "
              f"{100 * (from_row / clock - 1):+.1f}%")
flagged = {}
for r in runs:
    for x in r["results"]:
        m = x.get("machine")
        if m and not m["stable"]:
            flagged[x["id"]] = flagged.get(x["id"], 0) + 1
print("experiments flagged unstable (runs of", n, "):",
      ", ".join(f"{k} {v}" for k, v in sorted(flagged.items())) or "none")
PY
