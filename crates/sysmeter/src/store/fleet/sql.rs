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

/// One statement, two kinds of rows: kind 0 a metric's spread (`hostname` NULL), kind 1 a
/// chosen host value with its percentile and whether the rule calls it an outlier.
/// `$1` earliest start (ns), `$2` fewest hosts, `$3` MAD → SD factor, `$4` least factor,
/// `$5` least robust SDs.
pub const REDUCED_SQL: &str = "
, spread AS (
    SELECT exp_id, name, min(unit) AS unit, count(*) AS n,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY v) AS median,
           percentile_cont(0.1) WITHIN GROUP (ORDER BY v) AS p10,
           percentile_cont(0.9) WITHIN GROUP (ORDER BY v) AS p90
    FROM vals GROUP BY exp_id, name
), judged AS (
    SELECT v.hostname, v.exp_id, v.name, abs(ln(v.v / s.median)) AS d
    FROM vals v JOIN spread s ON s.exp_id = v.exp_id AND s.name = v.name
    WHERE v.v > 0 AND s.median > 0 AND s.n >= $2
), sd AS (
    SELECT exp_id, name, $3 * percentile_cont(0.5) WITHIN GROUP (ORDER BY d) AS sd
    FROM judged GROUP BY exp_id, name
), outliers AS (
    SELECT j.hostname, j.exp_id, j.name
    FROM judged j JOIN sd ON sd.exp_id = j.exp_id AND sd.name = j.name
    WHERE j.d > ln($4) AND j.d > $5 * sd.sd
), typical AS (
    SELECT DISTINCT ON (v.exp_id, v.name) v.hostname, v.exp_id, v.name
    FROM vals v JOIN spread s ON s.exp_id = v.exp_id AND s.name = v.name
    WHERE (v.exp_id, v.name) IN (SELECT exp_id, name FROM outliers)
      AND (v.hostname, v.exp_id, v.name) NOT IN (SELECT hostname, exp_id, name FROM outliers)
    ORDER BY v.exp_id, v.name, abs(v.v - s.median), v.hostname
), chosen AS (
    SELECT hostname, exp_id, name, true AS outlier FROM outliers
    UNION ALL
    SELECT hostname, exp_id, name, false FROM typical
), placed AS (
    SELECT c.hostname, c.exp_id, c.name, c.outlier, cv.unit, cv.v,
           count(*) FILTER (WHERE v.v < cv.v) AS below,
           count(*) FILTER (WHERE v.v = cv.v) AS equal,
           count(*) AS n
    FROM chosen c
    JOIN vals cv ON cv.hostname = c.hostname AND cv.exp_id = c.exp_id AND cv.name = c.name
    JOIN vals v ON v.exp_id = c.exp_id AND v.name = c.name
    GROUP BY c.hostname, c.exp_id, c.name, c.outlier, cv.unit, cv.v
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
