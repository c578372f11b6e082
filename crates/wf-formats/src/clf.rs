//! Web server access logs: Apache `LogFormat` strings, nginx `log_format`
//! strings, and the named formats built from them (`combined`, `common`,
//! `vcombined`).
//!
//! A format string compiles to a list of literals and fields. A record is read
//! left to right: a literal must match exactly; a field runs to the next
//! occurrence of the literal after it (found with memchr on its first byte), or
//! to the end of the record when it is last. A field between quotes (the literal
//! before it ends with `"` and the one after starts with `"`) skips
//! backslash-escaped bytes, so `\"` inside a request or user agent does not end
//! it; its value is the bytes between the quotes, escapes kept as written.
//! Apache's `%t` carries its own brackets. A record is a row when its literals
//! and fields are all found, whatever the query projects, so the rows are the
//! same for every query; only projected columns are converted and built.
//!
//! Values: `-` is NULL in numeric and time columns (`bytes`, `%D`,
//! `$request_time`) and stays `-` in text columns; a value that does not convert
//! to its column's type (`status` "OK") is NULL and counted by `--stats`. `request` is split at its first and last space
//! into `method`, `path` and `protocol`; a request without two spaces (`-`, or
//! junk from scanners) gives NULL for the three, and only the whole `request`.
//!
//! A format string is read as the server's configuration reads it (`\"`,
//! `\t`: [`unescape`]), so that one copied from httpd.conf or nginx.conf
//! works. Apache's `%{format}t` is the `time` column when it writes a whole
//! time (a strftime pattern read with chrono, or `sec`/`msec`/`usec`); it
//! had been read and dropped, and a report of such a log had no day. So is
//! nginx's `$msec` (seconds with a fraction) in a format without
//! `$time_local` or `$time_iso8601`; beside one of them it is a number,
//! `msec`.

use std::sync::Arc;

use super::bytemap::{ByteMap, Finder, Mapped, Plain};
use super::time::{parse_clf, parse_iso, Strftime};
use super::{columns, Columns, Field, FindingParser, Format, FormatError, Kind, Parser};
use super::{RowParser, Value};

/// How one field's text becomes columns.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Conv {
    Str,
    /// An integer; `-` is NULL; anything else that is not a number is malformed.
    Int,
    /// A float; `-` is NULL; anything else that is not a number is malformed.
    Float,
    /// A float where anything unreadable is NULL (`$upstream_response_time` may
    /// list several upstreams: `0.010, 0.004`).
    LenientFloat,
    /// `10/Oct/2000:13:55:36 -0700`; `bracketed` when the field includes `[...]`.
    Clf {
        bracketed: bool,
    },
    Iso,
    /// Apache's `%{format}t`: a strftime pattern of a whole date and time.
    Strf(Arc<Strftime>),
    /// Apache's `%{sec}t`, `%{msec}t`, `%{usec}t`: an integer since the
    /// epoch, in units of this many microseconds.
    Epoch(i64),
    /// nginx's `$msec`: seconds since the epoch with a fraction
    /// (`1705511132.123`).
    EpochFraction,
    /// The request line: four columns, method, path, protocol, request.
    Request,
    /// Read but not kept (e.g. `%{msec_frac}t`, a piece of a time).
    Skip,
}

#[derive(Debug, Clone)]
struct Directive {
    conv: Conv,
    /// Index of its (first) column in the format's fields.
    col: usize,
    /// Between quotes: backslash escapes are skipped while looking for its end.
    quoted: bool,
}

#[derive(Debug, Clone)]
enum Item {
    Lit(Vec<u8>),
    Field(Directive),
}

/// A compiled Apache or nginx log format.
#[derive(Debug, Clone)]
pub struct LogFormat {
    name: String,
    items: Arc<[Item]>,
    fields: Vec<Field>,
    /// Where the time is read with its zone, when it is a `%{format}t` with
    /// `%z` ([`Format::zone_of`]).
    zone: Option<Arc<ZoneReader>>,
}

/// The record split ([`Program`]) and its time field's step, for
/// [`Format::zone_of`].
#[derive(Debug)]
struct ZoneReader {
    program: Program,
    step: usize,
    time: Arc<Strftime>,
}

pub const COMMON: &str = r#"%h %l %u %t "%r" %>s %b"#;
pub const COMBINED: &str = r#"%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-agent}i""#;
pub const VCOMBINED: &str = r#"%v:%p %h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-agent}i""#;
/// Common with the virtual host and port first: GoAccess's `VCOMMON` (Apache
/// names no such format; its `vhost_combined` is vcombined).
pub const VCOMMON: &str = r#"%v:%p %h %l %u %t "%r" %>s %b"#;
/// nginx's `main` (the `log_format` of its default nginx.conf): combined and
/// `"$http_x_forwarded_for"`. Read as combined, its agent ran on to the line's
/// end (`Firefox/2.0.0.4" "-`), and each forwarded-for address made the same
/// client and agent another visitor.
pub const NGINX_MAIN: &str = r#"$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" "$http_x_forwarded_for""#;

/// Apache's `combinedio` (mod_logio): combined and the bytes received and
/// sent, headers included (`%I %O`: columns `bytes_received`, `bytes_sent`).
pub const COMBINEDIO: &str = r#"%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-agent}i" %I %O"#;

/// The named formats, in the order `auto` tries them: one that extends
/// another (nginx-main, combined) before it.
pub const NAMED: [&str; 6] = [
    "nginx-main",
    "combinedio",
    "combined",
    "vcombined",
    "common",
    "vcommon",
];

impl LogFormat {
    /// One of [`NAMED`].
    pub fn named(name: &str) -> Result<Self, FormatError> {
        let mut lf = match name {
            "combined" => Self::apache(COMBINED)?,
            "common" => Self::apache(COMMON)?,
            "vcombined" => Self::apache(VCOMBINED)?,
            "vcommon" => Self::apache(VCOMMON)?,
            "combinedio" => Self::apache(COMBINEDIO)?,
            "nginx-main" => Self::nginx(NGINX_MAIN)?,
            _ => return Err(FormatError::NoLogFormat(name.to_string())),
        };
        lf.name = name.to_string();
        Ok(lf)
    }

    /// `name` is one of [`NAMED`].
    pub fn is_named(name: &str) -> bool {
        NAMED.contains(&name)
    }

    /// An Apache `LogFormat` string, e.g. `%h %l %u %t "%r" %>s %b %D`, its
    /// backslash escapes read as httpd.conf's ([`unescape`]).
    pub fn apache(format: &str) -> Result<Self, FormatError> {
        let mut b = Builder::default();
        let unescaped = unescape(format);
        let f = &unescaped[..];
        let mut i = 0;
        while i < f.len() {
            if f[i] != b'%' {
                b.lit(f[i]);
                i += 1;
                continue;
            }
            let (directive, arg, next) = apache_directive(f, i + 1)?;
            i = next;
            if directive == b'%' {
                b.lit(b'%');
                continue;
            }
            let (name, conv) = apache_column(directive, arg.as_deref(), next - 1)?;
            b.field(&name, conv);
        }
        Ok(b.build(format!("apache:'{format}'")))
    }

