#!/usr/bin/env bash
# Renders every stored run of a database in every output format of every read-only command,
# one file each, so two builds can be compared byte for byte:
#   scripts/output-snapshot.sh OLD_BIN DB out-old; scripts/output-snapshot.sh NEW_BIN DB out-new
#   diff -r out-old out-new
# Used for the redesign (issue 11), whose outputs had to stay the same.
set -euo pipefail
bin=$1 db=$2 out=$3
mkdir -p "$out"
export NO_COLOR=1
"$bin" list > "$out/list.txt"
"$bin" list --format json > "$out/list.json"
"$bin" history --db "$db" --format json > "$out/history.json"
"$bin" history --db "$db" | sed 's/^.*run(s)/N run(s)/' > "$out/history.txt"
ids=$("$bin" history --db "$db" --format json | python3 -c 'import json,sys; [print(r["id"]) for r in json.load(sys.stdin)]')
prev=""
for id in $ids; do
    for f in text json csv markdown; do
        "$bin" show "$id" --db "$db" --format "$f" > "$out/show-$id.$f"
    done
    "$bin" report "$id" --db "$db" --html "$out/report-$id.html" --markdown "$out/report-$id.md"
    "$bin" export "$id" --db "$db" --openmetrics > "$out/export-$id.prom"
    for f in json csv; do
        "$bin" export "$id" --db "$db" --format "$f" > "$out/export-$id.$f"
    done
    if [ -n "$prev" ]; then
        for f in text json markdown; do
            "$bin" compare "$prev" "$id" --db "$db" --format "$f" > "$out/compare-$prev-$id.$f" || true
        done
    fi
    prev=$id
done
ls "$out" | wc -l
