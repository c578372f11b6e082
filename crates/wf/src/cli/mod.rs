//! The `wf` command line: parses arguments and wires scan, jobs and report
//! together. No reading or computing happens here.
//!
//! Split like ripgrep's `flags/`: this file holds the commands (their clap types
//! and help texts) and the dispatch; [`args`] defines the input and scan
//! arguments once, for every command to flatten; [`job`] runs a scan job with
//! its progress bar, `--stats` and exit status; each command has its own file for
//! its arguments and runner ([`count`], [`wf2`], [`pangram`], [`feed`],
//! [`bench`], [`gen`], [`sql`]); [`output`] writes stdout.

mod args;
mod bench;
mod count;
mod feed;
mod follow;
mod gen;
mod job;
mod limits;
mod output;
mod pangram;
mod pending;
mod report;
#[cfg(feature = "sql")]
mod sql;
#[cfg(not(feature = "sql"))]
#[path = "no_sql.rs"]
mod sql;
mod state;
mod time;
mod wf2;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use self::bench::BenchArgs;
use self::count::CountArgs;
use self::feed::FeedArgs;
use self::gen::GenCmd;
use self::job::JobCmd;
use self::pangram::PangramArgs;
use self::report::ReportArgs;
use self::sql::SqlArgs;
use self::wf2::Wf2Args;