    /// An nginx `log_format` string, e.g. `$remote_addr - $remote_user [$time_local] ...`,
    /// its backslash escapes read as nginx.conf's ([`unescape`]).
    pub fn nginx(format: &str) -> Result<Self, FormatError> {
        let mut b = Builder::default();
        let unescaped = unescape(format);
        let f = &unescaped[..];
        let mut i = 0;
        let mut pieces = Vec::new();
        while i < f.len() {
            if f[i] != b'$' {
                pieces.push(Err(f[i]));
                i += 1;
                continue;
            }
            let (var, next) = nginx_variable(f, i + 1)?;
            i = next;
            pieces.push(Ok(var));
        }
        // `$msec` is the time when no other variable is: a log of only
        // it had no day in `wf report`, and no `time` for `--since`.
        let timed = pieces
            .iter()
            .any(|p| matches!(p.as_deref(), Ok("time_local" | "time_iso8601")));
        for p in pieces {
            match p {
                Err(lit) => b.lit(lit),
                Ok(var) if var == "msec" && !timed => b.field("time", Conv::EpochFraction),
                Ok(var) => {
                    let (name, conv) = nginx_column(&var);
                    b.field(&name, conv);
                }
            }
        }
        Ok(b.build(format!("nginx:'{format}'")))
    }
}

/// A format string as the server's configuration reads it: `\"`, `\'` and
/// `\\` are the character, `\t`, `\n` and `\r` a tab, line feed and
/// carriage return (nginx's `ngx_conf_read_token`; httpd's quoted arguments
/// and mod_log_config's `\t`, `\n`); another backslash is itself. A format
/// copied from httpd.conf, `"%h %l %u %t \"%r\" %>s %b"`, kept its
/// backslashes, and no line of the log matched it.
fn unescape(format: &str) -> Vec<u8> {
    let f = format.as_bytes();
    let mut out = Vec::with_capacity(f.len());
    let mut i = 0;
    while i < f.len() {
        let c = match (f[i], f.get(i + 1)) {
            (b'\\', Some(&e @ (b'"' | b'\'' | b'\\'))) => e,
            (b'\\', Some(b't')) => b'\t',
            (b'\\', Some(b'n')) => b'\n',
            (b'\\', Some(b'r')) => b'\r',
            (c, _) => {
                out.push(c);
                i += 1;
                continue;
            }
        };
        out.push(c);
        i += 2;
    }
    out
}

/// Collects items and columns while a format string is read.
#[derive(Default)]
struct Builder {
    items: Vec<Item>,
    fields: Vec<Field>,
}

impl Builder {
    fn lit(&mut self, c: u8) {
        match self.items.last_mut() {
            Some(Item::Lit(l)) => l.push(c),
            _ => self.items.push(Item::Lit(vec![c])),
        }
    }

    fn field(&mut self, name: &str, conv: Conv) {
        let quoted = matches!(self.items.last(), Some(Item::Lit(l)) if l.ends_with(b"\""));
        let col = self.fields.len();
        match conv {
            Conv::Request => {
                for n in ["method", "path", "protocol", "request"] {
                    self.column(n, Kind::Str);
                }
            }
            Conv::Skip => {}
            _ => self.column(name, conv_kind(&conv)),
        }
        self.items
            .push(Item::Field(Directive { conv, col, quoted }));
    }

    /// Add a column, renaming a repeated name `name_2`, `name_3`...
    fn column(&mut self, name: &str, kind: Kind) {
        let mut n = name.to_string();
        let mut k = 2;
        while self.fields.iter().any(|f| f.name == n) {
            n = format!("{name}_{k}");
            k += 1;
        }
        self.fields.push(Field::new(n, kind));
    }

    fn build(self, name: String) -> LogFormat {
        let zone = self.zone_reader().map(Arc::new);
        LogFormat {
            name,
            items: self.items.into(),
            fields: self.fields,
            zone,
        }
    }

    /// The reader of the `time` column's zone, when it is a `%{format}t`
    /// with `%z` (the steps of a [`Program`] are the format's fields in
    /// order; one is compiled only then).
    fn zone_reader(&self) -> Option<ZoneReader> {
        let fields = self.items.iter().filter_map(|i| match i {
            Item::Field(d) => Some(d),
            Item::Lit(_) => None,
        });
        let (step, d) = fields
            .enumerate()
            .find(|(_, d)| conv_kind(&d.conv) == Kind::Time && self.fields[d.col].name == "time")?;
        match &d.conv {
            Conv::Strf(t) if t.zoned() => Some(ZoneReader {
                time: t.clone(),
                program: Program::compile(&self.items),
                step,
            }),
            _ => None,
        }
    }
}

fn conv_kind(c: &Conv) -> Kind {
    match c {
        Conv::Int => Kind::Int,
        Conv::Float | Conv::LenientFloat => Kind::Float,
        Conv::Clf { .. } | Conv::Iso | Conv::Strf(_) | Conv::Epoch(_) | Conv::EpochFraction => {
            Kind::Time
        }
        _ => Kind::Str,
    }
}

/// Read one directive after `%`: modifiers (`>`, `<`, status lists, `!`) are
/// skipped, `{arg}` is kept. Returns the directive letter, its argument and the
/// index after it.
fn apache_directive(f: &[u8], mut i: usize) -> Result<(u8, Option<String>, usize), FormatError> {
    let percent = i - 1;
    let mut arg = None;
    loop {
        match f.get(i) {
            None => return Err(FormatError::PercentAtEnd { at: percent }),
            Some(b'<' | b'>' | b'!' | b',' | b'0'..=b'9') => i += 1,
            Some(b'{') => {
                let end = f[i..]
                    .iter()
                    .position(|&c| c == b'}')
                    .ok_or(FormatError::ApacheBrace { at: i })?;
                arg = Some(String::from_utf8_lossy(&f[i + 1..i + end]).into_owned());
                i += end + 1;
            }
            Some(&c) => return Ok((c, arg, i + 1)),
        }
    }
}

/// The column an Apache directive makes.
fn apache_column(d: u8, arg: Option<&str>, at: usize) -> Result<(String, Conv), FormatError> {
    let s = |n: &str| Ok((n.to_string(), Conv::Str));
    let int = |n: &str| Ok((n.to_string(), Conv::Int));
    match (d, arg) {
        (b'h', _) => s("client"),
        (b'a', _) => s("client_ip"),
        (b'A', _) => s("local_ip"),
        (b'l', _) => s("ident"),
        (b'u', _) => s("user"),
        (b't', None) => Ok(("time".into(), Conv::Clf { bracketed: true })),
        (b't', Some(f)) => Ok(apache_time(f)),
        (b'r', _) => Ok((String::new(), Conv::Request)),
        (b's', _) => int("status"),
        (b'b', _) | (b'B', _) => int("bytes"),
        (b'O', _) => int("bytes_sent"),
        (b'I', _) => int("bytes_received"),
        (b'S', _) => int("bytes_transferred"),
        (b'D', _) => int("duration_us"),
        (b'T', Some("ms")) => int("duration_ms"),
        (b'T', Some("us")) => int("duration_us"),
        (b'T', _) => int("duration_s"),
        (b'v', _) => s("vhost"),
        (b'V', _) => s("server_name"),
        (b'p', _) => int("port"),
        (b'P', _) => int("pid"),
        (b'k', _) => int("keepalive"),
        (b'U', _) => s("url_path"),
        (b'q', _) => s("query"),
        (b'm', _) => s("method"),
        (b'H', _) => s("protocol"),
        (b'X', _) => s("conn_status"),
        (b'L', _) => s("log_id"),
        (b'R', _) => s("handler"),
        (b'f', _) => s("filename"),
        (b'i', Some(h)) => s(&header_column(h)),
        (b'o', Some(h)) => s(&format!("resp_{}", snake(h))),
        (b'e', Some(h)) => s(&format!("env_{}", snake(h))),
        (b'n', Some(h)) => s(&format!("note_{}", snake(h))),
        (b'C', Some(h)) => s(&format!("cookie_{}", snake(h))),
        (b'x', Some(h)) => s(&snake(h)),
        (c, _) => Err(FormatError::Directive {
            directive: c as char,
            at,
        }),
    }
}

