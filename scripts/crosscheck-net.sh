#!/usr/bin/env bash
# Side-by-side cross-check of the net group against ping and iperf3 over a veth pair into a
# network namespace this script creates (root only; removed on exit), alternating R rounds:
# net.rtt's ICMP and TCP round trips vs `ping`, net.bandwidth's single and 4-stream upload and
# download vs `iperf3` (-R for download, -P 4 for four streams).
# Usage: scripts/crosscheck-net.sh [ROUNDS]   (needs: apt-get install -y iperf3 iputils-ping iproute2)
set -euo pipefail
rounds=${1:-3}
bin=$(realpath "${SYSMETER:-target/release/sysmeter}")
for t in ip ping iperf3; do
  command -v "$t" >/dev/null || { echo "skipped: $t is not installed"; exit 0; }
done
[ "$(id -u)" = 0 ] || { echo "skipped: needs root for the network namespace"; exit 0; }
ns=smx$$; a=smxa$$; b=smxb$$; here=10.213.251.1; there=10.213.251.2
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -INT "$p" 2>/dev/null || true; done
  sleep 0.5; ip link del "$a" 2>/dev/null || true; ip netns del "$ns" 2>/dev/null || true
}
trap cleanup EXIT
ip netns add "$ns"; ip link add "$a" type veth peer name "$b"; ip link set "$b" netns "$ns"
ip addr add "$here/30" dev "$a"; ip link set "$a" up
ip netns exec "$ns" ip addr add "$there/30" dev "$b"
ip netns exec "$ns" ip link set "$b" up; ip netns exec "$ns" ip link set lo up
ip netns exec "$ns" "$bin" serve --bind "$there:7388" --no-token >/dev/null 2>&1 & pids+=($!)
ip netns exec "$ns" iperf3 -s -p 5201 >/dev/null 2>&1 & pids+=($!)
sleep 0.5
gbs() { python3 -c 'import json,sys; print("%.2f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"]/8e9))'; }
for r in $(seq 1 "$rounds"); do
  # ping's summary has no median: take it from the per-reply times.
  ping_med=$(ping -c 200 -i 0.002 "$there" | awk -F'time=' '/time=/ {split($2,x," "); print x[1]}' \
    | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]*1000}')
  up1=$(iperf3 -c "$there" -t 2 -J | gbs); down1=$(iperf3 -c "$there" -t 2 -R -J | gbs)
  up4=$(iperf3 -c "$there" -t 2 -P 4 -J | gbs); down4=$(iperf3 -c "$there" -t 2 -P 4 -R -J | gbs)
  ours=$("$bin" bench net --no-store --format json --remote "$there" 2>/dev/null | python3 -c '
import json, sys
r = json.load(sys.stdin)
d = {m["name"]: m["summary"]["median"] for x in r["results"] for m in x["metrics"]}
print("%.1f %.1f %.2f %.2f %.2f %.2f" % (d["ICMP echo round trip"]/1e3, d["TCP round trip 1 B"]/1e3,
      d["upload 1 stream"]/1e9, d["download 1 stream"]/1e9, d["upload 4 streams"]/1e9, d["download 4 streams"]/1e9))')
  read -r icmp tcp u1 d1 u4 d4 <<<"$ours"
  printf 'round %d | ICMP µs ping %6.1f sysmeter %6.1f (TCP 1 B %6.1f) | GB/s up 1: iperf3 %5.2f sysmeter %5.2f | down 1: %5.2f %5.2f | up 4: %5.2f %5.2f | down 4: %5.2f %5.2f\n' \
    "$r" "$ping_med" "$icmp" "$tcp" "$up1" "$u1" "$down1" "$d1" "$up4" "$u4" "$down4" "$d4"
done
