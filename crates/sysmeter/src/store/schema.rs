//! What the two backends' schemas share, written once: the tables of schema 1 and the
//! columns schemas 2 and 3 added (`sqlite/schema.rs` and `pg/schema.rs` list the migrations
//! and add what is their own). Schema 1 names the types that differ between the dialects
//! by placeholders ([`PLACEHOLDERS`]), which each backend fills with its [`Types`] when it
//! migrates. SQLite's filled text is the one its databases were always created with (SQLite
//! keeps a table's `CREATE` text as written).
//!
//! Never edit a migration that has shipped: a change to these tables is a new migration.

/// The placeholders of schema 1: `{int}` integers (ns, bytes, counts), `{real}` the
/// statistics, `{flag}` the 0/1 flag `interrupted`, `{json}` the host and config
/// descriptions, `{bytes}` the raw samples, `{strict}` what follows a table's closing
/// parenthesis.
const PLACEHOLDERS: [&str; 6] = ["{int}", "{real}", "{flag}", "{json}", "{bytes}", "{strict}"];

/// One dialect's words for the [`PLACEHOLDERS`], in their order.
pub(super) struct Types(pub [&'static str; 6]);

impl Types {
    /// Migration `sql` with its placeholders filled (a migration without any is unchanged).
    pub(super) fn fill(&self, sql: &str) -> String {
        (PLACEHOLDERS.iter().zip(self.0)).fold(sql.to_string(), |sql, (placeholder, word)| {
            sql.replace(placeholder, word)
        })
    }
}

/// Schema 1's tables: runs, results, metrics. A macro rather than a constant, so that each
/// backend's migration 1 can `concat!` its own statements to them.
macro_rules! tables_1 {
    () => {
        "
CREATE TABLE runs (
    id           TEXT PRIMARY KEY NOT NULL,
    schema       {int} NOT NULL,
    kind         TEXT NOT NULL,
    started_ns   {int} NOT NULL,
    finished_ns  {int},
    interrupted  {flag} NOT NULL,
    tool_version TEXT NOT NULL,
    hostname     TEXT NOT NULL,
    host_json    {json} NOT NULL,
    config_json  {json} NOT NULL
){strict};
CREATE INDEX runs_by_start ON runs(started_ns);

CREATE TABLE results (
    run_id         TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    seq            {int} NOT NULL,
    exp_id         TEXT NOT NULL,
    status         TEXT NOT NULL,
    elapsed_ns     {int} NOT NULL,
    about_json     TEXT NOT NULL,
    estimates_json TEXT NOT NULL,
    series_json    TEXT NOT NULL,
    findings_json  TEXT NOT NULL,
    skip_json      TEXT,
    error          TEXT,
    PRIMARY KEY (run_id, seq)
){strict};
-- history and compare look up one experiment across runs.
CREATE INDEX results_by_exp ON results(exp_id);

-- Statistics columns are nullable: a NaN (e.g. the cv of a zero mean) is stored as NULL, as
-- SQLite must, so aggregates behave the same on both backends.
CREATE TABLE metrics (
    run_id                 TEXT NOT NULL,
    seq                    {int} NOT NULL,
    idx                    {int} NOT NULL,
    name                   TEXT NOT NULL,
    unit                   TEXT NOT NULL,
    n                      {int} NOT NULL,
    min                    {real},
    p5                     {real},
    median                 {real},
    mean                   {real},
    p95                    {real},
    p99                    {real},
    max                    {real},
    stddev                 {real},
    cv                     {real},
    ci_lo                  {real},
    ci_hi                  {real},
    outliers               {int} NOT NULL,
    cycles_json            TEXT,
    subtracted_overhead_ns {real},
    ops_per_sample         {int} NOT NULL,
    note                   TEXT,
    samples                {bytes} NOT NULL,
    PRIMARY KEY (run_id, seq, idx),
    FOREIGN KEY (run_id, seq) REFERENCES results(run_id, seq) ON DELETE CASCADE
){strict};
"
    };
}
pub(super) use tables_1;

/// The migrations a backend writes its own way; [`Migrations::all`] puts them in order with
/// the ones written here, so both backends have the same numbers.
pub(super) struct Migrations {
    /// Schema 1: [`tables_1`] and the backend's own statements.
    pub tables: &'static str,
    /// Schema 4: a result stored as its summary (`store/summary.rs`).
    pub summary: &'static str,
    /// Schema 5: PostgreSQL's fleet tables (`pg/fleet_schema.rs`).
    pub fleet: &'static str,
    /// Schema 6: when the store received each run (`runs.received_ns`, filled by the
    /// database's own clock; see [`crate::store::retention`]).
    pub received: &'static str,
}

impl Migrations {
    /// Every migration, in order: migration `i` (from 0) brings a database from schema
    /// version `i` to `i + 1`, so the number of them is the version this build writes.
    pub(super) const fn all(&self) -> [&'static str; 6] {
        [
            self.tables,
            MIGRATION_2,
            MIGRATION_3,
            self.summary,
            self.fleet,
            self.received,
        ]
    }
}

/// Schema 2: non-numeric outputs of a result (folded stacks, flame graphs) as JSON.
const MIGRATION_2: &str = "
ALTER TABLE results ADD COLUMN artifacts_json TEXT NOT NULL DEFAULT '[]';
";

/// Schema 3: the machine's state around each result (`machine_json`: the probe at start and
/// end, what else ran, per round with `--rounds`) and what a metric gained (`extra_json`:
/// core cycles, round medians). Both JSON text, NULL when absent.
const MIGRATION_3: &str = "
ALTER TABLE results ADD COLUMN machine_json TEXT;
ALTER TABLE metrics ADD COLUMN extra_json TEXT;
";
