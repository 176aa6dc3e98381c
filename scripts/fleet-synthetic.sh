#!/usr/bin/env bash
# A synthetic fleet for scale tests (docs/fleet.md, "Measured at 10 000 hosts"): N hosts made
# from ONE real run record, in a PostgreSQL fleet store.
#
#   scripts/fleet-synthetic.sh RUN.json N postgres://USER@HOST:PORT/DB [SYSMETER]
#
# The record is imported once with `sysmeter import` (stored as its summary, the fleet
# store's default), then copied N times in SQL, on the server: host `synth-00001` … with its
# own run id and start, one of four CPU models and three kernels, and every metric's median
# jittered by up to ±3% (deterministic in the host and metric number). Every host numbered 7
# modulo 1000 is on kernel 6.11.0-9-generic and twice as slow in every `os.syscall` metric:
# `sysmeter fleet` must find exactly those. The copies share the template's compressed
# summary (what `show` prints of them is the template's statistics); their medians, which
# are what `fleet` reads, are their own. The template run is deleted at the end. The
# database's triggers (schema 5) fill each host's row of numbers in `fleet_host` as the copies
# are inserted, as they do for `import`.
#
# Needs psql. Prints the rows, the bytes per run (pg_total_relation_size of the three
# tables and the fleet tables, indexes and TOAST included, over the number of runs) and the
# time taken.
set -euo pipefail

if [ $# -lt 3 ]; then
    echo "usage: $0 RUN.json N postgres://USER@HOST:PORT/DB [SYSMETER]" >&2
    exit 2
fi
record=$1 n=$2 url=$3 sysmeter=${4:-sysmeter}
[[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] || { echo "error: N must be a whole number ≥ 1, not $n" >&2; exit 2; }
command -v psql >/dev/null || { echo "error: psql not found; install postgresql-client" >&2; exit 2; }

template=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$record")
"$sysmeter" import --db "$url" "$record" >/dev/null
start=$(date +%s.%N)
psql -v ON_ERROR_STOP=1 -q -X "$url" -v n="$n" -v template="$template" <<'SQL'
BEGIN;
CREATE TEMP TABLE synth AS
SELECT g,
       t.id || '-s' || lpad(g::text, 5, '0') AS id,
       'synth-' || lpad(g::text, 5, '0') AS hostname,
       g % 1000 = 7 AS slow
FROM runs t, generate_series(1, :n) g
WHERE t.id = :'template';

INSERT INTO runs (id, schema, kind, started_ns, finished_ns, interrupted, tool_version,
                  hostname, host_json, config_json)
SELECT s.id, t.schema, t.kind, t.started_ns + s.g, t.finished_ns, t.interrupted,
       t.tool_version, s.hostname,
       jsonb_set(jsonb_set(jsonb_set(t.host_json,
           '{hostname}', to_jsonb(s.hostname)),
           '{cpu,model}', to_jsonb((ARRAY['Intel(R) Xeon(R) Gold 6338', 'Intel(R) Xeon(R) Gold 6438',
                                          'AMD EPYC 7B13 64-Core Processor',
                                          'AMD EPYC 9654 96-Core Processor'])[1 + s.g % 4])),
           '{kernel}', to_jsonb(CASE WHEN s.slow THEN '6.11.0-9-generic'
                                     ELSE (ARRAY['6.8.0-45-generic', '6.8.0-49-generic',
                                                 '6.1.0-26-amd64'])[1 + s.g % 3] END)),
       t.config_json
FROM synth s, runs t
WHERE t.id = :'template';

INSERT INTO results (run_id, seq, exp_id, status, elapsed_ns, about_json, estimates_json,
                     series_json, findings_json, skip_json, error, artifacts_json,
                     machine_json, summary, metric_names, metric_units, medians)
SELECT s.id, x.seq, x.exp_id, x.status, x.elapsed_ns, x.about_json, x.estimates_json,
       x.series_json, x.findings_json, x.skip_json, x.error, x.artifacts_json,
       x.machine_json, x.summary, x.metric_names, x.metric_units,
       (SELECT array_agg(u.v * (1 + 0.03 * sin(s.g * 12.9898 + x.seq * 7.233 + u.k * 78.233))
                             * CASE WHEN s.slow AND x.exp_id = 'os.syscall' THEN 2 ELSE 1 END
                         ORDER BY u.k)
        FROM unnest(x.medians) WITH ORDINALITY AS u(v, k))
FROM synth s, results x
WHERE x.run_id = :'template';

DELETE FROM runs WHERE id = :'template';
COMMIT;
ANALYZE runs;
ANALYZE results;
-- Each host's row was written twice (its run, then its results): what autovacuum would do.
VACUUM ANALYZE fleet_host;
SQL
end=$(date +%s.%N)
psql -q -X -At "$url" <<'SQL'
SELECT format('%s runs, %s results, %s metrics rows, %s hosts; %s bytes per run (runs %s, results %s, metrics %s, fleet tables %s)',
              (SELECT count(*) FROM runs), (SELECT count(*) FROM results),
              (SELECT count(*) FROM metrics), (SELECT count(*) FROM fleet_host),
              (pg_total_relation_size('runs') + pg_total_relation_size('results')
               + pg_total_relation_size('metrics') + pg_total_relation_size('fleet_host')
               + pg_total_relation_size('fleet_metric'))
                  / greatest((SELECT count(*) FROM runs), 1),
              pg_size_pretty(pg_total_relation_size('runs')),
              pg_size_pretty(pg_total_relation_size('results')),
              pg_size_pretty(pg_total_relation_size('metrics')),
              pg_size_pretty(pg_total_relation_size('fleet_host')
                             + pg_total_relation_size('fleet_metric')));
SQL
echo "generated $n hosts in $(python3 -c "print(f'{$end - $start:.1f}')") s"
