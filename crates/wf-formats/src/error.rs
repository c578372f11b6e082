//! Why a format could not be made from `--format`, `--schema` or a sample.
//!
//! Every error here is the user's argument or data, never an I/O failure (the
//! parsers see no files), so a caller may treat all of them as a bad value
//! (the Python package raises `ValueError`). Each variant keeps what the
//! message names (the spec, the type, the file, the byte of a format string),
//! and `Display` is the exact text the CLI prints.

/// A format that cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    #[error(
        "unknown format '{0}' (formats: auto, combined, common, vcombined, vcommon, nginx-main, \
         combinedio, apache:'FORMAT', nginx:'FORMAT', csv, tsv, jsonl, logfmt, fields, regex:'RE')"
    )]
    Unknown(String),
    #[error("no log format named '{0}'")]
    NoLogFormat(String),
    /// An Apache `LogFormat` ends in a `%` directive without its letter;
    /// `at`: the byte of the `%`.
    #[error("LogFormat: '%' at the end of the format")]
    PercentAtEnd { at: usize },
    /// `%{` with no `}` after it; `at`: the byte of the `{`.
    #[error("LogFormat: '%{{' without '}}'")]
    ApacheBrace { at: usize },
    /// A directive wf does not read; `at`: the byte of its letter.
    #[error("LogFormat: directive '%{directive}' is not supported")]
    Directive { directive: char, at: usize },
    /// `${` with no `}` after it; `at`: the byte of the `{`.
    #[error("log_format: '${{' without '}}'")]
    NginxBrace { at: usize },
    /// `$` not followed by a name; `at`: the byte after the `$`.
    #[error("log_format: '$' without a variable name")]
    NginxName { at: usize },
    /// The regular expression does not compile (the `regex` crate's message).
    #[error("regex: {0}")]
    Regex(String),
    #[error("regex: no named capture group, e.g. (?P<status>\\d+)")]
    RegexNoGroup,
    #[error("jsonl: no JSON object in the first lines")]
    NoJsonObject,
    #[error("logfmt: no key=value pair in the first lines")]
    NoLogfmtPair,
    #[error("csv: no columns (empty input?)")]
    NoCsvColumns,
    /// An input whose lines end in `\r` alone (classic Mac OS): read as one
    /// line, its rows were lost (0 of a CSV's rows, exit 0; DuckDB splits).
    #[error(
        "{0}: its lines end in a carriage return alone (classic Mac OS), which wf does not \
         split at: convert it first, e.g. tr '\\r' '\\n' < FILE > FILE.unix"
    )]
    CrLines(String),
    /// A CSV file whose first line shares no name with the table's header.
    #[error(
        "{file}: its first line ({}) shares no column name with the header of \
         {first_file} ({}): files with other headers are matched by their columns' names \
         (as DuckDB's union_by_name); a file without a header line needs \
         --no-header (all files) or a table of its own",
        .names.join(","),
        .first.join(",")
    )]
    Headers {
        file: String,
        names: Vec<String>,
        first_file: String,
        first: Vec<String>,
    },
    /// A `--delimiter` that is not one ASCII character, or is a quote or a
    /// line break.
    #[error(
        "--delimiter {0:?}: must be one ASCII character, not a quote or a line break \
         (or \\t for a tab)"
    )]
    Delimiter(String),
    /// A `--schema` entry without `:`.
    #[error("--schema: '{0}' is not name:type")]
    SchemaEntry(String),
    #[error(
        "--schema: unknown type '{0}' (string, int, float, decimal(P,S), \
         timestamp, bool; P from 1 to 38, S at most P)"
    )]
    SchemaType(String),
}