/// Apache's `%{format}t`: `begin:` or `end:` (when the time was taken) and
/// a strftime pattern, or `sec`, `msec`, `usec` since the epoch. A pattern
/// that is only a piece of a time (`%{%z}t`, `%{msec_frac}t`: Apache's
/// example of a time in milliseconds writes one in three pieces) is read and
/// not kept; its whole-time piece is the time.
fn apache_time(f: &str) -> (String, Conv) {
    let f = f
        .strip_prefix("begin:")
        .or_else(|| f.strip_prefix("end:"))
        .unwrap_or(f);
    let conv = match f {
        "sec" => Conv::Epoch(1_000_000),
        "msec" => Conv::Epoch(1_000),
        "usec" => Conv::Epoch(1),
        "msec_frac" | "usec_frac" => Conv::Skip,
        p => Strftime::new(p).map_or(Conv::Skip, |t| Conv::Strf(Arc::new(t))),
    };
    let name = if conv == Conv::Skip { "" } else { "time" };
    (name.into(), conv)
}

/// A request header's column: `referrer` and `user_agent` as in `combined`,
/// others by name (`X-Forwarded-For` -> `x_forwarded_for`).
fn header_column(h: &str) -> String {
    match snake(h).as_str() {
        "referer" | "referrer" => "referrer".into(),
        other => other.to_string(),
    }
}

fn snake(s: &str) -> String {
    s.trim()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect()
}

/// Read an nginx variable after `$` (`name` or `{name}`).
fn nginx_variable(f: &[u8], i: usize) -> Result<(String, usize), FormatError> {
    if f.get(i) == Some(&b'{') {
        let end = f[i..]
            .iter()
            .position(|&c| c == b'}')
            .ok_or(FormatError::NginxBrace { at: i })?;
        return Ok((
            String::from_utf8_lossy(&f[i + 1..i + end]).into_owned(),
            i + end + 1,
        ));
    }
    let n = f[i..]
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
        .count();
    if n == 0 {
        return Err(FormatError::NginxName { at: i });
    }
    Ok((String::from_utf8_lossy(&f[i..i + n]).into_owned(), i + n))
}

/// The column an nginx variable makes.
fn nginx_column(var: &str) -> (String, Conv) {
    let c = |n: &str, conv| (n.to_string(), conv);
    match var {
        "remote_addr" => c("client", Conv::Str),
        "remote_user" => c("user", Conv::Str),
        "time_local" => c("time", Conv::Clf { bracketed: false }),
        "time_iso8601" => c("time", Conv::Iso),
        "request" => c("", Conv::Request),
        "status" => c("status", Conv::Int),
        "body_bytes_sent" => c("bytes", Conv::Int),
        "http_referer" => c("referrer", Conv::Str),
        "http_user_agent" => c("user_agent", Conv::Str),
        "request_time" | "msec" => c(var, Conv::Float),
        v if v.starts_with("upstream_") && v.ends_with("_time") => c(v, Conv::LenientFloat),
        "bytes_sent"
        | "request_length"
        | "connection"
        | "connection_requests"
        | "pid"
        | "server_port"
        | "remote_port" => c(var, Conv::Int),
        v => c(v, Conv::Str),
    }
}

impl Format for LogFormat {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn fields(&self) -> &[Field] {
        &self.fields
    }

    fn parser(&self, projection: &[usize]) -> Box<dyn Parser> {
        let mut want = vec![None; self.fields.len()];
        for (out, &col) in projection.iter().enumerate() {
            want[col] = Some(out);
        }
        let program = Program::compile(&self.items);
        let outs = program.outs(&want);
        let spans = vec![(0, 0); program.steps.len()];
        Box::new(LogParser {
            program,
            outs,
            spans,
        })
    }

    fn row_parser(&self, projection: &[usize]) -> Option<Box<dyn RowParser>> {
        let program = Program::compile(&self.items);
        // Per projected column: its step, conversion and part of a request.
        let mut of = Vec::new();
        for &col in projection {
            let (k, s) = program.steps.iter().enumerate().find(|(_, s)| {
                let n = if s.d.conv == Conv::Request { 4 } else { 1 };
                s.d.conv != Conv::Skip && (s.d.col..s.d.col + n).contains(&col)
            })?;
            of.push((k, s.d.conv.clone(), col - s.d.col));
        }
        let spans = vec![(0, 0); program.steps.len()];
        Some(Box::new(LogRows { program, of, spans }))
    }

    fn needles(&self) -> Vec<u8> {
        Program::compile(&self.items).needles()
    }

    fn zone_of(&self, record: &[u8]) -> Option<i64> {
        let z = self.zone.as_ref()?;
        let mut spans = vec![(0, 0); z.program.steps.len()];
        if !z.program.split(&mut spans, record, &Plain) {
            return None;
        }
        let (s, e) = spans[z.step];
        z.time.parse(&record[s..e]).map(|(_, offset)| offset)
    }
}

/// [`RowParser`] of a log format: the spans of the last record split, each
/// value converted when it is asked for.
struct LogRows {
    program: Program,
    /// Per projected column: (step, conversion, part of a request line).
    of: Vec<(usize, Conv, usize)>,
    spans: Vec<(usize, usize)>,
}

impl RowParser for LogRows {
    fn split(&mut self, record: &[u8]) -> bool {
        self.program.split(&mut self.spans, record, &Plain)
    }

    fn text<'r>(&self, record: &'r [u8], col: usize) -> &'r [u8] {
        let (s, e) = self.spans[self.of[col].0];
        &record[s..e]
    }

    fn int(&self, record: &[u8], col: usize) -> Option<i64> {
        match self.of[col] {
            (step, Conv::Int, _) => {
                // `-` is NULL (`value_of`; `parse_int` reads it so too, slower).
                let (s, e) = self.spans[step];
                match record.get(s) {
                    Some(b'-') if e == s + 1 => None,
                    _ => columns::parse_int_in(record, s, e),
                }
            }
            _ => match self.value(record, col) {
                Value::Int(x) => Some(x),
                _ => None,
            },
        }
    }

    fn verbatim(&self, col: usize) -> bool {
        matches!(self.of[col], (_, Conv::Str, _) | (_, Conv::Request, 3))
    }

    fn value<'r>(&self, record: &'r [u8], col: usize) -> Value<'r> {
        let (step, ref conv, part) = self.of[col];
        let (s, e) = self.spans[step];
        let v = &record[s..e];
        match conv {
            Conv::Str => Value::Text(v),
            Conv::Request if part == 3 => Value::Text(v),
            Conv::Request => match (part, split_request(v)) {
                (_, None) => Value::Null,
                (0, Some((a, _))) => Value::Text(&v[..a]),
                (1, Some((a, b))) => Value::Text(&v[a + 1..b]),
                (_, Some((_, b))) => Value::Text(&v[b + 1..]),
            },
            Conv::Int => value_of(v, columns::parse_int).map_or(Value::Null, Value::Int),
            Conv::Float => value_of(v, columns::parse_float)
                .map_or(Value::Null, |x| Value::Float(columns::canonical(x))),
            Conv::LenientFloat => {
                columns::parse_float(v).map_or(Value::Null, |x| Value::Float(columns::canonical(x)))
            }
            Conv::Clf { .. } => value_of(v, parse_clf).map_or(Value::Null, Value::Time),
            Conv::Iso => value_of(v, parse_iso).map_or(Value::Null, Value::Time),
            Conv::Strf(t) => value_of(v, |v| strf(t, v)).map_or(Value::Null, Value::Time),
            Conv::Epoch(unit) => value_of(v, |v| epoch(*unit, v)).map_or(Value::Null, Value::Time),
            Conv::EpochFraction => value_of(v, epoch_fraction).map_or(Value::Null, Value::Time),
            Conv::Skip => Value::Null,
        }
    }
}

