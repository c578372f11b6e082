//! `wf sql`: the query's arguments, its tables (`logs` from the inputs, more
//! from `--table`), and the run: progress bar, result, input errors, `--stats`,
//! `--strict` and the exit status. The work is in `wf_sql`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use clap::Args;

use wf_core::report;
use wf_core::report::stats::{RunStats, Usage};
use wf_core::scan::{self, InputError, Progress};

use super::args::ScanArgs;
use super::job::with_progress;

pub(crate) const SQL_ABOUT: &str =
    "Run a SQL query (Apache DataFusion's dialect: filters, GROUP BY, \
count/sum/min/max/avg, approx_percentile_cont, approx_distinct, count(DISTINCT), window \
functions, date_trunc/date_bin, regexp_like/regexp_replace, joins) over the inputs as the table \
`logs`. wf cuts the inputs into record-aligned chunks and parses them on every core, building \
only the columns the query uses.

Formats (--format, default auto: detected from the first lines, said on stderr; a .csv or .tsv \
file of one column is CSV too):
  combined   Apache/nginx default. Columns: client, ident, user, time (UTC timestamp, zone \
offset applied), method, path, protocol, request, status (int), bytes (int, NULL for -), \
referrer, user_agent
  common     the same without referrer and user_agent
  vcombined  vhost:port first: vhost, port, then the combined columns
  vcommon    vhost:port first, then the common columns (GoAccess's VCOMMON)
  nginx-main nginx's default `main`: the combined columns, then http_x_forwarded_for
  combinedio Apache's (mod_logio): the combined columns, then bytes_received, bytes_sent (%I %O)
  apache:'FORMAT'  an Apache LogFormat string, e.g. apache:'%h %l %u %t \"%r\" %>s %b %D'; \
%D, %T, %b, %B, %O, %I become integer columns (duration_us, duration_s, bytes, ...), \
%{Header}i a column named after the header (x_forwarded_for); a time of its own layout, %{%Y-%m-%d %H:%M:%S}t (strftime; with %z an instant, without, the server's time read as UTC) or %{sec}t, %{msec}t, %{usec}t, is the time column; backslash escapes (\\\" \\t) are \
read as httpd.conf and nginx.conf read them, so a format copied from either works
  nginx:'FORMAT'   an nginx log_format string, e.g. nginx:'$remote_addr [$time_local] \
\"$request\" $status $body_bytes_sent $request_time'; $request_time and \
$upstream_*_time are float columns, $status, $body_bytes_sent, $bytes_sent integers; \
$msec is the time column when the format has no $time_local or $time_iso8601
  csv, tsv   RFC 4180 (quoted fields may hold the delimiter, \"\" and line breaks); a quote \
inside an unquoted field is data, as DuckDB and Python's csv read it (1,x\"y,3 is 1, x\"y, 3); \
a quote that opens a field and never closes it makes its line one malformed record; a file \
whose sampled lines split evenly only without quoting (a TSV of \"Hello\" she said) is read \
without it, as DuckDB's sniffer reads it (the format's name says so). An empty \
field is NULL, but \"\" in a text column is the empty string (as polars reads it; DuckDB's \
default makes it NULL, allow_quoted_nulls=false the empty string). Columns \
from the header line (files with other headers are matched by name, NULL where a file lacks \
a column, as DuckDB's union_by_name), or c1..cN with --no-header; a name used twice becomes \
a, a_1. Types inferred from the first 1000 records (a column with no value there: up to \
20,480 lines, DuckDB's sample, then the later files' if those lines were the whole first file; \
int, float, timestamp, bool, string; numbers may have spaces around them, floats be NaN or \
inf; a zero-padded or signed number, 02134 or +7, is a string, as DuckDB infers it; integers \
beyond 64 bits are decimal(38,0), exact, their sums too, beyond 38 digits an error): a \
later value that does not fit stops the query, naming file, line and value, as in DuckDB; or \
given with --schema 'name:type,...' (a value that does not fit is NULL, counted by --stats; \
--strict makes it an error), where decimal(P,S) is exact fixed point (sums and averages the \
same at every -j, unlike float)
  jsonl      one JSON object per line; top-level keys are columns, nested values JSON text; \
a number column with integers beyond 2^53 is decimal(38,0), or text if it has fractions too \
(a float would round them; --stats says so); the columns are the keys of the first 1000 \
records of each of the first 32 files: a key first seen later is not read, and stderr says \
so (--schema names them all)
  logfmt     key=value key2=\"quoted value\" records; keys are columns, types inferred (keys \
first seen after 1000 records as in jsonl)
  fields     runs of whitespace, like awk: columns c1..cN (text unless --schema)
  regex:'RE' named captures (?P<name>...) are text columns; lines that do not match are \
malformed (the slow escape hatch)
Every table also has _file (the input's name), _offset (byte offset of the record) and _line \
(line number of its first line, from 1; a query that uses it reads each file on one core), to \
find the raw record behind a row.

A time range on the log's own time (the `time` column of the Apache and nginx formats; \
`time`, `timestamp`, `@timestamp` or `ts` of JSON lines and logfmt) compared with constants, \
as `time >= X`, `time < X`, `BETWEEN` (X: TIMESTAMP '2026-11-27T10:00:00Z', \
'2026-11-27T10:00Z'::timestamp, now() - INTERVAL '1 hour'), reads only the part of each file \
that can hold it, found by binary search as `wf count --since` finds it (5 minutes of slack \
for records written late), a BGZF or multi-frame zstd file by block (_offset as in a whole \
read); streams, single-member gzip, zstd without frame content sizes and out-of-order files are \
read whole. \
EXPLAIN and --stats show the byte spans; WF_TIME_PUSHDOWN=0 turns it off.

Lines that do not parse are not rows: stderr says how many (one line, --stats or not), --stats \
locates the first few (by byte offset); --strict makes them an error, and so are values not of \
their column's type and invalid UTF-8: the query stops at the first, naming its file, line and \
value. When no more lines parse than not, or a table has as many bad values as rows, stderr asks \
whether --format is the files' format (a log read in another format than its own).

Examples:
  wf sql 'SELECT status, count(*) AS n FROM logs GROUP BY status ORDER BY n DESC' access.log
  wf sql \"SELECT date_trunc('hour', time) AS hour, count(*) FROM logs GROUP BY 1 ORDER BY 1\" logs/
  wf sql 'SELECT path, approx_percentile_cont(bytes, 0.99) FROM logs GROUP BY path' access.log
  wf sql \"SELECT path, count(*) FROM logs WHERE time >= now() - INTERVAL '1 hour' GROUP BY 1\" access.log
  wf sql --format csv --delimiter ';' --no-header --schema 'station:string,t:decimal(3,1)' \\
    'SELECT station, min(t), avg(t), max(t) FROM logs GROUP BY station ORDER BY station' m.txt
  wf sql 'SELECT * FROM logs' access.log -o access.parquet
  wf sql --table users=users.csv --format users=csv \\
    'SELECT u.name, count(*) FROM logs l JOIN users u ON l.user = u.login GROUP BY 1' access.log";

pub(crate) const SQL_EXIT: &str =
    "Output: an aligned table; --csv or --json (one object per line) \
for machines; -o FILE writes Parquet, Arrow IPC, CSV, TSV or JSON lines by its extension \
(.parquet, .arrow, .csv, .tsv, .jsonl), through a temporary file beside FILE renamed onto it only \
when the query succeeds (a failed or interrupted query leaves FILE as it was); FILE may not be \
one of the inputs. The table shows the first --max-rows rows (40) and counts the rest.\n\n\
Queries are read-only: COPY, INSERT, CREATE and SET need --allow-write.\n\nExit status: 0 on success; 2 on SQL errors (DataFusion's \
message, with the columns when one is unknown), usage errors, unreadable inputs (named on \
stderr; the rest is processed), or malformed lines with --strict.";

#[derive(Args)]
pub(crate) struct SqlArgs {
    /// The query; the inputs are the table `logs`. One that starts with a
    /// `--` comment (`"$(cat q.sql)"`) is read as the query too
    /// (`cli::commented_queries`).
    #[arg(value_name = "QUERY")]
    query: String,
    #[command(flatten)]
    scan: ScanArgs,
    /// Input format [default: auto]; NAME=FORMAT sets the format of table NAME.
    #[arg(long, value_name = "FORMAT")]
    format: Vec<String>,
    /// Another table for joins: NAME=PATH (repeat to add paths or tables).
    #[arg(long, value_name = "NAME=PATH")]
    table: Vec<String>,
    /// CSV/TSV field delimiter: one character, or `\t` (or `tab`) for a tab,
    /// as DuckDB's delim takes it. With `--format auto` it makes an input
    /// that is no web log or JSON lines CSV split at it.
    #[arg(long, value_name = "C")]
    delimiter: Option<String>,
    /// CSV/TSV: the first line is data; columns are c1..cN.
    #[arg(long)]
    no_header: bool,
    /// Column names and types instead of the inferred ones: 'name:type,...'
    /// (string, int, float, decimal(P,S), timestamp, bool). A decimal's sums and
    /// averages are exact, the same at every -j; a float's may differ in the last
    /// digits.
    #[arg(long, value_name = "SPEC")]
    schema: Option<String>,
    /// Print CSV (with a header line).
    #[arg(long, conflicts_with = "json")]
    csv: bool,
    /// Write the result to FILE (.parquet, .arrow, .csv, .tsv, .jsonl) instead of stdout.
    #[arg(short = 'o', long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Memory for the query (e.g. 256M, 4G); beyond it aggregations and sorts
    /// spill to --temp-dir, each thread's within its share (an eighth of the
    /// limit is kept for what cannot spill, such as the top rows of a LIMIT).
    /// The least a query runs in: about 16M per thread (-j) for an ORDER BY of
    /// whole log lines (30M at -j 2); for a GROUP BY it grows with the groups
    /// (700,000 groups under ORDER BY n DESC LIMIT 5: 50M-100M at -j 1 and -j 2);
    /// below that it fails with "Resources exhausted" and says so [default: no
    /// limit].
    /// Example: wf sql --memory 200M -j 2 'SELECT * FROM logs ORDER BY path' a.log
    #[arg(long, value_name = "SIZE", value_parser = scan::parse_size)]
    memory: Option<u64>,
    /// Directory for spill files [default: the system's temporary directory].
    #[arg(long, value_name = "DIR")]
    temp_dir: Option<PathBuf>,
    /// Malformed lines, values not of their column's type and invalid UTF-8
    /// are an error (exit status 2) naming the first one's file, line and
    /// value, and then nothing is printed or written: with -o FILE, FILE is
    /// left as it was; CSV and JSON for stdout are held in a temporary file
    /// until the whole input is read.
    #[arg(long)]
    strict: bool,
    /// Rows the aligned table shows (the rest are counted, not held); 0 shows
    /// all (held in memory). --csv, --json and -o always give every row.
    /// Example: wf sql --max-rows 0 'SELECT * FROM logs' small.log
    #[arg(long, value_name = "N", default_value_t = wf_sql::output::MAX_ROWS)]
    max_rows: usize,
    /// Let the query write: COPY ... TO, INSERT, CREATE EXTERNAL TABLE, SET
    /// (refused by default; -o FILE writes a result without it).
    /// Example: wf sql --allow-write "COPY (SELECT * FROM logs) TO 'x.csv'" a.log
    #[arg(long)]
    allow_write: bool,
    /// How much earlier than a record before it a record may be, for a WHERE
    /// on the log's time (which reads only the bytes of its window): the
    /// search reads this much more on each side, and a file found more out
    /// of order is read whole; records at the ends of the bytes it would
    /// read (32 MiB each) that go back further have the files searched
    /// again with twice the farthest jump back, then read whole (said on
    /// stderr); `--disorder 10000w` reads every file whole. Not checked: a
    /// lone record out of place just outside those bytes, and the ends of
    /// BGZF and zstd files searched by block. Example: wf sql --disorder 30m
    /// "SELECT count(*) FROM logs WHERE time >= now() - INTERVAL '1 hour'"
    /// access.log
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = super::time::duration)]
    disorder: i64,
}

/// The tables of a query: `logs` from the inputs, then each `--table`, with
/// their `--format`s.
fn sql_tables(q: &SqlArgs) -> Result<(Vec<wf_sql::TableSpec>, Vec<InputError>), String> {
    let mut names: Vec<(String, Vec<PathBuf>)> = Vec::new();
    for t in &q.table {
        let (n, p) = wf_sql::TableSpec::parse(t).map_err(|e| e.to_string())?;
        match names.iter_mut().find(|(x, _)| *x == n) {
            Some((_, ps)) => ps.push(p),
            None => names.push((n, vec![p])),
        }
    }
    let mut default = "auto".to_string();
    let mut per_table: Vec<(String, String)> = Vec::new();
    for f in &q.format {
        match f.split_once('=') {
            Some((n, spec)) if n == "logs" || names.iter().any(|(x, _)| x == n) => {
                per_table.push((n.to_string(), spec.to_string()))
            }
            _ => default = f.clone(),
        }
    }
    let format_of = |n: &str| {
        per_table
            .iter()
            .rev()
            .find(|(x, _)| x == n)
            .map_or(default.clone(), |(_, s)| s.clone())
    };
    let mut errors = Vec::new();
    let mut specs = Vec::new();
    // The `-o` file met in a directory walked for inputs is an input, and
    // refused as one named is (`refuse_input`): left out, a file that was
    // a real input lost its rows from the answer and then its bytes.
    let logs = q.scan.input.collect();
    errors.extend(logs.errors);
    specs.push(wf_sql::TableSpec {
        name: "logs".into(),
        format: format_of("logs"),
        inputs: logs.inputs,
    });
    for (n, paths) in names {
        let c = scan::InputSpec {
            paths,
            files_from: None,
            follow_links: q.scan.input.follow,
            decompress: q.scan.input.decompress,
        }
        .collect();
        errors.extend(c.errors);
        specs.push(wf_sql::TableSpec {
            format: format_of(&n),
            name: n,
            inputs: c.inputs,
        });
    }
    Ok((specs, errors))
}

fn sql_options(q: &SqlArgs) -> Result<wf_sql::SqlOptions, String> {
    let format = wf_formats::FormatOptions::parse(
        q.delimiter.as_deref(),
        q.no_header,
        q.schema.as_deref(),
        q.strict,
    )
    .map_err(|e| e.to_string())?;
    Ok(wf_sql::SqlOptions {
        memory: q.memory,
        temp_dir: q.temp_dir.clone(),
        allow_write: q.allow_write,
        strict: q.strict,
        disorder: Some(q.disorder),
        ..wf_sql::SqlOptions::new(q.scan.options_within(q.memory), format)
    })
}

/// `wf sql`: run the query, print the result, report and exit.
pub(crate) fn run(q: &SqlArgs) -> ExitCode {
    let t0 = Instant::now();
    let u0 = Usage::now();
    let prepared = sql_tables(q).and_then(|t| Ok((t, sql_options(q)?)));
    let ((tables, mut errors), opts) = match prepared {
        Ok(p) => p,
        Err(e) => return fail(&e),
    };
    if q.memory.is_none() {
        wf_sql::memory::reuse_freed_memory();
    }
    if let Err(e) = wf_sql::cleanup::on_signals() {
        wf_core::warn!("wf sql: signal handlers: {e}");
    }
    let progress = Arc::new(Progress::default());
    let show = report::stats::want_progress(q.scan.progress, q.scan.no_progress);
    let result = with_progress(show, &progress, || {
        wf_sql::run(
            &q.query,
            tables,
            &opts,
            &output(q),
            Some(progress.clone()),
            &mut |n| wf_core::warn!("wf sql: {n}"),
        )
    });
    let runs = match result {
        Ok(r) => r,
        Err(e) => {
            errors.iter().for_each(|e| wf_core::warn!("wf: {e}"));
            return fail(&e.to_string());
        }
    };
    errors.extend(wf_sql::errors(&runs));
    errors.extend(runs.iter().flat_map(wf_sql::unread));
    for e in &errors {
        wf_core::warn!("wf: {e}");
    }
    for w in runs.iter().flat_map(wf_sql::warnings) {
        wf_core::warn!("wf sql: {w}");
    }
    if q.scan.stats {
        let bytes = runs.iter().map(|r| r.report.lock().unwrap().bytes).sum();
        let mut st = RunStats::between(&u0, &Usage::now(), t0.elapsed(), bytes, opts.scan.threads);
        for r in &runs {
            st.decoded.compressed += r.decoded.compressed;
            st.decoded.decoded += r.decoded.decoded;
            st.decoded.seconds += r.decoded.seconds;
        }
        wf_core::report::warn::text(&st.text());
        runs.iter()
            .for_each(|r| wf_core::report::warn::text(&wf_sql::stats_text(r)));
    }
    if let Some(why) = wf_sql::strict_failure(&runs).filter(|_| q.strict) {
        return fail(&why);
    }
    if errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    }
}

fn fail(msg: &str) -> ExitCode {
    wf_core::warn!("wf sql: {msg}");
    ExitCode::from(2)
}

/// Where the rows go: `-o FILE`, `--csv`, `--json` or an aligned table.
fn output(q: &SqlArgs) -> wf_sql::Output {
    match (&q.output, q.csv, q.scan.json) {
        (Some(p), _, _) => wf_sql::Output::File(p.clone()),
        (None, true, _) => wf_sql::Output::Csv,
        (None, _, true) => wf_sql::Output::Json,
        _ => wf_sql::Output::Table {
            max_rows: q.max_rows,
        },
    }
}
