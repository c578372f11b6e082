use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Subcommand;

use wf_core::scan;

/// The generators of `wf gen`.
#[derive(Subcommand)]
pub(crate) enum GenCmd {
    /// Apache combined log lines shaped like the Wide Finder 2 data.
    #[command(
        long_about = "Apache combined log lines shaped like the Wide Finder 2 data (Tim Bray's \
blog): article URIs /ongoing/When/200x/YYYY/MM/DD/Slug and static files with skewed popularity, \
many clients, referrers, statuses 200/304/301/404/403/206/500. The same seed gives the same \
bytes. \
--odd-lines mixes in malformed lines: short, empty, tabs, leading spaces, invalid UTF-8 and \
very long lines.\n\nExamples:\n  wf gen wf2 --size 1G -o access.log\n  \
wf gen wf2 --size 100M --seed 7 --odd-lines 0.01 | wf wf2 --stats\n  \
wf gen wf2 --size 1G --days 30 -o month.log"
    )]
    Wf2 {
        /// Approximate size to write, e.g. 100M or 1G (K, M, G, T: x1024; KB, MB,
        /// GB, TB: x1000, so 1GB = 1000000000).
        #[arg(long, default_value = "100M", value_parser = scan::parse_size)]
        size: u64,
        /// Random seed: the same seed gives the same bytes.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Fraction of malformed lines to mix in (0 to 1).
        #[arg(long, default_value_t = 0.0, value_name = "FRACTION")]
        odd_lines: f64,
        /// Spread the lines' times evenly over N days from 2007-06-17 00:00 -0700
        /// (the last line about N days after the first), instead of the hourly
        /// pattern of the real log (about 4.4 hours per 4096 lines). For
        /// --since/--until and `WHERE time >= ...` tests, e.g. `wf gen wf2 --size
        /// 1G --days 30 -o month.log`.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100_000))]
        days: Option<u32>,
        /// Write to FILE instead of standard output.
        #[arg(short = 'o', long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// One Billion Row Challenge style data: `station;temperature` lines.
    #[command(
        name = "1brc",
        long_about = "One Billion Row Challenge style data: `station;temperature` lines, one \
decimal, temperatures in [-99.9, 99.9], station names of 4 to 38 bytes (some UTF-8), drawn with \
a mild skew. About 19 bytes a row: 56 million rows make 1 GiB. The same seed gives the same \
bytes.\n\nExamples:\n  wf gen 1brc --rows 1000000 -o m.txt\n  \
wf sql --format csv --delimiter ';' --no-header --schema 'station:string,t:float' \\\n    \
'SELECT station, min(t), avg(t), max(t) FROM logs GROUP BY station ORDER BY station' m.txt"
    )]
    Onebrc {
        /// Rows to write.
        #[arg(long, value_name = "N")]
        rows: u64,
        /// Distinct stations, 1 to 1000000 (their names are held in memory).
        #[arg(long, value_name = "K", default_value = "413", value_parser = super::limits::stations)]
        stations: usize,
        /// Random seed: the same seed gives the same bytes.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Write to FILE instead of standard output.
        #[arg(short = 'o', long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
}

/// `wf gen`: write the data; a closed pipe (`wf gen ... | head`) is not an error.
pub(crate) fn run(g: &GenCmd) -> ExitCode {
    let res = match g {
        GenCmd::Wf2 {
            size,
            seed,
            odd_lines,
            days,
            output,
        } => {
            if !(0.0..=1.0).contains(odd_lines) {
                wf_core::warn!("wf: --odd-lines must be between 0 and 1");
                return ExitCode::from(2);
            }
            write_to(output.as_deref(), |w| {
                wf_core::gen::wf2_days(w, *size, *seed, *odd_lines, *days)
            })
        }
        GenCmd::Onebrc {
            rows,
            stations,
            seed,
            output,
        } => write_to(output.as_deref(), |w| {
            wf_core::gen::onebrc::write(w, *rows, *stations, *seed)
        }),
    };
    match res {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            let output = match g {
                GenCmd::Wf2 { output, .. } | GenCmd::Onebrc { output, .. } => output,
            };
            // Name what failed: the output file (creating or writing it), or stdout.
            let to = output
                .as_deref()
                .map_or("<stdout>".into(), |p| p.display().to_string());
            wf_core::warn!("wf: gen: {to}: {}", scan::io_message(&e));
            ExitCode::from(2)
        }
    }
}

/// Run a generator on a 1 MiB buffer in front of `output` (a new file, gzip or
/// zstd compressed when its name ends in `.gz` or `.zst`) or stdout, and flush
/// it; returns what the generator returned.
fn write_to(
    output: Option<&Path>,
    generate: impl FnOnce(&mut dyn Write) -> io::Result<u64>,
) -> io::Result<u64> {
    let ext = output.and_then(|p| p.extension()).and_then(|e| e.to_str());
    let out: Box<dyn Write> = match output {
        Some(p) => Box::new(std::fs::File::create(p)?),
        None => Box::new(io::stdout().lock()),
    };
    let n = match ext {
        Some("gz") => {
            let mut z = flate2::write::GzEncoder::new(out, flate2::Compression::default());
            let n = buffered(&mut z, generate)?;
            z.finish()?;
            n
        }
        Some("zst") => {
            let mut z = zstd::stream::write::Encoder::new(out, 3)?;
            let n = buffered(&mut z, generate)?;
            z.finish()?;
            n
        }
        _ => buffered(out, generate)?,
    };
    Ok(n)
}

fn buffered(
    out: impl Write,
    generate: impl FnOnce(&mut dyn Write) -> io::Result<u64>,
) -> io::Result<u64> {
    let mut w = io::BufWriter::with_capacity(1 << 20, out);
    let n = generate(&mut w)?;
    w.flush()?;
    Ok(n)
}
