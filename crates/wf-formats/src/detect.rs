//! `--format auto`: look at the first lines of the first input and take the
//! first format that reads them all (at most one odd line in twenty), in this
//! order: the named web logs (nginx-main, combinedio, combined, vcombined, common), JSON lines, logfmt,
//! CSV/TSV (a delimiter among `,` tab `;` `|` that splits every line into the
//! same number of fields, more than one), and else `fields`, but for a file
//! named `.csv` or `.tsv`, which is CSV then too ([`detect_named`]). The
//! choice is said on stderr by the caller, so a surprise is visible.

use std::sync::Arc;

use super::clf::{LogFormat, NAMED};
use super::{csv, jsonl, logfmt, Columns, Format, FormatError, FormatOptions, Kind};

pub fn detect(sample: &[u8], opts: &FormatOptions) -> Result<Arc<dyn Format>, FormatError> {
    let lines = super::sample_lines(sample, 20);
    if lines.is_empty() {
        return Ok(Arc::new(super::fields::Fields::new(opts, sample)?));
    }
    for name in NAMED {
        let f = LogFormat::named(name)?;
        if reads_most(&f, &lines) {
            return Ok(Arc::new(f));
        }
    }
    if lines.iter().all(|l| l.first() == Some(&b'{')) {
        if let Ok(f) = jsonl::JsonLines::new(opts, sample) {
            if reads_most(&f, &lines) {
                return Ok(Arc::new(f));
            }
        }
    }
    // A delimiter the user gave says an input that is no web log or JSON is
    // CSV split at it, as DuckDB's `delim` does: sniffed, `name;note,x`
    // under `--delimiter ';'` was read at its commas, exit 0. Not before
    // them: one `--delimiter` is every table's, and a web log joined to a
    // `;` CSV was read as CSV (its first line a header), exit 0. Before
    // logfmt where it splits every record alike (`a=1\tb=2` under
    // `--delimiter tab`), else after.
    let given = opts.delimiter;
    if let Some(d) = given.filter(|&d| splits_alike(&lines, d)) {
        return csv_of(sample, d, opts);
    }
    if lines.iter().all(|l| looks_logfmt(l)) {
        return Ok(Arc::new(logfmt::Logfmt::new(opts, sample)?));
    }
    if let Some(d) = given {
        return csv_of(sample, d, opts);
    }
    if let Some(d) = csv_delimiter(&lines) {
        return csv_of(sample, d, opts);
    }
    Ok(Arc::new(super::fields::Fields::new(opts, sample)?))
}

/// CSV split at `d`, its header decided from the sample unless
/// `--no-header` was given.
fn csv_of(sample: &[u8], d: u8, opts: &FormatOptions) -> Result<Arc<dyn Format>, FormatError> {
    let mut o = opts.clone();
    o.delimiter = Some(d);
    if !opts.no_header && !csv_has_header(sample, d) {
        o.no_header = true;
    }
    Ok(Arc::new(csv::Csv::new(d, &o, sample)?))
}

/// [`detect`] for a file named `name` (its first input with data): a
/// `.csv` or `.tsv` file (compressed or not) of one column (no delimiter
/// outside quotes in any sampled record), which [`detect`] reads as
/// `fields`, is read as CSV (TSV) all the same. A one-column CSV
/// (`id\n1\n2`) was `fields`: its header a row, `count(*)` one more than
/// DuckDB's, exit 0. Its header is decided as for any detected CSV (one of
/// `1\n2\n3` is data, as DuckDB reads it). A ragged CSV (rows of other
/// field counts) stays `fields`: as CSV its header could not be told from
/// its rows (`x,y` over `1,2`, `3`, `4,5,6` made `c1,c2,c3` and one row).
pub fn detect_named(
    sample: &[u8],
    opts: &FormatOptions,
    name: &str,
) -> Result<Arc<dyn Format>, FormatError> {
    let found = detect(sample, opts)?;
    let d = named_delimiter(name).map(|d| opts.delimiter.unwrap_or(d));
    let one_column = |d: u8| {
        let lines = super::sample_lines(sample, 20);
        let records = quoted_records(&lines);
        !records.is_empty() && records.iter().all(|r| count_outside_quotes(r, d) == 0)
    };
    match d.filter(|&d| found.name() == "fields" && one_column(d)) {
        Some(d) => csv_of(sample, d, opts),
        None => Ok(found),
    }
}