/// A typed value as [`converted`] reads it, not counted.
#[inline(always)]
fn value_of<T>(v: &[u8], parse: impl Fn(&[u8]) -> Option<T>) -> Option<T> {
    if v == b"-" || v.is_empty() {
        return None;
    }
    parse(v)
}

/// A format's items as a straight list of steps: a leading literal, then per
/// field where it ends and the literal after it. Walking the items with a look
/// at the next one per field was most of a log scan's parse time (perf).
#[derive(Debug)]
struct Program {
    head: Vec<u8>,
    steps: Vec<Step>,
    shape: Shape,
}

/// Formats whose records [`Program::split`] reads in straight code, not
/// step by step: the loop, reading a step's literal and kind at each
/// field, split a combined line in 45 ns, this in 33 (the 256 MB head of
/// the bench log, one thread, medians of 9; the row split was 14% of
/// `wf report`'s samples). Each finds what the loop finds (test
/// `shapes_split_as_the_steps_do`).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Shape {
    /// Step by step.
    Steps,
    /// The first six steps are Apache's common `%h %l %u %t "%r" %>s `
    /// ([`common_six`]), the rest step by step.
    Common,
    /// Apache's combined: the common six, then `%b "%{Referer}i"
    /// "%{User-agent}i"` ([`Program::combined`]).
    Combined,
}

#[derive(Debug)]
struct Step {
    d: Directive,
    /// The literal after the field; empty when another field or the end follows
    /// (the field then runs to the end of the record).
    lit: Vec<u8>,
    /// The literal after this field is the format's last item.
    last: bool,
}

impl Program {
    fn compile(items: &[Item]) -> Program {
        let mut head = Vec::new();
        let mut steps = Vec::new();
        for (i, item) in items.iter().enumerate() {
            match item {
                Item::Lit(l) if i == 0 => head = l.clone(),
                Item::Lit(_) => {}
                Item::Field(d) => {
                    let mut lit = match items.get(i + 1) {
                        Some(Item::Lit(l)) => l.clone(),
                        _ => Vec::new(),
                    };
                    // The format's closing text without its trailing blanks
                    // (a record's are not read, see `split`): nginx copies a
                    // format's trailing space into every line, and a format
                    // so written failed every line. A closing text of
                    // blanks alone goes: the field is then the last.
                    if i + 2 == items.len() {
                        while matches!(lit.last(), Some(b' ' | b'\t')) {
                            lit.pop();
                        }
                    }
                    let last = i + 2 == items.len() && !lit.is_empty();
                    steps.push(Step {
                        d: d.clone(),
                        lit,
                        last,
                    });
                }
            }
        }
        let shape = Shape::of(&head, &steps);
        Program { head, steps, shape }
    }

    /// The bytes field ends are searched for: the first byte of the literal
    /// after each field (not after the last, which ends at the record's end),
    /// and `]` for Apache's bracketed `%t`.
    fn needles(&self) -> Vec<u8> {
        let mut b = Vec::new();
        for s in &self.steps {
            if s.d.conv == (Conv::Clf { bracketed: true }) {
                b.push(b']');
            } else if !s.last && !s.lit.is_empty() {
                b.push(s.lit[0]);
            }
        }
        b
    }

    /// A record of [`Shape::Combined`] split: the steps' loop of
    /// [`Program::split`] in straight code.
    #[inline(always)]
    fn combined(&self, spans: &mut [(usize, usize)], r: &[u8], f: &impl Finder) -> bool {
        let Some(mut pos) = common_six(spans, r, f) else {
            return false;
        };
        let Some(end) = find(r, pos, b" \"", f) else {
            return false;
        };
        spans[6] = (pos, end);
        pos = end + 2;
        let Some(end) = find_unescaped(r, pos, b"\" \"", f) else {
            return false;
        };
        spans[7] = (pos, end);
        pos = end + 3;
        let agent = &self.steps[8].d;
        let Some((start, end, after, _)) = field_span(r, pos, agent, Some(b"\""), true, f) else {
            return false;
        };
        spans[8] = (start, end);
        matches!(r.get(after + 1), None | Some(b' ' | b'\t'))
    }

    /// The projected fields: (step, conversion, batch columns).
    fn outs(&self, want: &[Option<usize>]) -> Vec<Out> {
        let mut outs = Vec::new();
        for (k, s) in self.steps.iter().enumerate() {
            let mut cols = [None; 4];
            match s.d.conv {
                Conv::Request => cols.copy_from_slice(&want[s.d.col..s.d.col + 4]),
                Conv::Skip => {}
                _ => cols[0] = want[s.d.col],
            }
            if cols.iter().any(Option::is_some) {
                outs.push(Out {
                    step: k,
                    conv: s.d.conv.clone(),
                    cols,
                });
            }
        }
        outs
    }

    /// Find every field's span of record `r` into `spans`; false when a
    /// literal does not match. A literal its search found is not compared
    /// again, a quote's backslashes are counted only when one stands before
    /// it, and a literal is compared without a zip of iterators: the status
    /// count went from 1244 to 985 instructions a record in the scan
    /// (callgrind, 64 MiB log) and from 0.280 to 0.253 s on the 1 GiB log
    /// (11 interleaved rounds, `ci` builds).
    #[inline(always)]
    fn split(&self, spans: &mut [(usize, usize)], r: &[u8], f: &impl Finder) -> bool {
        if self.shape == Shape::Combined {
            return self.combined(spans, r, f);
        }
        let (first, mut pos) = if self.shape == Shape::Common {
            match common_six(spans, r, f) {
                Some(pos) => (SIX, pos),
                None => return false,
            }
        } else if lit_at(r, 0, &self.head) {
            (0, self.head.len())
        } else {
            return false;
        };
        for (s, span) in self.steps[first..].iter().zip(&mut spans[first..]) {
            let next = (!s.lit.is_empty()).then_some(&s.lit[..]);
            let Some((start, end, after, found)) = field_span(r, pos, &s.d, next, s.last, f) else {
                return false;
            };
            *span = (start, end);
            // A literal found by its search is there; others are checked.
            if !found && !lit_at(r, after, &s.lit) {
                return false;
            }
            pos = after + s.lit.len();
        }
        // Nothing, or anything after a blank: trailing blanks, or fields past
        // the format's last (`field_span`), as GoAccess reads a line with
        // more than its format (also after a last `%t` or literal).
        matches!(r.get(pos), None | Some(b' ' | b'\t'))
    }
}

impl Shape {
    fn of(head: &[u8], steps: &[Step]) -> Shape {
        let bracketed = |s: &Step| s.d.conv == (Conv::Clf { bracketed: true });
        // Ended by the first `lit` after it (`field_span`'s search; these
        // literals start with a space, so even a quoted field's is searched).
        let until = |s: &Step, lit: &[u8]| s.lit == lit && !s.last && !bracketed(s);
        // Ended by the first unescaped `lit` after it.
        let quoted = |s: &Step, lit: &[u8]| s.lit == lit && !s.last && !bracketed(s) && s.d.quoted;
        let common = head.is_empty()
            && steps.len() > SIX
            && steps[..3].iter().all(|s| until(s, b" "))
            && bracketed(&steps[3])
            && steps[3].lit == b" \""
            && quoted(&steps[4], b"\" ")
            && until(&steps[5], b" ");
        let last = |s: &Step| s.last && s.lit == b"\"" && !bracketed(s);
        match steps {
            _ if !common => Shape::Steps,
            [_, _, _, _, _, _, b, r, a] if until(b, b" \"") && quoted(r, b"\" \"") && last(a) => {
                Shape::Combined
            }
            _ => Shape::Common,
        }
    }
}

