//! The PostgreSQL statements of `sysmeter fleet` (run by `pg/fleet.rs` and `pg/reduce.rs`),
//! kept apart from the backend so docs/fleet.md is checked against them in every build: the
//! table `vals` of every host's values, read from `metrics` rows and from the arrays of a
//! result stored as its summary; the spread; the fleet reduced on the server for more than
//! `ROLL_CALL_HOSTS` hosts from schema 5's `fleet_host` and `fleet_metric`; the hosts without
//! their description.

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

/// How many hosts have a latest bench run since `$1` (schema 5's `fleet_host`).
pub const FLEET_COUNT_SQL: &str = "SELECT count(*) FROM fleet_host WHERE started_ns >= $1";

/// One statement, two kinds of rows: kind 0 a metric's spread (`hostname` NULL; its columns
/// from `exp_id` to `p90` in the order of `PG_SPREAD_SQL`'s), kind 1 a chosen host value
/// with its percentile and whether the rule calls it an outlier.
/// `$1` earliest start (ns), `$2` fewest hosts, `$3` MAD → SD factor, `$4` least factor,
/// `$5` least robust SDs.
///
/// It reads schema 5's `fleet_host` rows, each host's values indexed by metric number
/// (`pg/fleet_schema.rs`): stacked into one matrix (host × metric, padded with NaN, which
/// stands for "no value"), whose column k is metric k's values over the hosts — a slice,
/// without a row per value or a text key. Per metric (experiment and name; a metric stored
/// under two units has two columns, as the old `vals` table grouped them together) the
/// median, p10, p90 and the least and greatest value come from one sort. The robust
/// deviation is computed only for metrics whose least or greatest value lies beyond the
/// factor from the median (`1e-9` below it, for rounding): elsewhere no value can be an
/// outlier. Percentiles are placed by a binary search (`width_bucket`) in the sorted values
/// of the metrics with an outlier. A host is its row `hx` in the matrix.
pub const REDUCED_SQL: &str = "
WITH hosts AS MATERIALIZED (
    SELECT hostname, vs FROM fleet_host WHERE started_ns >= $1
), matrix AS MATERIALIZED (
    SELECT array_agg(h.vs || array_fill('NaN'::float8, ARRAY[w.w - cardinality(h.vs)])) AS m,
           array_agg(h.hostname) AS names, count(*)::int AS n, min(w.w) AS w
    FROM hosts h, (SELECT greatest(max(cardinality(vs)), 1) AS w FROM hosts) w
), dims AS MATERIALIZED (
    SELECT n, w FROM matrix
), hostnames AS MATERIALIZED (
    SELECT h.hostname, h.hx FROM matrix x, unnest(x.names) WITH ORDINALITY AS h (hostname, hx)
), cols AS MATERIALIZED (
    SELECT f.exp_id, f.name, f.unit, x.m[1:x.n][f.metric:f.metric] AS col
    FROM matrix x JOIN fleet_metric f ON f.metric <= x.w
), grouped AS MATERIALIZED (
    SELECT exp_id, name, min(unit) FILTER (WHERE 'NaN' <> ANY (col)) AS unit,
           array_agg(col) AS vs
    FROM cols GROUP BY exp_id, name
), spread AS MATERIALIZED (
    SELECT g.exp_id, g.name, g.unit, g.vs, q.n, q.p[1] AS median, q.p[2] AS p10,
           q.p[3] AS p90, q.p[4] AS lo, q.p[5] AS hi
    FROM grouped g CROSS JOIN LATERAL (
        SELECT count(*) AS n,
               percentile_cont(ARRAY[0.5, 0.1, 0.9, 0, 1]) WITHIN GROUP (ORDER BY v) AS p
        FROM unnest(g.vs) AS v WHERE v <> 'NaN'
    ) q
    WHERE q.n > 0
), sd AS MATERIALIZED (
    SELECT s.exp_id, s.name, $3 * (
        SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY abs(ln(v / s.median)))
        FROM unnest(s.vs) AS v WHERE v > 0 AND v <> 'NaN') AS sd
    FROM spread s
    WHERE s.median > 0 AND s.n >= $2
      AND CASE WHEN s.lo <= 0 THEN true
               ELSE greatest(abs(ln(s.lo / s.median)), abs(ln(s.hi / s.median))) > ln($4) - 1e-9
          END
), outliers AS MATERIALIZED (
    SELECT s.exp_id, s.name, (u.i - 1) % x.n + 1 AS hx, u.v
    FROM dims x, spread s
    JOIN sd ON sd.exp_id = s.exp_id AND sd.name = s.name
    CROSS JOIN LATERAL unnest(s.vs) WITH ORDINALITY AS u (v, i)
    WHERE CASE WHEN u.v > 0 AND u.v <> 'NaN'
               THEN abs(ln(u.v / s.median)) > ln($4) AND abs(ln(u.v / s.median)) > $5 * sd.sd
               ELSE false END
), ranked AS MATERIALIZED (
    SELECT s.exp_id, s.name, s.n, s.unit, s.median, s.vs,
           (SELECT array_agg(v ORDER BY v) FROM unnest(s.vs) AS v WHERE v <> 'NaN') AS sorted
    FROM spread s
    WHERE (s.exp_id, s.name) IN (SELECT exp_id, name FROM outliers)
), typical AS MATERIALIZED (
    SELECT DISTINCT ON (t.exp_id, t.name) t.exp_id, t.name, t.hx, t.v
    FROM (
        SELECT r.exp_id, r.name, (u.i - 1) % x.n + 1 AS hx, u.v,
               rank() OVER (PARTITION BY r.exp_id, r.name ORDER BY abs(u.v - r.median)) AS near
        FROM dims x, ranked r
        CROSS JOIN LATERAL unnest(r.vs) WITH ORDINALITY AS u (v, i)
        WHERE u.v <> 'NaN' AND NOT EXISTS (
            SELECT 1 FROM outliers o
            WHERE o.exp_id = r.exp_id AND o.name = r.name AND o.hx = (u.i - 1) % x.n + 1)
    ) t
    JOIN hostnames h ON h.hx = t.hx
    WHERE t.near = 1
    ORDER BY t.exp_id, t.name, h.hostname
), chosen AS (
    SELECT exp_id, name, hx, v, true AS outlier FROM outliers
    UNION ALL
    SELECT exp_id, name, hx, v, false FROM typical
), placed AS (
    SELECT h.hostname, c.exp_id, c.name,
           c.outlier, r.unit, r.n, c.v, b.below, width_bucket(c.v, r.sorted) - b.below AS equal
    FROM chosen c
    JOIN hostnames h ON h.hx = c.hx
    JOIN ranked r ON r.exp_id = c.exp_id AND r.name = c.name
    CROSS JOIN LATERAL (SELECT (array_position(r.sorted, c.v) - 1)::bigint AS below) b
)
SELECT 0 AS kind, exp_id, name, unit, n, median, p10, p90, NULL::text AS hostname,
       NULL::float8 AS percentile, NULL::boolean AS outlier
FROM spread
UNION ALL
SELECT 1, exp_id, name, unit, n, v, NULL, NULL, hostname,
       CASE WHEN n < 2 THEN 50.0
            ELSE 100.0 * (below + (equal - 1) / 2.0) / (n - 1) END,
       outlier
FROM placed";

/// Each host's name, run, start, CPU model and kernel, from `fleet_host`.
pub const LIGHT_HOSTS_SQL: &str = "SELECT hostname, run_id, started_ns, cpu_model, kernel
FROM fleet_host
WHERE started_ns >= $1";

/// The hosts `$2` with their whole description (`HOSTS_SQL` through `fleet_host`).
pub const CHOSEN_HOSTS_SQL: &str =
    "SELECT h.hostname, h.run_id, h.started_ns, CAST(r.host_json AS TEXT)
FROM fleet_host h
JOIN runs r ON r.id = h.run_id
WHERE h.started_ns >= $1 AND h.hostname = ANY ($2)";
