//! The PostgreSQL statements of `sysmeter fleet` (run by `pg/fleet.rs` and `pg/reduce.rs`),
//! kept apart from the backend so docs/fleet.md is checked against them in every build: the
//! table `vals` of every host's values, read from `metrics` rows and from the arrays of a
//! result stored as its summary; the spread; the fleet reduced on the server for more than
//! `ROLL_CALL_HOSTS` hosts; the hosts without their description.

/// Every host's value of every metric, as the table `vals` (hostname, exp_id, name, unit,
/// v): from the `metrics` rows of a result stored whole, from the arrays of one stored as
/// its summary (schema 4). Follows `LATEST_RUNS_SQL`.
pub const VALS_SQL: &str = "
, vals AS MATERIALIZED (
    SELECT l.hostname, x.exp_id, m.name, m.unit, m.median AS v
    FROM latest l
    JOIN results x ON x.run_id = l.id AND x.status = 'ok'
    JOIN metrics m ON m.run_id = x.run_id AND m.seq = x.seq
    WHERE m.median IS NOT NULL
    UNION ALL
    SELECT l.hostname, x.exp_id, u.name, u.unit, u.v
    FROM latest l
    JOIN results x ON x.run_id = l.id AND x.status = 'ok' AND x.medians IS NOT NULL
    CROSS JOIN LATERAL unnest(x.metric_names, x.metric_units, x.medians) AS u(name, unit, v)
    WHERE u.v IS NOT NULL
)";

/// The values of `VALS_SQL` (the fleet's values on PostgreSQL, `VALUES_SQL` elsewhere).
pub const PG_VALUES_SQL: &str = "
SELECT hostname, exp_id, name, unit, v FROM vals";

/// The fleet's median, p10 and p90 of every metric, with its unit and host count.
pub const PG_SPREAD_SQL: &str = "
SELECT exp_id, name, min(unit), count(*),
       percentile_cont(0.5) WITHIN GROUP (ORDER BY v),
       percentile_cont(0.1) WITHIN GROUP (ORDER BY v),
       percentile_cont(0.9) WITHIN GROUP (ORDER BY v)
FROM vals GROUP BY exp_id, name";

/// The values of a large fleet for [`REDUCED_SQL`]: as [`VALS_SQL`], with each host as a
/// number `hn` (its row in `numbered`) instead of its name, which is cheaper to gather by
/// the million. Follows `LATEST_RUNS_SQL`.
pub const NUMBERED_VALS_SQL: &str = "
, numbered AS MATERIALIZED (
    SELECT row_number() OVER (ORDER BY hostname)::int AS hn, id, hostname FROM latest
), vals AS MATERIALIZED (
    SELECT l.hn, x.exp_id, m.name, m.unit, m.median AS v
    FROM numbered l
    JOIN results x ON x.run_id = l.id AND x.status = 'ok'
    JOIN metrics m ON m.run_id = x.run_id AND m.seq = x.seq
    WHERE m.median IS NOT NULL
    UNION ALL
    SELECT l.hn, x.exp_id, u.name, u.unit, u.v
    FROM numbered l
    JOIN results x ON x.run_id = l.id AND x.status = 'ok' AND x.medians IS NOT NULL
    CROSS JOIN LATERAL unnest(x.metric_names, x.metric_units, x.medians) AS u(name, unit, v)
    WHERE u.v IS NOT NULL
)";

/// One statement, two kinds of rows: kind 0 a metric's spread (`hostname` NULL), kind 1 a
/// chosen host value with its percentile and whether the rule calls it an outlier.
/// `$1` earliest start (ns), `$2` fewest hosts, `$3` MAD → SD factor, `$4` least factor,
/// `$5` least robust SDs. Follows `NUMBERED_VALS_SQL`. The values are gathered into one array per
/// metric (a hash aggregate: no sort of millions of rows by name), and every statistic is
/// taken over those arrays.
pub const REDUCED_SQL: &str = "
, grouped AS MATERIALIZED (
    SELECT exp_id, name, min(unit) AS unit, array_agg(v) AS vs, array_agg(hn) AS hs
    FROM vals GROUP BY exp_id, name
), spread AS MATERIALIZED (
    SELECT g.exp_id, g.name, g.unit, cardinality(g.vs)::bigint AS n, q.median, q.p10, q.p90,
           g.vs, g.hs
    FROM grouped g CROSS JOIN LATERAL (
        SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) AS median,
               percentile_cont(0.1) WITHIN GROUP (ORDER BY x) AS p10,
               percentile_cont(0.9) WITHIN GROUP (ORDER BY x) AS p90
        FROM unnest(g.vs) AS x) q
), sd AS MATERIALIZED (
    SELECT s.exp_id, s.name, $3 * (
        SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY abs(ln(x / s.median)))
        FROM unnest(s.vs) AS x WHERE x > 0) AS sd
    FROM spread s
    WHERE s.median > 0 AND s.n >= $2
), outliers AS MATERIALIZED (
    SELECT u.h AS hostname, s.exp_id, s.name
    FROM spread s
    JOIN sd ON sd.exp_id = s.exp_id AND sd.name = s.name
    CROSS JOIN LATERAL unnest(s.vs, s.hs) AS u(v, h)
    WHERE u.v > 0 AND abs(ln(u.v / s.median)) > ln($4)
      AND abs(ln(u.v / s.median)) > $5 * sd.sd
), typical AS MATERIALIZED (
    SELECT DISTINCT ON (s.exp_id, s.name) u.h AS hostname, s.exp_id, s.name
    FROM spread s
    CROSS JOIN LATERAL unnest(s.vs, s.hs) AS u(v, h)
    WHERE (s.exp_id, s.name) IN (SELECT exp_id, name FROM outliers)
      AND (u.h, s.exp_id, s.name) NOT IN (SELECT hostname, exp_id, name FROM outliers)
    ORDER BY s.exp_id, s.name, abs(u.v - s.median), u.h
), chosen AS (
    SELECT hostname AS hn, exp_id, name, true AS outlier FROM outliers
    UNION ALL
    SELECT hostname, exp_id, name, false FROM typical
), placed AS (
    SELECT (SELECT hostname FROM numbered WHERE numbered.hn = c.hn) AS hostname, c.exp_id, c.name, c.outlier, s.unit, s.n, own.v,
           (SELECT count(*) FROM unnest(s.vs) AS x WHERE x < own.v) AS below,
           (SELECT count(*) FROM unnest(s.vs) AS x WHERE x = own.v) AS equal
    FROM chosen c
    JOIN spread s ON s.exp_id = c.exp_id AND s.name = c.name
    CROSS JOIN LATERAL (
        SELECT u.v FROM unnest(s.vs, s.hs) AS u(v, h) WHERE u.h = c.hn LIMIT 1
    ) own
)
SELECT 0 AS kind, exp_id, name, unit, NULL::text AS hostname, median, p10, p90, n,
       NULL::float8 AS percentile, NULL::boolean AS outlier
FROM spread
UNION ALL
SELECT 1, exp_id, name, unit, hostname, v, NULL, NULL, n,
       CASE WHEN n < 2 THEN 50.0
            ELSE 100.0 * (below + (equal - 1) / 2.0) / (n - 1) END,
       outlier
FROM placed";

/// Each host's name, run, start, CPU model and kernel, read from the JSONB description
/// without decoding it.
pub const LIGHT_HOSTS_SQL: &str = "SELECT hostname, id, started_ns,
       coalesce(host_json->'cpu'->>'model', ''), coalesce(host_json->>'kernel', '')
FROM latest";