/// Steps [`common_six`] reads.
const SIX: usize = 6;

/// The first six fields of a record of a format that starts as Apache's
/// common one (`%h %l %u %t "%r" %>s `: common, combined, combinedio and
/// the like), found as the steps' loop in [`Program::split`] finds them,
/// in straight code: where it stops (after the status's space), or `None`
/// where the loop fails.
#[inline(always)]
fn common_six(spans: &mut [(usize, usize)], r: &[u8], f: &impl Finder) -> Option<usize> {
    let mut pos = 0;
    for span in &mut spans[..3] {
        let end = f.find_byte(r, pos, b' ')?;
        *span = (pos, end);
        pos = end + 1;
    }
    if r.get(pos) != Some(&b'[') {
        return None;
    }
    let close = f.find_byte(r, pos + 1, b']')?;
    spans[3] = (pos + 1, close);
    if r.get(close + 1..close + 3) != Some(b" \"") {
        return None;
    }
    pos = close + 3;
    let end = find_unescaped(r, pos, b"\" ", f)?;
    spans[4] = (pos, end);
    pos = end + 2;
    let end = f.find_byte(r, pos, b' ')?;
    spans[5] = (pos, end);
    Some(end + 1)
}

/// A projected field: its step, conversion and batch columns (a request has
/// four: method, path, protocol, request).
struct Out {
    step: usize,
    conv: Conv,
    cols: [Option<usize>; 4],
}

struct LogParser {
    program: Program,
    outs: Vec<Out>,
    spans: Vec<(usize, usize)>,
}

impl FindingParser for LogParser {
    #[inline(always)]
    fn parse_with(&mut self, r: &[u8], out: &mut Columns, f: &impl Finder) -> bool {
        if !self.program.split(&mut self.spans, r, f) {
            return false;
        }
        for o in &self.outs {
            let (s, e) = self.spans[o.step];
            append(&r[s..e], o, out);
        }
        out.end_row();
        true
    }

    /// Records parsed here one after another, until one that is blank, ends
    /// in CR or does not split (a record that does not split appends
    /// nothing, so the caller reads it again and counts it). Without the
    /// per-record wrapper and its dynamic call, the status count over the
    /// 1 GiB log took 0.75 s instead of 0.95 s (user 1.23 s instead of 1.57 s;
    /// medians of 9 interleaved runs, `ci` builds); with LTO, which had already
    /// inlined much of the wrapper, 0.96 s instead of 1.005 s (release, 11 runs).
    fn run(
        &mut self,
        piece: &[u8],
        map: &ByteMap,
        pos: usize,
        room: usize,
        out: &mut Columns,
    ) -> (usize, usize) {
        super::run_records(piece, map, pos, room, |s, e| {
            self.parse_with(&piece[s..e], out, &Mapped { map, base: s })
        })
    }
}

/// Convert and append one projected field of a record that split (inlined
/// into the run: a call per field was 2.5% of the status count, perf).
#[inline(always)]
fn append(v: &[u8], o: &Out, out: &mut Columns) {
    let c = match (&o.conv, o.cols[0]) {
        (Conv::Request, _) => return append_request(v, &o.cols, out),
        (_, Some(c)) => c,
        (_, None) => return,
    };
    match &o.conv {
        Conv::Str => out.str(c, v),
        Conv::Int => {
            let x = converted(out, v, columns::parse_int);
            out.int(c, x)
        }
        Conv::Float => {
            let x = converted(out, v, columns::parse_float);
            out.float(c, x)
        }
        Conv::LenientFloat => out.float(c, columns::parse_float(v)),
        Conv::Clf { .. } => {
            let x = converted(out, v, parse_clf);
            out.time(c, x)
        }
        Conv::Iso => {
            let x = converted(out, v, parse_iso);
            out.time(c, x)
        }
        Conv::Strf(t) => {
            let x = converted(out, v, |v| strf(t, v));
            out.time(c, x)
        }
        Conv::Epoch(unit) => {
            let x = converted(out, v, |v| epoch(*unit, v));
            out.time(c, x)
        }
        Conv::EpochFraction => {
            let x = converted(out, v, epoch_fraction);
            out.time(c, x)
        }
        Conv::Request | Conv::Skip => {}
    }
}

/// A `%{format}t` time's UTC microseconds.
fn strf(t: &Strftime, v: &[u8]) -> Option<i64> {
    t.parse(v).map(|(utc, _)| utc)
}

/// A `%{sec}t`, `%{msec}t` or `%{usec}t` time's UTC microseconds.
fn epoch(unit: i64, v: &[u8]) -> Option<i64> {
    columns::parse_int(v)?.checked_mul(unit)
}

/// An nginx `$msec` time's UTC microseconds: seconds, and up to 6 digits of
/// a fraction (more are cut).
fn epoch_fraction(v: &[u8]) -> Option<i64> {
    let (whole, frac) = match memchr::memchr(b'.', v) {
        Some(dot) => (&v[..dot], &v[dot + 1..]),
        None => (v, &b""[..]),
    };
    if whole.is_empty() || !whole.iter().chain(frac).all(u8::is_ascii_digit) {
        return None;
    }
    let mut micros: i64 = 0;
    for i in 0..6 {
        micros = micros * 10 + frac.get(i).map_or(0, |d| i64::from(d - b'0'));
    }
    columns::parse_int(whole)?
        .checked_mul(1_000_000)?
        .checked_add(micros)
}

/// A typed value: `-` or empty is NULL; a value that does not convert is NULL
/// too, and counted ([`Columns::bad_values`]).
fn converted<T>(out: &mut Columns, v: &[u8], parse: impl Fn(&[u8]) -> Option<T>) -> Option<T> {
    if v == b"-" || v.is_empty() {
        return None;
    }
    let x = parse(v);
    if x.is_none() {
        out.bad_values += 1;
    }
    x
}

/// The first and last space of a request line, when it has two.
fn split_request(v: &[u8]) -> Option<(usize, usize)> {
    let a = memchr::memchr(b' ', v)?;
    let b = memchr::memrchr(b' ', v)?;
    (b > a).then_some((a, b))
}

fn append_request(v: &[u8], cols: &[Option<usize>; 4], out: &mut Columns) {
    let parts = split_request(v);
    let pieces: [Option<&[u8]>; 4] = match parts {
        Some((a, b)) => [
            Some(&v[..a]),
            Some(&v[a + 1..b]),
            Some(&v[b + 1..]),
            Some(v),
        ],
        None => [None, None, None, Some(v)],
    };
    for (j, piece) in pieces.iter().enumerate() {
        if let Some(o) = cols[j] {
            match piece {
                Some(p) => out.str(o, p),
                None => out.null(o),
            }
        }
    }
}

