#!/usr/bin/env bash
# False alarms of `compare` between identical runs (issue 12).
#
#   scripts/compare-pairs.sh [PAIRS] [BENCH ARGS...]
#   (default: 10 pairs of `bench --quick --only cpu.call,cpu.ops,os.syscall`)
#   HISTORY=N scripts/compare-pairs.sh ...  store N runs first as the machine's history
#                                           (default 10; 0 for none)
#   KEEP=1 scripts/compare-pairs.sh ...     keep the runs (the directory is printed)
#   scripts/compare-pairs.sh --again DIR    compare the kept runs of DIR again (after a change
#                                           of `compare`, on the very same measurements)
#
# Every run is stored in a database of its own (DIR/runs.db), as `bench` stores into the
# default one. HISTORY runs are measured first; then each pair A, B is measured and compared
# by run id, so the comparison sees the runs stored before it — the history a user who runs
# `bench` regularly has — and uses their between-run spread (docs/compare.md, "History").
# Each pair is also compared with --no-history (the runs alone). With --again every pair is
# compared against the database as it is at the end (the later pairs included).
#
# Nothing changed between A and B but the machine, so every verdict other than "no change"
# is a false alarm. Prints per pair and in total the share of metric comparisons whose
# verdict is not "no change": raw (the runs alone, samples as measured), as judged on the
# runs alone (normalised by the machine-state probe where the machine moved beyond the
# threshold; "machine slower/faster; no change after normalising" counts as no change), and
# as judged with the history, and the machine speed ratio of each pair. Verdicts put down to
# a core shared more on one side (machine_busier/quieter, docs/compare.md) are counted
# apart: neither a false alarm nor "no change".
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${BIN:-target/release/sysmeter}
[ -x "$bin" ] || cargo build --release --locked >&2
id_of() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$1"; }
compare_pair() { # DIR I: compare pair I with and without the history in DIR/runs.db
    local a b
    a=$(id_of "$1/$2a.json"); b=$(id_of "$1/$2b.json")
    "$bin" compare --db "$1/runs.db" "$a" "$b" --format json > "$1/$2.cmp.json" || true
    "$bin" compare --db "$1/runs.db" --no-history "$a" "$b" --format json > "$1/$2.alone.json" || true
}
if [ "${1:-}" = --again ]; then
    dir=${2:?usage: scripts/compare-pairs.sh --again DIR}
    pairs=$(find "$dir" -name '*a.json' | wc -l)
    for i in $(seq 1 "$pairs"); do compare_pair "$dir" "$i"; done
else
    pairs=${1:-10}
    shift || true
    args=("$@")
    [ ${#args[@]} -gt 0 ] || args=(--quick --only cpu.call,cpu.ops,os.syscall)
    dir=$(mktemp -d)
    trap '[ -n "${KEEP:-}" ] && echo "kept $dir" >&2 || rm -rf "$dir"' EXIT
    for _ in $(seq 1 "${HISTORY:-10}"); do
        "$bin" bench --db "$dir/runs.db" --format json "${args[@]}" > /dev/null 2>&1
    done
    for i in $(seq 1 "$pairs"); do
        for side in a b; do
            "$bin" bench --db "$dir/runs.db" --format json "${args[@]}" > "$dir/$i$side.json" 2>/dev/null
        done
        compare_pair "$dir" "$i"
    done
fi
python3 - "$dir" "$pairs" <<'PY'
import json, sys
d, n = sys.argv[1], int(sys.argv[2])
NO_CHANGE = {"no_change", "machine_slower", "machine_faster"}
NOT_JUDGED = {"machine_busier", "machine_quieter"}

def counts(path):
    c = json.load(open(path))
    ms = [m for m in c["metrics"] if m.get("comparison")]
    raw = sum(1 for m in ms if m["comparison"]["verdict"] != "no_change")
    verdicts = [m.get("verdict", m["comparison"]["verdict"]) for m in ms]
    judged = sum(1 for v in verdicts if v not in NO_CHANGE | NOT_JUDGED)
    shared = sum(1 for v in verdicts if v in NOT_JUDGED)
    noise = sum(1 for m in ms if m.get("run_noise_a") or m.get("run_noise_b"))
    return len(ms), raw, judged, shared, noise, c.get("machine_ratio")

tot = raw_bad = alone_bad = hist_bad = not_judged = 0
for i in range(1, n + 1):
    total, raw, alone, shared, _, ratio = counts(f"{d}/{i}.alone.json")
    _, _, hist, shared_h, noise, _ = counts(f"{d}/{i}.cmp.json")
    tot += total; raw_bad += raw; alone_bad += alone; hist_bad += hist; not_judged += shared_h
    r = "n/a" if ratio is None else f"{ratio:.3f}"
    print(f"pair {i:2}: machine B/A {r}; {total} metrics; raw not-no-change {raw:2}; "
          f"judged on the runs alone {alone:2}; with history {hist:2} "
          f"({noise} metrics with a history); core shared {shared_h:2}")
pct = lambda k: f"{k} ({100 * k / max(tot, 1):.1f}%)"
print(f"total: {tot} comparisons; raw verdict not 'no change': {pct(raw_bad)}; "
      f"judged on the runs alone (normalised where the machine moved): {pct(alone_bad)}; "
      f"judged with the stored history: {pct(hist_bad)}; "
      f"not judged because one side's core was shared (machine_busier/quieter): {pct(not_judged)}")
PY
