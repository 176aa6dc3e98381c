#!/usr/bin/env bash
# Side-by-side cross-check of ipc.tcp against established tools, alternating R rounds so that
# both see the same machine load:
#  - 1-byte TCP loopback round trip vs `sockperf ping-pong --tcp --full-rtt -m 14` (median,
#    14 B is sockperf's smallest message), client and server on the same CPU and on two CPUs;
#  - TCP loopback streaming bandwidth vs `iperf3` single stream (128 KiB writes, its default
#    for TCP), unpinned, and pinned like ours: both on CPU 1, and writer on 1 with reader on 0.
# Usage: scripts/crosscheck-ipc.sh [ROUNDS]   (needs: apt-get install -y sockperf iperf3)
set -euo pipefail
rounds=${1:-3}
bin=${SYSMETER:-target/release/sysmeter}
for t in sockperf iperf3; do
  command -v "$t" >/dev/null || { echo "skipped: $t is not installed (apt-get install -y $t)"; exit 0; }
done
port=11111; iport=5299
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
sockperf_med() { # client-cpu server-cpu -> median full RTT in µs
  taskset -c "$2" sockperf sr --tcp -i 127.0.0.1 -p $port >/dev/null 2>&1 & local s=$!
  sleep 0.5
  taskset -c "$1" sockperf pp --tcp -i 127.0.0.1 -p $port -t 3 -m 14 --full-rtt 2>&1 \
    | awk '/percentile 50.000/ {print $NF}'
  kill $s 2>/dev/null; wait $s 2>/dev/null || true
}
iperf_bw() { # extra args -> Gbit/s of the receiver
  iperf3 -s -p $iport -1 >/dev/null 2>&1 & local s=$!
  sleep 0.5
  iperf3 -c 127.0.0.1 -p $iport -t 3 -J "$@" | python3 -c '
import json,sys; print("%.2f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"]/8e9))'
  wait $s 2>/dev/null || true
}
for r in $(seq 1 "$rounds"); do
  sp_same=$(sockperf_med 1 1)
  sp_cross=$(sockperf_med 1 0)
  ip_free=$(iperf_bw)
  ip_same=$(iperf_bw -A 1,1)
  ip_cross=$(iperf_bw -A 1,0)
  ours=$("$bin" bench --only ipc.tcp --cpu 1 --no-store --format json 2>/dev/null | python3 -c '
import json, sys
r = json.load(sys.stdin)
d = {m["name"]: m["summary"]["median"] for x in r["results"] for m in x["metrics"]}
print("%.1f %.1f %.2f %.2f" % (d["round trip 1 B, same CPU"]/1e3, d["round trip 1 B, cross CPU"]/1e3,
      d["bandwidth, reader same CPU"]/1e9, d["bandwidth, reader cross CPU"]/1e9))')
  read -r s_same s_cross s_bw s_bwx <<<"$ours"
  printf 'round %d | RTT µs same CPU: sockperf %6.1f sysmeter %6.1f | cross CPU: sockperf %6.1f sysmeter %6.1f | GB/s iperf3 unpinned %5.2f, same CPU %5.2f sysmeter %5.2f, cross CPU %5.2f sysmeter %5.2f\n' \
    "$r" "$sp_same" "$s_same" "$sp_cross" "$s_cross" "$ip_free" "$ip_same" "$s_bw" "$ip_cross" "$s_bwx"
done