/// Where a field starting at `pos` ends: `(start, end, next position, whether
/// the literal after it was found there)`.
///
/// A field followed only by a closing literal (the user agent's `"`) ends where
/// that literal ends the record, trailing blanks aside: no search through the
/// longest field of the line, and a stray `"` inside it does not cut it. A
/// record that does not end so may carry fields past the format's (a
/// combined log with nginx's `$request_time` added): the field then ends at
/// the literal's first unescaped occurrence followed by a blank, and the rest
/// is not read, as GoAccess reads it (every such line had failed).
#[inline(always)]
fn field_span(
    r: &[u8],
    pos: usize,
    d: &Directive,
    next: Option<&[u8]>,
    last: bool,
    f: &impl Finder,
) -> Option<(usize, usize, usize, bool)> {
    if let Conv::Clf { bracketed: true } = d.conv {
        if r.get(pos) != Some(&b'[') {
            return None;
        }
        let close = f.find_byte(r, pos + 1, b']')?;
        return Some((pos + 1, close, close + 1, false));
    }
    let Some(lit) = next else {
        // The last field: to the record's end, its trailing blanks not read.
        let blanks = r[pos..]
            .iter()
            .rev()
            .take_while(|&&c| c == b' ' || c == b'\t');
        return Some((pos, r.len() - blanks.count(), r.len(), true));
    };
    if last {
        let trimmed = r.len()
            - r.iter()
                .rev()
                .take_while(|&&c| c == b' ' || c == b'\t')
                .count();
        let end = trimmed.checked_sub(lit.len()).filter(|&e| e >= pos);
        if let Some(end) = end.filter(|&e| lit_at(r, e, lit)) {
            return Some((pos, end, end, true));
        }
        // Fields past the format's last (nginx's `$request_time` after a
        // combined line): the literal's first unescaped occurrence, then a
        // blank; the rest is not read, as GoAccess reads such a line.
        let end = find_unescaped(r, pos, lit, f)?;
        let blank = matches!(r.get(end + lit.len()), Some(b' ' | b'\t'));
        return blank.then_some((pos, end, end, true));
    }
    let end = if d.quoted && lit[0] == b'"' {
        find_unescaped(r, pos, lit, f)?
    } else {
        find(r, pos, lit, f)?
    };
    Some((pos, end, end, true))
}

/// `lit` stands at `pos` of `r`. A byte loop: literals are one to three bytes,
/// and a `memcmp` call per literal was 10% of a log scan's time (perf).
#[inline]
fn lit_at(r: &[u8], pos: usize, lit: &[u8]) -> bool {
    match r.get(pos..pos + lit.len()) {
        Some(w) => (0..lit.len()).all(|i| w[i] == lit[i]),
        None => false,
    }
}

/// The first occurrence of `lit` at or after `pos`.
#[inline(always)]
fn find(r: &[u8], mut pos: usize, lit: &[u8], f: &impl Finder) -> Option<usize> {
    loop {
        let at = f.find_byte(r, pos, lit[0])?;
        if lit_at(r, at, lit) {
            return Some(at);
        }
        pos = at + 1;
    }
}

