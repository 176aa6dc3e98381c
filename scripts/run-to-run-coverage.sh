#!/usr/bin/env bash
# Coverage of the run-to-run interval (issue 33): how often the next run's median of a metric
# falls inside the run-to-run interval printed for the run before it, per experiment.
#
#   scripts/run-to-run-coverage.sh [DIR]       measure into DIR (a new temporary directory
#                                              when not given, kept and printed), then count
#   scripts/run-to-run-coverage.sh --again DIR count again on the runs kept in DIR (after a
#                                              change of the interval: it is computed when a
#                                              run is rendered, so the same runs serve)
#   ONLY=ids HISTORY=N NEXT=N ROUNDS=N BIN=path scripts/run-to-run-coverage.sh ...
#
# Two parts, both with `bench --only $ONLY` (default cpu.timer,cpu.call,os.syscall,ipc.pipe,
# the default profile; 37 metrics, about 20 s a run on the development machine):
#
# 1. history: HISTORY (default 5) + NEXT (default 6) runs stored one after the other in
#    DIR/history.db. The interval of run k (from the stored runs up to it, this one included,
#    once there are at least 5) is read back with `export --format json`, and the median of
#    run k + 1 is checked against it — NEXT pairs, the first from the HISTORY-th run.
# 2. rounds: NEXT + 1 runs with `--rounds $ROUNDS` (default 5), each in a database of its own
#    (DIR/rounds-K.db: no history), so each interval comes from the run's own rounds; the
#    median of round medians of run k + 1 is checked against run k's interval.
#
# For contrast the same count is made with the within-run 95% CI of the median. Prints per
# experiment and in total: cases, inside the run-to-run interval, inside the within-run CI,
# the median half-width of each interval relative to the metric's median (what the coverage
# costs), and the basis the intervals were computed from (history, rounds, this_run).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${BIN:-target/release/sysmeter}
[ -x "$bin" ] || cargo build --release --locked >&2
only=${ONLY:-cpu.timer,cpu.call,os.syscall,ipc.pipe}
history=${HISTORY:-5}
next=${NEXT:-6}
rounds=${ROUNDS:-5}

bench() { # DB OUT [ARGS...]: one stored bench run, its JSON kept as OUT
    local db=$1 out=$2
    shift 2
    "$bin" bench --only "$only" --db "$db" --format json --out "$out" "$@" 2>/dev/null
}

if [ "${1:-}" = --again ]; then
    dir=${2:?usage: scripts/run-to-run-coverage.sh --again DIR}
else
    dir=${1:-$(mktemp -d /tmp/sysmeter-rr.XXXXXX)}
    mkdir -p "$dir"
    echo "runs kept in $dir (load before: $(cut -d' ' -f1-3 /proc/loadavg))" >&2
    for i in $(seq 0 $((history + next - 1))); do
        bench "$dir/history.db" "$dir/h$i.json"
        echo "history run $((i + 1)) of $((history + next)) (load $(cut -d' ' -f1 /proc/loadavg))" >&2
    done
    for i in $(seq 0 "$next"); do
        bench "$dir/rounds-$i.db" "$dir/r$i.json" --rounds "$rounds"
        echo "rounds run $((i + 1)) of $((next + 1)) (load $(cut -d' ' -f1 /proc/loadavg))" >&2
    done
    echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
fi

export_run() { # DB JSON OUT: the stored run of JSON as rendered now, with its intervals
    local id
    id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$2")
    "$bin" export --db "$1" "$id" --format json --out "$3"
}
pairs=()
for k in $(seq $((history - 1)) $((history + next - 2))); do
    export_run "$dir/history.db" "$dir/h$k.json" "$dir/h$k.shown.json"
    pairs+=("history:$dir/h$k.shown.json:$dir/h$((k + 1)).json")
done
for k in $(seq 0 $((next - 1))); do
    export_run "$dir/rounds-$k.db" "$dir/r$k.json" "$dir/r$k.shown.json"
    pairs+=("rounds:$dir/r$k.shown.json:$dir/r$((k + 1)).json")
done

python3 - "${pairs[@]}" <<'EOF'
import json, sys
from collections import defaultdict

def metrics(path):
    run = json.load(open(path))
    for r in run["results"]:
        if r["status"] != "ok":
            continue
        for m in r["metrics"]:
            yield r["id"], m

def per_run_value(m):
    # The value the interval predicts: the median of the round medians, or the median.
    return (m.get("rounds") or {}).get("median", m["summary"]["median"])

parts = defaultdict(lambda: defaultdict(lambda: [0, 0, 0]))
widths = defaultdict(lambda: defaultdict(lambda: ([], [])))
bases = defaultdict(lambda: defaultdict(int))
for pair in sys.argv[1:]:
    part, shown, following = pair.split(":")
    after = {(e, m["name"]): per_run_value(m) for e, m in metrics(following)}
    for exp, m in metrics(shown):
        rr, nxt = m.get("run_to_run"), after.get((exp, m["name"]))
        if rr is None or nxt is None or m.get("degenerate"):
            continue
        lo, hi = m["summary"]["ci95"]
        c = parts[part][exp]
        c[0] += 1
        c[1] += rr["lo"] <= nxt <= rr["hi"]
        c[2] += lo is not None and hi is not None and lo <= nxt <= hi
        bases[part][rr["basis"]] += 1
        med = m["summary"]["median"]
        if med and lo is not None and hi is not None:
            widths[part][exp][0].append((rr["hi"] - rr["lo"]) / 2 / abs(med))
            widths[part][exp][1].append((hi - lo) / 2 / abs(med))

pct = lambda a, n: f"{100 * a / n:.0f}%" if n else "—"
def half(v):
    v = sorted(v)
    return f"±{100 * v[len(v) // 2]:.1f}%" if v else "—"
for part, groups in parts.items():
    print(f"== {part} (intervals from: {dict(bases[part])})")
    print(f"{'experiment':<12} {'cases':>5}  {'run to run':>10}  {'within-run CI':>13}"
          f"  {'half-widths (median): run to run, within-run':>44}")
    total = [0, 0, 0]
    for exp, (n, rr, ci) in sorted(groups.items()):
        w = widths[part][exp]
        print(f"{exp:<12} {n:>5}  {pct(rr, n):>10}  {pct(ci, n):>13}"
              f"  {half(w[0]):>34}, {half(w[1]):>8}")
        total = [total[0] + n, total[1] + rr, total[2] + ci]
    n, rr, ci = total
    every = [sum((widths[part][e][i] for e in groups), []) for i in (0, 1)]
    print(f"{'all':<12} {n:>5}  {pct(rr, n):>10}  {pct(ci, n):>13}"
          f"  {half(every[0]):>34}, {half(every[1]):>8}   ({rr} and {ci} of {n})")
EOF