/// The delimiter a file's name promises: `,` for `.csv`, tab for `.tsv`,
/// after a compression suffix (`x.csv.gz`); any case.
fn named_delimiter(name: &str) -> Option<u8> {
    let lower = name.to_ascii_lowercase();
    let mut stem = lower.as_str();
    for z in [".gz", ".zst", ".zstd", ".bz2", ".xz", ".lzma"] {
        stem = stem.strip_suffix(z).unwrap_or(stem);
    }
    match std::path::Path::new(stem).extension()?.to_str()? {
        "csv" => Some(b','),
        "tsv" => Some(b'\t'),
        _ => None,
    }
}

/// The named web log format (in [`NAMED`]'s order when they tie) that
/// reads the most of the sample's first 200 lines, if
/// it reads at least half of them. For a caller that can only read web logs
/// (`wf report`): there [`detect`]'s rule of one odd line in twenty made a
/// log whose first twenty lines held two bad ones "fields", which it cannot
/// use, where the log was plainly a combined one. A line reads here only
/// with its values of their types, as the report counts a line: split
/// alone, a combined log's lines all read as common (its size runs on to
/// the line's end), and one odd line in six made such a log common, every
/// line of it then failed. [`detect`] (`wf sql`, where a value not of its
/// type is a NULL in a row) splits only.
pub fn web_log(sample: &[u8]) -> Option<LogFormat> {
    let lines = super::sample_lines(sample, 200);
    let mut best: Option<(usize, LogFormat)> = None;
    for name in NAMED {
        let f = LogFormat::named(name).ok()?;
        let read = lines.len() - unread(&f, &lines, true);
        let better = best.as_ref().is_none_or(|(b, _)| read > *b);
        if read > 0 && read * 2 >= lines.len() && better {
            best = Some((read, f));
        }
    }
    best.map(|(_, f)| f)
}

/// Sampled lines `f` does not read: that do not split, or (`typed`) have a
/// value not of its column's type.
fn unread(f: &dyn Format, lines: &[&[u8]], typed: bool) -> usize {
    let kinds: Vec<Kind> = f.fields().iter().map(|x| x.kind).collect();
    let all: Vec<usize> = (0..kinds.len()).collect();
    let mut cols = Columns::new(&kinds);
    let mut p = f.parser(if typed { &all } else { &[] });
    lines
        .iter()
        .filter(|l| {
            let bad = cols.bad_values;
            !p.parse(l, &mut cols) || cols.bad_values > bad
        })
        .count()
}

/// The format reads every sampled line but at most one in twenty.
fn reads_most(f: &dyn Format, lines: &[&[u8]]) -> bool {
    let bad = unread(f, lines, false);
    bad * 20 <= lines.len() && bad < lines.len()
}

fn looks_logfmt(l: &[u8]) -> bool {
    match logfmt::pairs(l) {
        Some(p) => p.len() >= 2 && p.iter().all(|(k, _)| !k.is_empty() && !k.contains(&b'"')),
        None => false,
    }
}

fn csv_delimiter(lines: &[&[u8]]) -> Option<u8> {
    [b',', b'\t', b';', b'|']
        .into_iter()
        .find(|&d| splits_alike(lines, d))
}

/// `d` splits every sampled record into the same number of fields, more
/// than one.
fn splits_alike(lines: &[&[u8]], d: u8) -> bool {
    let records = quoted_records(lines);
    let Some(first) = records.first() else {
        return false;
    };
    let n = count_outside_quotes(first, d);
    n > 0 && records.iter().all(|l| count_outside_quotes(l, d) == n)
}

/// The sampled lines as CSV records: a line that leaves a quote open goes
/// on with the next (a quoted line break), and an unclosed last record is
/// left out. A CSV whose first records held a quoted line break was taken
/// for `fields`, its lines of other field counts (the query then failed
/// on its columns).
fn quoted_records(lines: &[&[u8]]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut open: Option<Vec<u8>> = None;
    for l in lines {
        let mut rec = match open.take() {
            Some(mut r) => {
                r.push(b'\n');
                r.extend_from_slice(l);
                r
            }
            None => l.to_vec(),
        };
        if rec.iter().filter(|&&c| c == b'"').count() % 2 == 1 {
            open = Some(std::mem::take(&mut rec));
        } else {
            out.push(rec);
        }
    }
    out
}