#[derive(Parser)]
#[command(
    name = "wf",
    version,
    about = "widefinder: read big text at the speed of the disk, on every core",
    long_about = "widefinder reads big text (one huge log, or thousands of files) as fast as the \
disk or the page cache can deliver it, splits it into record-aligned chunks, runs a job on \
every core and combines the results.\n\nExamples:\n  wf gen wf2 --size 1G -o access.log\n  \
wf count access.log\n  wf count -j 2 --stats logs/\n  find . -name '*.txt' | wf count --files-from -",
    after_help = "Sizes (--chunk-size, --ahead, --block, gen's --size, ...) are bytes or a number \
with a suffix, as dd reads them: K, M, G, T, P, E (or KiB, MiB, ...) are powers of 1024, KB, MB, \
GB, TB, PB, EB powers of 1000: 64M = 64MiB = 67108864 bytes, 1MB = 1000000.\n\n\
Exit status: 0 on success, 2 if any input could not be read (the rest is still processed) or on usage errors."
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Count records (lines), bytes and files, like `wc -l`, on all cores.
    #[command(
        long_about = "Count records (lines), bytes and files, like `wc -l` over everything named, \
but on all cores and inside single large files too. A final line without a newline counts.\n\n\
Output: `N records, N bytes, N files`; with --json exactly \
{\"records\": N, \"bytes\": N, \"files\": N} on one line.\n\n\
Examples:\n  wf count access.log\n  wf count --json -j 2 logs/\n  \
find /data -name '*.log' | wf count --files-from -\n  wf count <(zcat old.log.gz)",
        after_help = JOB_EXIT
    )]
    Count(CountArgs),
    /// The Wide Finder 2 report over Apache logs: top URIs, 404s, clients, referrers.
    #[command(
        long_about = "The Wide Finder 2 report (Tim Bray, 2008) over Apache combined logs: for GET \
lines, the top 10 article URIs by hits, URIs by bytes, 404s, client addresses and referrers, \
exactly as the 2008 reference computed them.\n\n\
Text output: `N resources, M 404s, K clients`, then the five lists. --json prints one object: \
{\"lines\", \"resources\", \"404s\", \"clients\", \"top\": {\"uri_hits\", \"uri_bytes\", \
\"404s\", \"clients\", \"referrers\"}}, each list [[key, value], ...], bytes in bytes. \
--stats adds the lines that were not GET lines and those with fewer than 6 fields.\n\n\
Examples:\n  wf wf2 access.log\n  wf wf2 --top 20 --json --stats logs/",
        after_help = JOB_EXIT
    )]
    Wf2(Wf2Args),
    /// The shortest stretches of text that hold all 26 letters (pangrammatic windows).
    #[command(
        long_about = "Find minimal pangrammatic windows: stretches of text, from a letter to a \
letter, holding all 26 letters A-Z (case folded) with no shorter such stretch inside. Windows \
never span two files. By default prints the 10 shortest: letters, path:offset, text, with each \
run of whitespace shown as one space and control bytes and invalid UTF-8 as \\xNN (as ripgrep \
shows them), so that no window can move the cursor or retitle the terminal.\n\n\
--json prints one object per line: {\"path\", \"offset\", \"bytes\", \"letters\", \"text\"}, \
with \"path_bytes\" (the exact bytes, an array of numbers) after a path that is not UTF-8.\n\n\
--chunk-size below 4K is taken as 4K: each chunk's edges carry a search state, and chunks of a \
few bytes made a 20 MB search take minutes.\n\n\
Examples:\n  wf pangram books/\n  wf pangram --all --max-letters 100 --json book.txt",
        after_help = JOB_EXIT
    )]
    Pangram(PangramArgs),
    /// The web-log dashboard of GoAccess: visitors, files, 404s, bots, browsers, statuses.
    #[command(long_about = REPORT_ABOUT, after_help = JOB_EXIT)]
    Report(ReportArgs),
    /// Feed record-aligned blocks to N worker processes of any command.
    #[command(
        long_about = "Split the inputs into blocks of whole records and feed them to N long-lived \
worker processes (any command: awk, perl, python...) on their stdin, each block to whichever \
worker is ready. Workers' output lines go to stdout (never mixed mid-line), or through one \
--combine process; a line longer than 1 MiB is passed on in pieces as it comes, and the other \
workers' output waits until it ends. An input's last record without a separator gets one \
(so records of two inputs never join); with --per-block a worker gets its block's bytes \
exactly, and --keep-order prints each block's output as the worker wrote it, one after the \
other (a last line without a newline runs on into the next block's, so that gzip -c blocks \
join into one valid stream; an output waiting for its turn is kept in memory up to 8 MiB, \
the rest in a temporary file, as GNU parallel keeps its). Each worker sees WF_WORKER (0..N-1) and WF_WORKERS, and is killed if wf dies. A file \
that shrinks while being fed (logrotate's copytruncate) gives workers only whole records \
read from it; the ranges no worker got are named on stderr.\n\nExamples:\n  wf feed -j 4 access.log -- wc -l\n  \
wf feed --combine 'python3 combine.py' logs/ -- python3 reduce.py\n  \
wf feed --per-block --keep-order big.txt -- sort\n  \
wf feed --since -1h --stats access.log -- wc -l   (the last hour: only its bytes are read)",
        after_help = "Exit status: 0 on success; 2 if any input could not be read, on usage errors, \
or if a worker failed (exited non-zero, died, or stopped before the end of its input: it is named \
on stderr with the input ranges it was given and the bytes it never read; a worker given no block, \
as GNU parallel starts no job for it, fails the run only if a signal killed it or input was left \
that no worker was fed); 128+N after signal N."
    )]
    Feed(FeedArgs),
    /// Time a job: cold and warm runs, thread sweeps, I/O figures and a plot.
    #[command(
        long_about = "Run a wf job in-process several times per setting and report wall time \
(min, median, max), MB/s, CPU, bytes read from storage, major faults and the input device's \
read rate, queue depth and utilisation. Cold runs first evict the inputs from the page cache \
with posix_fadvise (no root needed) and check the eviction with mincore.\n\nExample:\n  \
wf bench --cache both --threads 1,2,4,8 --runs 5 --plot wf2.svg -- wf2 access.log",
        after_help = JOB_EXIT
    )]
    Bench(BenchArgs),
    /// SQL over logs and delimited files (Apache DataFusion), on every core.
    #[command(long_about = sql::SQL_ABOUT, after_help = sql::SQL_EXIT)]
    Sql(SqlArgs),
    /// Generate test data.
    #[command(subcommand)]
    Gen(GenCmd),
}