/// Like [`find`], skipping a `"` that a backslash escapes.
#[inline(always)]
fn find_unescaped(r: &[u8], mut pos: usize, lit: &[u8], f: &impl Finder) -> Option<usize> {
    loop {
        let at = f.find_byte(r, pos, lit[0])?;
        // Most quotes have no backslash before them: no count made.
        let escaped = at > 0
            && r[at - 1] == b'\\'
            && r[..at].iter().rev().take_while(|&&c| c == b'\\').count() % 2 == 1;
        if !escaped && lit_at(r, at, lit) {
            return Some(at);
        }
        pos = at + 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bytemap::Plain;

    /// A format string that cannot be read says where, and the message is
    /// the one `wf sql` has always printed.
    #[test]
    fn format_string_errors_say_where() {
        let e = LogFormat::apache("%h %{Referer").err().unwrap();
        assert_eq!(e, FormatError::ApacheBrace { at: 4 });
        assert_eq!(e.to_string(), "LogFormat: '%{' without '}'");
        let e = LogFormat::apache("%h %>").err().unwrap();
        assert_eq!(e, FormatError::PercentAtEnd { at: 3 });
        let e = LogFormat::apache("%h %Z").err().unwrap();
        let at = 4;
        assert_eq!(e, FormatError::Directive { directive: 'Z', at });
        assert_eq!(e.to_string(), "LogFormat: directive '%Z' is not supported");
        let e = LogFormat::nginx("$remote_addr ${x").err().unwrap();
        assert_eq!(e, FormatError::NginxBrace { at: 14 });
        assert_eq!(e.to_string(), "log_format: '${' without '}'");
        let e = LogFormat::nginx("a $ b").err().unwrap();
        assert_eq!(e, FormatError::NginxName { at: 3 });
    }

    /// The formats split in straight code ([`Shape`]) split every record
    /// as the steps' loop does: real lines, and lines with spaces, quotes,
    /// backslashes, brackets and tabs put in, bytes taken out, or cut.
    #[test]
    fn shapes_split_as_the_steps_do() {
        let lines = [
            r#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET /a b HTTP/1.0" 200 2326 "http://x/" "Mozilla/5.0 (X11)""#,
            r#"host.example.com - frank [10/Oct/2000:13:55:36 -0700] "GET /q?\"x\" HTTP/1.1" 404 - "-" "a \"quoted\" agent" 12 34"#,
            r#"::1 - - [01/Jan/2024:00:00:00 +0000] "-" 400 0 "-" "-"  "#,
            r#"v.example:443 1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.0" 200 5 "-" "curl/8""#,
            r#"v.example:80 ::1 - - [10/Oct/2000:13:55:36 -0700] "GET /x\\" HTTP/1.0" 301 - "r" "a b""#,
        ];
        let formats = [
            (COMBINED, Shape::Combined),
            (COMMON, Shape::Common),
            (COMBINEDIO, Shape::Common),
            (
                r#"%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-agent}i" %D"#,
                Shape::Common,
            ),
            (
                r#"%h %l %u %t "%r" %>s %b "%{Referer}i" %{User-agent}i"#,
                Shape::Common,
            ),
            (VCOMBINED, Shape::Steps),
        ];
        let mut x: u64 = 11;
        let mut next = |m: usize| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) as usize % m
        };
        let mut records: Vec<Vec<u8>> = Vec::new();
        for _ in 0..6000 {
            let mut r = lines[next(lines.len())].as_bytes().to_vec();
            for _ in 0..1 + next(3) {
                let at = next(r.len() + 1);
                match next(4) {
                    0 | 1 => r.insert(at, b" \"\\[]\t-"[next(7)]),
                    2 if at < r.len() => {
                        r.remove(at);
                    }
                    _ => r.truncate(at),
                }
            }
            records.push(r);
        }
        for (spec, shape) in formats {
            let items = LogFormat::apache(spec).unwrap().items;
            let shaped = Program::compile(&items);
            assert_eq!(shaped.shape, shape, "{spec}");
            let steps = Program {
                shape: Shape::Steps,
                ..Program::compile(&items)
            };
            let n = steps.steps.len();
            let (mut split, mut kept) = (0, 0);
            for r in &records {
                let (mut a, mut b) = (vec![(0, 0); n], vec![(0, 0); n]);
                let ok = steps.split(&mut a, r, &Plain);
                assert_eq!(shaped.split(&mut b, r, &Plain), ok, "{spec}: {r:?}");
                if ok {
                    assert_eq!(a, b, "{spec}: {:?}", String::from_utf8_lossy(r));
                    kept += 1;
                }
                split += 1;
            }
            assert!(
                kept > split / 10 && kept < split,
                "{spec}: {kept} of {split} split"
            );
        }
    }

    /// A quote ends a quoted field unless an odd number of backslashes
    /// stands before it.
    #[test]
    fn escaped_quotes_are_passed() {
        let at = |r: &str| find_unescaped(r.as_bytes(), 0, b"\" ", &Plain);
        assert_eq!(at(r#"ab" x"#), Some(2));
        assert_eq!(at(r#"a\"b" x"#), Some(4));
        assert_eq!(at(r#"a\\" x"#), Some(3));
        assert_eq!(at(r#"a\\\"b" x"#), Some(6));
        assert_eq!(at(r#"\"" x"#), Some(2));
        assert_eq!(
            at(r#"a"b" x"#),
            Some(3),
            "a quote without the literal's space"
        );
        assert_eq!(at(r#"a\" x"#), None);
    }
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Int64Type, TimestampMicrosecondType};
    use arrow_array::Array;

    fn parse_all(f: &LogFormat, lines: &[&str]) -> (arrow_array::RecordBatch, usize) {
        let proj: Vec<usize> = (0..f.fields().len()).collect();
        let mut p = f.parser(&proj);
        let kinds: Vec<Kind> = f.fields().iter().map(|x| x.kind).collect();
        let mut cols = Columns::new(&kinds);
        let bad = lines
            .iter()
            .filter(|l| !p.parse(l.as_bytes(), &mut cols))
            .count();
        let schema = super::super::schema(f.fields());
        let batch = cols.finish(&schema).unwrap();
        // The same lines as one piece, through the byte map: the same rows.
        let piece = lines.join("\n");
        let mut map = ByteMap::new(&f.needles());
        map.build(piece.as_bytes());
        let mut pos = 0;
        let mut mapped_bad = 0;
        for l in lines {
            let end = pos + l.len();
            mapped_bad += !p.parse_in(piece.as_bytes(), &map, pos, end, &mut cols) as usize;
            pos = end + 1;
        }
        assert_eq!(mapped_bad, bad, "malformed, plain and mapped");
        assert_eq!(
            cols.finish(&schema).unwrap(),
            batch,
            "rows, plain and mapped"
        );
        rows_agree(f, lines, &batch);
        (batch, bad)
    }

    /// The row parser splits the same records and reads the same values as
    /// the columns hold, in the table's order and reversed.
    fn rows_agree(f: &LogFormat, lines: &[&str], b: &arrow_array::RecordBatch) {
        let n = f.fields().len();
        for proj in [(0..n).collect::<Vec<_>>(), (0..n).rev().collect()] {
            let mut p = f.row_parser(&proj).expect("a log format reads rows");
            let mut row = 0;
            for l in lines {
                if !p.split(l.as_bytes()) {
                    continue;
                }
                for (c, &col) in proj.iter().enumerate() {
                    let want = cell(b.column(col), row);
                    assert_eq!(p.value(l.as_bytes(), c), want, "{l}: column {col}");
                    if let Value::Text(t) = want {
                        let field = p.text(l.as_bytes(), c);
                        let within = field.windows(t.len()).any(|w| w == t);
                        assert!(within, "{l}: text of {col}");
                    }
                    if p.verbatim(c) {
                        let text = Value::Text(p.text(l.as_bytes(), c));
                        assert_eq!(want, text, "{l}: column {col} is its text");
                    }
                    let int = p.int(l.as_bytes(), c).map(Value::Int);
                    let want_int = matches!(want, Value::Int(_)).then_some(want);
                    assert_eq!(int, want_int, "{l}: column {col} as an integer");
                }
                row += 1;
            }
            assert_eq!(row, b.num_rows(), "rows split");
            // Every format here has a text field read whole (the client).
            assert!((0..n).any(|c| p.verbatim(c)), "no column is its text");
        }
    }

    /// Row `row` of a column as a [`Value`].
    fn cell(a: &arrow_array::ArrayRef, row: usize) -> Value<'_> {
        use arrow_array::types::Float64Type;
        use arrow_schema::DataType;
        if a.is_null(row) {
            return Value::Null;
        }
        match a.data_type() {
            DataType::Utf8View => Value::Text(a.as_string_view().value(row).as_bytes()),
            DataType::Int64 => Value::Int(a.as_primitive::<Int64Type>().value(row)),
            DataType::Float64 => Value::Float(a.as_primitive::<Float64Type>().value(row)),
            DataType::Timestamp(..) => {
                Value::Time(a.as_primitive::<TimestampMicrosecondType>().value(row))
            }
            t => panic!("no value of {t}"),
        }
    }

    #[test]
    fn combined_columns_and_values() {
        let f = LogFormat::named("combined").unwrap();
        let names: Vec<&str> = f.fields().iter().map(|x| x.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "client",
                "ident",
                "user",
                "time",
                "method",
                "path",
                "protocol",
                "request",
                "status",
                "bytes",
                "referrer",
                "user_agent"
            ]
        );
        let (b, bad) = parse_all(
            &f,
            &[
                r#"127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /a b.gif HTTP/1.0" 200 2326 "http://x/\"q\"" "Mozilla/4.08 [en]""#,
                r#"1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "-" 408 - "-" "-""#,
                r#"short line"#,
                r#"1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "GET / HTTP/1.1" OK - "-" "-""#,
            ],
        );
        // The short line is malformed; the "OK" status makes a row with status NULL.
        assert_eq!(bad, 1);
        assert_eq!(b.num_rows(), 3);
        let path = b.column(5).as_string_view();
        assert_eq!(path.value(0), "/a b.gif");
        assert!(path.is_null(1));
        assert_eq!(b.column(7).as_string_view().value(1), "-");
        assert_eq!(b.column(8).as_primitive::<Int64Type>().value(0), 200);
        assert!(b.column(9).as_primitive::<Int64Type>().is_null(1));
        assert_eq!(b.column(10).as_string_view().value(0), r#"http://x/\"q\""#);
        assert_eq!(b.column(11).as_string_view().value(0), "Mozilla/4.08 [en]");
        let t = b.column(3).as_primitive::<TimestampMicrosecondType>();
        assert_eq!(t.value(0), 971_211_336_000_000);
    }

    /// Fields past the format's last, after a blank (nginx's
    /// `$request_time`), are not read: the line is a row, as GoAccess reads
    /// it; a quote run on into more text still fails it. Every such line
    /// had failed. (A last field that is quoted ends the line's last quote:
    /// `auto` reads that log as `nginx-main`.)
    #[test]
    fn fields_past_the_formats_are_not_read() {
        let f = LogFormat::named("combined").unwrap();
        let line =
            r#"1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "GET / HTTP/1.1" 200 5 "-" "curl/8 \"x\"""#;
        let (b, bad) = parse_all(
            &f,
            &[
                &format!("{line} 0.123"),
                &format!("{line}\t0.123 -"),
                &format!("{line}x 0.1"),
                line,
            ],
        );
        assert_eq!((b.num_rows(), bad), (3, 1));
        for row in 0..3 {
            assert_eq!(b.column(11).as_string_view().value(row), r#"curl/8 \"x\""#);
            assert_eq!(b.column(9).as_primitive::<Int64Type>().value(row), 5);
        }
        // A format written with a trailing space, which nginx copies into
        // its lines (every line failed).
        let f = LogFormat::nginx(r#"$remote_addr "$request" $status "$http_user_agent" "#).unwrap();
        let line = r#"1.2.3.4 "GET / HTTP/1.1" 200 "curl/8""#;
        let lines = [format!("{line} "), line.to_string(), format!("{line} 0.5")];
        let (b, bad) = parse_all(&f, &lines.iter().map(|l| l.as_str()).collect::<Vec<_>>());
        assert_eq!((b.num_rows(), bad), (3, 0));
        let agent = f
            .fields()
            .iter()
            .position(|x| x.name == "user_agent")
            .unwrap();
        for row in 0..3 {
            assert_eq!(b.column(agent).as_string_view().value(row), "curl/8");
        }
        // A format ending in a field and a space, and a last field's
        // trailing blanks: not read (the status was NULL, or the line failed).
        for spec in ["$remote_addr $status ", "$remote_addr $status"] {
            let f = LogFormat::nginx(spec).unwrap();
            let (b, bad) = parse_all(&f, &["1.2.3.4 200 ", "5.6.7.8 404", "9.9.9.9 301 \t"]);
            assert_eq!((b.num_rows(), bad), (3, 0), "{spec:?}");
            let status = b.column(1).as_primitive::<Int64Type>();
            assert_eq!(status.values().to_vec(), [200, 404, 301], "{spec:?}");
        }
    }

    #[test]
    fn nginx_format_with_numbers() {
        let f = LogFormat::nginx(
            r#"$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent $request_time $upstream_response_time"#,
        )
        .unwrap();
        let names: Vec<&str> = f.fields().iter().map(|x| x.name.as_str()).collect();
        assert_eq!(names[..4], ["client", "user", "time", "method"]);
        assert_eq!(
            names[names.len() - 2..],
            ["request_time", "upstream_response_time"]
        );
        let (b, bad) = parse_all(
            &f,
            &[
                r#"10.0.0.1 - - [01/Jan/2026:00:00:00 +0000] "GET /api HTTP/1.1" 502 0 0.250 0.100, 0.150"#,
                r#"10.0.0.1 - - [01/Jan/2026:00:00:00 +0000] "GET /api HTTP/1.1" 200 10 x 0.1"#,
            ],
        );
        // "x" is no request_time: a row with NULL there, not a malformed line.
        assert_eq!((b.num_rows(), bad), (2, 0));
        let n = b.num_columns();
        assert!(b.column(n - 1).is_null(0));
    }

    #[test]
    fn apache_directives_with_modifiers() {
        let f =
            LogFormat::apache(r#"%h %{X-Forwarded-For}i %>s %D %400,501{User-agent}i"#).unwrap();
        let names: Vec<&str> = f.fields().iter().map(|x| x.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "client",
                "x_forwarded_for",
                "status",
                "duration_us",
                "user_agent"
            ]
        );
        assert!(LogFormat::apache("%h %Z").is_err());
    }

    /// A format copied from httpd.conf or nginx.conf, backslash escapes and
    /// all, reads the lines its server wrote.
    #[test]
    fn config_escapes_are_read_as_the_servers_read_them() {
        let line =
            r#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.0" 200 2 "-" "curl/8""#;
        let combined = parse_all(&LogFormat::named("combined").unwrap(), &[line]).0;
        let apache = r#"%h %l %u %t \"%r\" %>s %b \"%{Referer}i\" \"%{User-agent}i\""#;
        let nginx = r#"$remote_addr - $remote_user [$time_local] \"$request\" $status $body_bytes_sent \"$http_referer\" \"$http_user_agent\""#;
        let (a, bad) = parse_all(&LogFormat::apache(apache).unwrap(), &[line]);
        assert_eq!((a.columns(), bad), (combined.columns(), 0));
        let (n, bad) = parse_all(&LogFormat::nginx(nginx).unwrap(), &[line]);
        assert_eq!((n.num_rows(), bad), (1, 0));
        assert_eq!(n.column(2), combined.column(3), "time");
        // A tab, and a backslash before anything else stays one.
        let f = LogFormat::nginx(r"$remote_addr\t$status\x$request_time").unwrap();
        let (b, bad) = parse_all(&f, &["1.2.3.4\t200\\x0.5", "1.2.3.4 200\\x0.5"]);
        assert_eq!((b.num_rows(), bad), (1, 1));
        assert_eq!(b.column(1).as_primitive::<Int64Type>().value(0), 200);
    }

    /// nginx's `$msec` is the time (seconds with a fraction) when the
    /// format has no other: a log of only it had no day in `wf report`.
    /// Beside `$time_local` it is a number, `msec`.
    #[test]
    fn nginx_msec_is_the_time_alone() {
        let f = LogFormat::nginx("$remote_addr [$msec] $status").unwrap();
        let names: Vec<&str> = f.fields().iter().map(|x| x.name.as_str()).collect();
        assert_eq!(names, ["client", "time", "status"]);
        let lines = [
            "1.2.3.4 [1705511132.123] 200",
            "1.2.3.4 [1705511132] 200",
            "1.2.3.4 [1705511132.1234567] 200",
            "1.2.3.4 [-] 200",
            "1.2.3.4 [17055x1132.1] 200",
        ];
        let (b, _) = parse_all(&f, &lines);
        let t = b.column(1).as_primitive::<TimestampMicrosecondType>();
        let want = [
            Some(1_705_511_132_123_000),
            Some(1_705_511_132_000_000),
            Some(1_705_511_132_123_456),
            None,
            None,
        ];
        for (i, w) in want.iter().enumerate() {
            assert_eq!(t.is_valid(i).then(|| t.value(i)), *w, "{}", lines[i]);
        }
        let f = LogFormat::nginx("$remote_addr [$time_local] $msec $status").unwrap();
        let names: Vec<&str> = f.fields().iter().map(|x| x.name.as_str()).collect();
        assert_eq!(names, ["client", "time", "msec", "status"]);
    }

    /// Apache's `%{format}t`: a strftime pattern of a whole time or seconds
    /// (milli-, microseconds) since the epoch is the `time` column (it was
    /// read and dropped: a report of such a log had no day); the pieces of
    /// a time written in three (Apache's example of a time in milliseconds)
    /// are read, and the whole-time piece kept; a zone of its own layout
    /// is found by `zone_of`.
    #[test]
    fn apache_custom_times() {
        let time = |format: &str, line: &str| {
            let f = LogFormat::apache(format).unwrap();
            let names: Vec<&str> = f.fields().iter().map(|x| x.name.as_str()).collect();
            assert_eq!(names, ["client", "time", "status"], "{format}");
            // The line with its time `-`, then `x`: NULL.
            let (open, close) = (line.find('[').unwrap(), line.find(['.', ']']).unwrap());
            let null = |v: &str| format!("{}{v}{}", &line[..=open], &line[close..]);
            let (dash, x) = (null("-"), null("x"));
            let (b, bad) = parse_all(&f, &[line, &dash, &x]);
            assert_eq!((b.num_rows(), bad), (3, 0), "{format}");
            let t = b.column(1).as_primitive::<TimestampMicrosecondType>();
            assert!(t.is_null(1) && t.is_null(2), "{format}");
            (t.value(0), f.zone_of(line.as_bytes()))
        };
        let at = 971_211_336_000_000; // 10/Oct/2000:13:55:36 -0700
        let local = at - 7 * 3_600_000_000;
        let cases = [
            (
                "%h [%{%Y-%m-%d %H:%M:%S}t] %>s",
                "1.2.3.4 [2000-10-10 13:55:36] 200",
                local,
                None,
            ),
            (
                "%h [%{begin:%d/%b/%Y:%T %z}t] %>s",
                "1.2.3.4 [10/Oct/2000:13:55:36 -0700] 200",
                at,
                Some(-25200),
            ),
            (
                "%h [%{end:%Y/%m/%d %T %z}t] %>s",
                "1.2.3.4 [2000/10/10 13:55:36 -0700] 200",
                at,
                Some(-25200),
            ),
            ("%h [%{sec}t] %>s", "1.2.3.4 [971211336] 200", at, None),
            (
                "%h [%{msec}t] %>s",
                "1.2.3.4 [971211336250] 200",
                at + 250_000,
                None,
            ),
            (
                "%h [%{usec}t] %>s",
                "1.2.3.4 [971211336250001] 200",
                at + 250_001,
                None,
            ),
            (
                "%h [%{%d/%b/%Y %T}t.%{msec_frac}t %{%z}t] %>s",
                "1.2.3.4 [10/Oct/2000 13:55:36.250 -0700] 200",
                local,
                None,
            ),
        ];
        for (format, line, want, zone) in cases {
            assert_eq!(time(format, line), (want, zone), "{format}");
        }
        let f = LogFormat::apache("%h %{%H:%M}t %>s").unwrap();
        assert_eq!(f.fields().len(), 2, "a piece of a time is not a column");
    }
}
