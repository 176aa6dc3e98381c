#!/usr/bin/env bash
# Side-by-side cross-check of fs.read's uncached random 4 KiB read and fs.contention's
# per-block latency against fio (randread, bs=4k, direct=1, iodepth=1, psync), in one
# directory: one sysmeter run, then fio per thread count (run it when the machine is quiet;
# a busy machine moves both tools by ±30%).
# Usage: scripts/crosscheck-fs.sh [DIR] [THREADS...]   (default: a temp dir under ., 1 2 4 8)
set -euo pipefail
bin=${SYSMETER:-$(cd "$(dirname "$0")/.." && pwd)/target/release/sysmeter}
[ -x "$bin" ] || { echo "build first: cargo build --release (or set SYSMETER=path)"; exit 1; }
command -v fio >/dev/null || { echo "skipped: fio is not installed (apt-get install fio)"; exit 0; }
dir=${1:-$(mktemp -d ./fs-crosscheck.XXXXXX)}
shift || true
threads=${*:-1 2 4 8}
mkdir -p "$dir/fio"
json=$(mktemp)
trap 'rm -rf "$dir/fio" "$json"' EXIT

fio_median_us() { # numjobs -> median completion latency in µs over all jobs
  fio --name=r --directory="$dir/fio" --rw=randread --bs=4k --direct=1 --iodepth=1 \
      --numjobs="$1" --size=64m --runtime=4 --time_based --group_reporting \
      --ioengine=psync --output-format=json 2>/dev/null |
    python3 -c 'import json,sys; j=json.load(sys.stdin)["jobs"][0]["read"]["clat_ns"]; print("%.1f" % (j["percentile"]["50.000000"]/1000))'
}

"$bin" bench --only fs.read,fs.contention --dir "$dir" --no-store --format json >"$json" 2>/dev/null
ours_median_us() { # metric name -> median in µs
  python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
for x in r["results"]:
    for m in x["metrics"]:
        if m["name"] == sys.argv[2]:
            print("%.1f" % (m["summary"]["median"] / 1000)); sys.exit(0)
print("nan")' "$json" "$1"
}

printf '%-34s %10s %12s %8s\n' "what" "fio µs" "sysmeter µs" "diff"
row() { python3 -c 'import sys; f,s=map(float,sys.argv[2:]); print("%-34s %10.1f %12.1f %+7.0f%%" % (sys.argv[1], f, s, (s/f-1)*100))' "$@"; }
f1=$(fio_median_us 1)
row "random 4 KiB, 1 reader (fs.read)" "$f1" "$(ours_median_us 'uncached random 4 KiB read, 128 MiB file')"
for n in $threads; do
  row "$n readers (fs.contention)" "$(fio_median_us "$n")" "$(ours_median_us "$n threads: 4 KiB read")"
done