fn count_outside_quotes(l: &[u8], d: u8) -> usize {
    let mut quoted = false;
    l.iter()
        .filter(|&&c| {
            if c == b'"' {
                quoted = !quoted;
            }
            c == d && !quoted
        })
        .count()
}

/// Whether a detected CSV's first line is its header ([`csv::has_header`]).
fn csv_has_header(sample: &[u8], d: u8) -> bool {
    csv::has_header(sample, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    const COMBINED_LINE: &str =
        r#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET /a HTTP/1.0" 200 2 "-" "curl/8""#;
    const COMMON_LINE: &str = r#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET /a HTTP/1.0" 200 2"#;

    /// Two bad lines in the first twenty: `detect` gives up on the web log
    /// formats, `web_log` takes the one that reads most; less than half
    /// read, or nothing, is no web log.
    #[test]
    fn a_web_log_with_bad_lines_is_still_one() {
        let mut lines: Vec<&str> = vec![COMBINED_LINE; 18];
        lines.insert(3, "junk");
        lines.insert(9, "");
        let sample = lines.join("\n") + "\n";
        let opts = FormatOptions::default();
        assert_eq!(detect(sample.as_bytes(), &opts).unwrap().name(), "fields");
        assert_eq!(web_log(sample.as_bytes()).unwrap().name(), "combined");
        let common = [COMMON_LINE; 5].join("\n");
        assert_eq!(web_log(common.as_bytes()).unwrap().name(), "common");
        let mostly_junk = [COMBINED_LINE, "a", "b", "c"].join("\n");
        assert!(web_log(mostly_junk.as_bytes()).is_none());
        assert!(web_log(b"").is_none());
    }

    /// A combined log's lines split as common too (the size runs to the
    /// line's end); for `web_log` a line reads only with its values of their
    /// types, so a combined log with one odd line in six is combined, not
    /// common (where every line would then fail the report). `detect`
    /// (`wf sql`, whose rows keep a value not of its type as NULL) splits
    /// only, as before.
    #[test]
    fn a_web_log_line_reads_only_with_values_of_their_types() {
        let odd = r#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET /a HTTP/1.0" 200 "-" "x""#;
        let mut lines = vec![COMBINED_LINE; 5];
        lines.push(odd);
        let sample = lines.join("\n") + "\n";
        assert_eq!(web_log(sample.as_bytes()).unwrap().name(), "combined");
        let opts = FormatOptions::default();
        assert_eq!(detect(sample.as_bytes(), &opts).unwrap().name(), "common");
    }

    /// A delimiter the user gave is the one the input is split at, whatever
    /// the sample's commas or tabs (a CSV of `,` in `;`-split fields read
    /// as `name;note` and `x`), even in a file named `.tsv`; a web log is
    /// still one.
    #[test]
    fn a_given_delimiter_is_the_one_used() {
        let opts = FormatOptions::parse(Some(";"), false, None, false).unwrap();
        let names = |f: Arc<dyn Format>| -> Vec<String> {
            f.fields().iter().map(|x| x.name.clone()).collect()
        };
        let sample = b"name;note,x\nann;hi,1\nbob;yo,2\n";
        for f in [
            detect(sample, &opts).unwrap(),
            detect_named(sample, &opts, "x.tsv").unwrap(),
        ] {
            assert_eq!(f.name(), "csv (delimiter ';')");
            assert_eq!(names(f), ["name", "note,x"]);
        }
        // Another table's web log stays one (the options are every table's).
        let log = format!("{COMBINED_LINE}\n{COMBINED_LINE}\n");
        assert_eq!(detect(log.as_bytes(), &opts).unwrap().name(), "combined");
        // Lines that would read as logfmt but split alike at it are CSV;
        // logfmt that it does not split is logfmt.
        let tab = FormatOptions::parse(Some("tab"), false, None, false).unwrap();
        let kv = b"a=1\tb=2\nc=3\td=4\n";
        assert_eq!(detect(kv, &tab).unwrap().name(), "tsv");
        let logfmt = b"level=info msg=hi\nlevel=warn msg=yo\n";
        assert_eq!(detect(logfmt, &tab).unwrap().name(), "logfmt");
    }

    /// A CSV file whose records hold quoted line breaks is detected as CSV
    /// (its lines alone have other field counts).
    #[test]
    fn csv_with_quoted_line_breaks() {
        let opts = FormatOptions::default();
        let sample = b"a,b,c\n1,\"x\ny\",3\n2,plain,4\n3,\"p\nq\nr\",5\n4,\"open";
        let f = detect(sample, &opts).unwrap();
        assert_eq!(f.name(), "csv");
        let names: Vec<&str> = f.fields().iter().map(|x| x.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "c"]);
    }

    /// A `.csv` (`.tsv`) file of one column is CSV by its name, its header
    /// decided as DuckDB's sniffer decides it (`n` over numbers and `a` over
    /// text are headers, a first number over numbers is data); another name,
    /// or rows of other field counts, leave it `fields`.
    #[test]
    fn one_column_csv_by_its_name() {
        let opts = FormatOptions::default();
        let cols = |f: &Arc<dyn Format>| -> Vec<String> {
            f.fields().iter().map(|x| x.name.clone()).collect()
        };
        for (name, sample, format, header) in [
            ("ids.csv", &b"n\n1\n2\n"[..], "csv", "n"),
            ("dir.x/words.CSV.gz", b"a\nb\nc\n", "csv", "a"),
            ("nums.tsv", b"1\n2\n3\n", "tsv", "c1"),
        ] {
            let f = detect_named(sample, &opts, name).unwrap();
            let want = (format.to_string(), vec![header.to_string()]);
            assert_eq!((f.name(), cols(&f)), want, "{name}");
        }
        let quoted = detect_named(b"q\n\"a,b\"\nc\n", &opts, "x.csv").unwrap();
        assert_eq!(
            (quoted.name(), cols(&quoted)),
            ("csv".into(), vec!["q".into()])
        );
        for name in ["ids.txt", "-", "csv", "x.csv.d/ids"] {
            let f = detect_named(b"n\n1\n2\n", &opts, name).unwrap();
            assert_eq!(f.name(), "fields", "{name}");
        }
        let ragged = detect_named(b"x,y\n1,2\n3\n4,5,6\n", &opts, "r.csv").unwrap();
        assert_eq!(ragged.name(), "fields");
        let f = detect_named(b"{\"a\": 1}\n", &opts, "x.csv").unwrap();
        assert_eq!(f.name(), "jsonl");
        // An empty one is an empty table, as before (not "no columns").
        assert_eq!(detect_named(b"", &opts, "e.csv").unwrap().name(), "fields");
    }

    /// A vhost's common lines are vcommon (GoAccess's VCOMMON), its combined
    /// ones still vcombined, by both detections.
    #[test]
    fn vcommon_after_the_vcombined_it_shortens() {
        let opts = FormatOptions::default();
        let vcommon = format!("www.x.org:443 {COMMON_LINE}\n").repeat(3);
        assert_eq!(detect(vcommon.as_bytes(), &opts).unwrap().name(), "vcommon");
        assert_eq!(web_log(vcommon.as_bytes()).unwrap().name(), "vcommon");
        let vcombined = format!("www.x.org:80 {COMBINED_LINE}\n").repeat(3);
        assert_eq!(
            detect(vcombined.as_bytes(), &opts).unwrap().name(),
            "vcombined"
        );
        assert_eq!(web_log(vcombined.as_bytes()).unwrap().name(), "vcombined");
    }

    /// nginx's `main` lines are read as nginx-main, not as combined (whose
    /// agent would run on to the line's end); combined ones stay combined.
    #[test]
    fn nginx_main_before_the_combined_it_extends() {
        let main = format!("{COMBINED_LINE} \"10.0.0.1\"\n").repeat(3);
        let opts = FormatOptions::default();
        assert_eq!(detect(main.as_bytes(), &opts).unwrap().name(), "nginx-main");
        assert_eq!(web_log(main.as_bytes()).unwrap().name(), "nginx-main");
        let io = format!("{COMBINED_LINE} 310 2040\n").repeat(3);
        assert_eq!(detect(io.as_bytes(), &opts).unwrap().name(), "combinedio");
        let combined = format!("{COMBINED_LINE}\n").repeat(3);
        assert_eq!(
            detect(combined.as_bytes(), &opts).unwrap().name(),
            "combined"
        );
    }
}