const REPORT_ABOUT: &str = "The report GoAccess draws of a web server's access logs, on every \
core: the overview (requests, valid and failed lines, unique visitors, files, 404s, bytes, \
time span), then panels of rows with hits, visitors and bytes: visitors per day, requested \
files, static files and their extensions, 404 URLs, visitor hosts, operating systems and \
browsers with versions (uap-core's rules), crawlers and bots each named (GPTBot, ClaudeBot, \
Googlebot, ...), time of day, status codes (grouped, then each), referring sites and referrer \
URLs, virtual hosts where the format has them.\n\n\
A unique visitor is GoAccess's: the same client, day (in the log's own time zone) and user \
agent, counted over requests that were not answered 4xx; counts are exact, not estimates. \
Requests are keyed as GoAccess keys them (method, %-decoded URL, protocol), so the totals, \
status codes, requested files and visitors per day equal `goaccess --no-ip-validation`'s.\n\n\
Output: the overview and the top --top rows of each panel on stdout; --json the whole report \
(GoAccess's JSON shape: general, then per panel metadata and data rows of hits, visitors and \
bytes with count and percent, items under a group); -o FILE.html one self-contained page \
(charts and sortable, filterable tables; it loads nothing from any host), -o FILE.json the JSON \
(-o html and -o json print them on stdout, as GoAccess's; -o never names an input, and the \
report's own file met in a directory read for logs is left out). \
A line the format cannot read, or whose time, status or size is not one, is a failed line; \
--stats adds their offsets (the first few), and stderr says so when half the lines or more \
failed (a log read in another --format than its own); when every line of an input failed, the \
report is still made and wf exits 2, naming the input and its first failed line.\n\n\
Examples:\n  wf report access.log\n  wf report -o report.html /var/log/nginx/\n  \
wf report --bots only --top 20 access.log.gz\n  \
wf report --format vcombined other_vhosts_access.log\n  \
wf report --since -24h -o today.html access.log\n  \
wf report --state /var/lib/wf/report.state -o report.html access.log*\n  \
wf report --follow -o live.html /var/log/nginx/access.log   (rewritten every 2 s; the page reloads)\n  \
wf report --json -j 2 access.log | jq .general";

/// The exit statuses of the scan jobs, in their `--help`.
const JOB_EXIT: &str =
    "Exit status: 0 on success; 2 if any input could not be read (it is named on \
stderr and the rest is still processed) or on usage errors.";

impl Cmd {
    /// The scan job this command runs: count, wf2, pangram and report (what `wf bench`
    /// can measure).
    fn scan_job(&self) -> Option<&dyn JobCmd> {
        match self {
            Cmd::Count(a) => Some(a),
            Cmd::Wf2(a) => Some(a),
            Cmd::Pangram(a) => Some(a),
            Cmd::Report(a) => Some(a),
            Cmd::Feed(_) | Cmd::Bench(_) | Cmd::Gen(_) | Cmd::Sql(_) => None,
        }
    }
}

/// The command line with each argument of `wf sql` that starts with an SQL
/// line comment (`--` and a space or line break: no option is so named)
/// written after a line break, which the query's parser skips. Clap takes
/// an argument that starts with `-` for an option, and a QUERY that took
/// such values also took `-j1` for the query (`wf sql -j1 "SELECT ..."`);
/// a query read from a file (`"$(cat q.sql)"`, as `examples/sql/wf2.sql` is
/// run) often starts with a comment.
fn commented_queries(args: impl Iterator<Item = std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let mut args: Vec<std::ffi::OsString> = args.collect();
    if args.get(1).is_none_or(|a| a != "sql") {
        return args;
    }
    for a in &mut args[2..] {
        let b = a.as_encoded_bytes();
        if b.starts_with(b"--") && b.get(2).is_some_and(u8::is_ascii_whitespace) {
            let mut q = std::ffi::OsString::from("\n");
            q.push(&*a);
            *a = q;
        }
    }
    args
}

/// Parse the command line and run the command; usage errors exit 2, `--help`
/// and `--version` 0.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse_from(commented_queries(std::env::args_os())) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    match &cli.cmd {
        Cmd::Count(a) => a.run(),
        Cmd::Wf2(a) => a.run(),
        Cmd::Pangram(a) => job::run(a),
        Cmd::Report(a) => a.run(),
        Cmd::Feed(f) => feed::run(f),
        Cmd::Bench(b) => bench::run(b),
        Cmd::Gen(g) => gen::run(g),
        Cmd::Sql(q) => sql::run(q),
    }
}
