#!/usr/bin/env bash
# False alarms of `compare` between identical runs (issue 12).
#
#   scripts/compare-pairs.sh [PAIRS] [BENCH ARGS...]
#   (default: 10 pairs of `bench --quick --only cpu.call,cpu.ops,os.syscall`)
#   KEEP=1 scripts/compare-pairs.sh ...     keep the runs (the directory is printed)
#   scripts/compare-pairs.sh --again DIR    compare the kept runs of DIR again (after a change
#                                           of `compare`, on the very same measurements)
#
# Runs PAIRS pairs of identical benches back to back and compares each pair. Nothing changed
# between A and B but the machine, so every verdict other than "no change" is a false alarm.
# Prints per pair and in total the share of metric comparisons whose verdict is not "no
# change": raw (the samples as measured) and as judged (normalised by the machine-state
# probe where the machine moved beyond the threshold; "machine slower/faster; no change
# after normalising" counts as no change), and the machine speed ratio of each pair. Verdicts
# put down to a core shared more on one side (machine_busier/quieter, docs/compare.md) are
# counted apart: neither a false alarm nor "no change".
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${BIN:-target/release/sysmeter}
[ -x "$bin" ] || cargo build --release --locked >&2
if [ "${1:-}" = --again ]; then
    dir=${2:?usage: scripts/compare-pairs.sh --again DIR}
    pairs=$(find "$dir" -name '*a.json' | wc -l)
else
    pairs=${1:-10}
    shift || true
    args=("$@")
    [ ${#args[@]} -gt 0 ] || args=(--quick --only cpu.call,cpu.ops,os.syscall)
    dir=$(mktemp -d)
    trap '[ -n "${KEEP:-}" ] && echo "kept $dir" >&2 || rm -rf "$dir"' EXIT
    for i in $(seq 1 "$pairs"); do
        for side in a b; do
            "$bin" bench --no-store --format json "${args[@]}" > "$dir/$i$side.json" 2>/dev/null
        done
    done
fi
for i in $(seq 1 "$pairs"); do
    "$bin" compare "$dir/${i}a.json" "$dir/${i}b.json" --format json > "$dir/$i.cmp.json" || true
done
python3 - "$dir" "$pairs" <<'PY'
import json, sys
d, n = sys.argv[1], int(sys.argv[2])
NO_CHANGE = {"no_change", "machine_slower", "machine_faster"}
NOT_JUDGED = {"machine_busier", "machine_quieter"}
tot = raw_bad = judged_bad = not_judged = 0
for i in range(1, n + 1):
    c = json.load(open(f"{d}/{i}.cmp.json"))
    ms = [m for m in c["metrics"] if m.get("comparison")]
    raw = sum(1 for m in ms if m["comparison"]["verdict"] != "no_change")
    verdicts = [m.get("verdict", m["comparison"]["verdict"]) for m in ms]
    judged = sum(1 for v in verdicts if v not in NO_CHANGE | NOT_JUDGED)
    shared = sum(1 for v in verdicts if v in NOT_JUDGED)
    not_judged += shared
    ratio = c.get("machine_ratio")
    tot += len(ms); raw_bad += raw; judged_bad += judged
    r = "n/a" if ratio is None else f"{ratio:.3f}"
    print(f"pair {i:2}: machine B/A {r}; {len(ms)} metrics; raw not-no-change {raw:2}; judged {judged:2}; not judged (core shared) {shared:2}")
print(f"total: {tot} comparisons; raw verdict not 'no change': {raw_bad} ({100*raw_bad/max(tot,1):.1f}%); "
      f"judged (normalised where the machine moved): {judged_bad} ({100*judged_bad/max(tot,1):.1f}%); "
      f"not judged because one side's core was shared (machine_busier/quieter): {not_judged} ({100*not_judged/max(tot,1):.1f}%)")
PY
