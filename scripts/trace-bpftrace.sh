#!/bin/sh
# `trace` against bpftrace on dd bs=1 (issue 26): interleaved rounds of each tool on the
# workload and on `true`, so that each tool's start-up is taken out: in-workload overhead =
# (tool on dd − tool on true) − (dd − true), per system call of dd. Also prints the read and
# write counts of `strace -c`, `sysmeter trace` and bpftrace, which must be equal.
# Needs root, bpftrace, strace. Usage:
#   scripts/trace-bpftrace.sh [path/to/sysmeter] [count, 200000] [rounds, 5]
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$here/target/release/sysmeter}
count=${2:-200000}
rounds=${3:-5}
dd="$(command -v dd) if=/dev/zero of=/dev/null bs=1 count=$count"
work=$(mktemp -d /var/tmp/trace-bt.XXXXXX)
trap 'rm -rf "$work"' EXIT
ms() { s=$(date +%s%N); "$@" >"$work/out" 2>&1; e=$(date +%s%N); echo $(((e - s) / 1000)); }
calls() { sed -n "s/^@calls\[$1\]: //p" "$work/out"; }
for r in $(seq "$rounds"); do
    a=$(ms $dd); b=$(ms true)
    c=$(ms "$bin" trace --backend tracepoint --no-store -- $dd); d=$(ms "$bin" trace --backend tracepoint --no-store -- true)
    e=$(ms bpftrace "$here/scripts/trace-syscalls.bt" -c "$dd")
    reads=$(calls 0); writes=$(calls 1)
    f=$(ms bpftrace "$here/scripts/trace-syscalls.bt" -c true)
    echo "round $r (µs): dd $a, true $b; sysmeter dd $c, true $d; bpftrace dd $e, true $f;" \
        "in-workload overhead sysmeter $((c - d - a + b)), bpftrace $((e - f - a + b));" \
        "bpftrace read $reads write $writes"
done
strace -c -f -o "$work/strace" $dd 2>/dev/null
echo "strace -c: $(awk '$NF == "read" || $NF == "write" { print $NF, $4 }' "$work/strace" | tr '\n' ' ')"
"$bin" trace --backend tracepoint --no-store --format json --out "$work/t.json" -- $dd 2>/dev/null
python3 - "$work/t.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
for m in r["metrics"]:
    if m["name"].split()[0] in ("read", "write"):
        print("sysmeter trace:", m["name"], m["summary"]["n"], (m.get("note") or "")[:60])
PY
