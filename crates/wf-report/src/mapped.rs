//! JSON-lines access logs whose fields are mapped to the report's: Caddy's
//! (`--format caddy`), Traefik's (`--format traefik`), or any other with
//! `--format 'json:client=...,time=...'`.
//!
//! `wf sql`'s `jsonl` format makes columns of the top-level keys only, and
//! Caddy's log nests what the report needs (`request.client_ip`,
//! `request.headers.User-Agent[0]`); so this format reads each line with
//! serde_json and picks the mapped values by path: keys separated by `.`, an
//! array standing for its first element, alternatives separated by `|` (the
//! first present wins: Caddy before 2.7 has no `client_ip`). It yields the
//! columns the report's job reads from every format (`client`, `time`,
//! `request`, `status`, `bytes`, `referrer`, `user_agent`, `vhost`); the
//! request line is `method uri protocol` when those are mapped apart, and
//! is split again by GoAccess's rules as a text log's is.
//!
//! Values: a time is a number of seconds since the epoch (Caddy's default
//! `ts`; milli-, micro- or nanoseconds from 10^11 up, see [`time`]) or an
//! ISO 8601 / CLF text (its zone is the log's zone, read back by
//! `rules::local_offset`); numbers may be JSON numbers or texts. A line that
//! is not a JSON object is a failed line; a missing client, status or time
//! too, as in a text log.

use serde_json::Value;
use wf_formats::{Columns, Field, Format, Kind, Parser};

/// A mapped JSON-lines format.
#[derive(Debug, Clone)]
pub struct Mapped {
    name: String,
    fields: Vec<Field>,
    /// Per field: its alternative paths.
    paths: Vec<Vec<Vec<String>>>,
    /// The request line's parts (method, uri, protocol), when mapped apart.
    parts: Option<[Vec<Vec<String>>; 3]>,
}

/// A mapping the format cannot use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MappingError {
    /// An entry that is not `name=path`.
    Entry(String),
    /// A name the report has no column for.
    Name(String),
    /// The client, status, or request (or method and uri) is not mapped.
    Missing(&'static str),
}

impl std::fmt::Display for MappingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MappingError::Entry(e) => write!(f, "json mapping entry '{e}' is not name=path"),
            MappingError::Name(n) => write!(
                f,
                "json mapping: no report column '{n}' (client, time, request, method, uri, \
                 protocol, status, bytes, referrer, user_agent, vhost)"
            ),
            MappingError::Missing(n) => write!(f, "json mapping: '{n}' must be mapped"),
        }
    }
}

impl std::error::Error for MappingError {}

/// Caddy's access log (`log { format json }`, the default): `ts` in seconds.
pub const CADDY: &str = "client=request.client_ip|request.remote_ip,time=ts,\
method=request.method,uri=request.uri,protocol=request.proto,status=status,bytes=size,\
referrer=request.headers.Referer,user_agent=request.headers.User-Agent,vhost=request.host";

/// Traefik's access log (`accessLog.format: json`); the agent and referrer
/// are there when its `fields.headers` keeps them.
pub const TRAEFIK: &str = "client=ClientHost,time=StartLocal|StartUTC|time,\
method=RequestMethod,uri=RequestPath,protocol=RequestProtocol,status=DownstreamStatus|OriginStatus,\
bytes=DownstreamContentSize|OriginContentSize,referrer=request_Referer,\
user_agent=request_User-Agent,vhost=RequestHost";

const NAMES: &[(&str, Kind)] = &[
    ("client", Kind::Str),
    ("time", Kind::Time),
    ("request", Kind::Str),
    ("status", Kind::Int),
    ("bytes", Kind::Int),
    ("referrer", Kind::Str),
    ("user_agent", Kind::Str),
    ("vhost", Kind::Str),
];

fn paths(spec: &str) -> Vec<Vec<String>> {
    spec.split('|')
        .map(|p| p.split('.').map(str::to_owned).collect())
        .collect()
}

impl Mapped {
    /// `--format caddy`, `traefik` or `json:name=path,...`; `None` for
    /// another format.
    pub fn from_spec(spec: &str) -> Option<Result<Mapped, MappingError>> {
        // Names in any case (GoAccess's are upper case, `CADDY`); a
        // mapping's keys as written.
        let (name, mapping) = match spec.to_ascii_lowercase().as_str() {
            "caddy" => ("caddy", CADDY),
            "traefik" => ("traefik", TRAEFIK),
            _ => ("json", spec.strip_prefix("json:")?),
        };
        Some(Mapped::new(name, mapping))
    }

    pub fn new(name: &str, mapping: &str) -> Result<Mapped, MappingError> {
        let mut by_name: Vec<(String, Vec<Vec<String>>)> = Vec::new();
        for entry in mapping.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let (n, p) = entry
                .split_once('=')
                .ok_or_else(|| MappingError::Entry(entry.to_owned()))?;
            let n = n.trim();
            let known = NAMES.iter().any(|(k, _)| *k == n);
            if !known && !matches!(n, "method" | "uri" | "protocol") {
                return Err(MappingError::Name(n.to_owned()));
            }
            by_name.push((n.to_owned(), paths(p.trim())));
        }
        let get = |n: &str| by_name.iter().find(|(k, _)| k == n).map(|(_, p)| p.clone());
        let parts = match (get("method"), get("uri"), get("protocol")) {
            (Some(m), Some(u), p) => Some([m, u, p.unwrap_or_default()]),
            _ => None,
        };
        let mut fields = Vec::new();
        let mut all = Vec::new();
        for &(n, kind) in NAMES {
            let p = match (n, get(n)) {
                (_, Some(p)) => p,
                ("request", None) if parts.is_some() => Vec::new(),
                _ => continue,
            };
            fields.push(Field::new(n, kind));
            all.push(p);
        }
        for need in ["client", "status", "request"] {
            if !fields.iter().any(|f| f.name == need) {
                return Err(MappingError::Missing(need));
            }
        }
        Ok(Mapped {
            name: format!("{name}:{mapping}"),
            fields,
            paths: all,
            parts,
        })
    }

    /// Caddy or Traefik, if the sample's first JSON object looks like
    /// either's access log (for `--format auto`).
    pub fn detect(sample: &[u8]) -> Option<Mapped> {
        let line = wf_formats::sample_lines(sample, 1)
            .into_iter()
            .next()
            .or_else(|| (!sample.is_empty()).then_some(sample))?;
        let v: Value = serde_json::from_slice(line).ok()?;
        let has = |path: &str| {
            lookup(&v, &path.split('.').map(str::to_owned).collect::<Vec<_>>()).is_some()
        };
        let spec = if has("request.uri") && has("status") && has("request.method") {
            "caddy"
        } else if has("ClientHost") && has("RequestPath") && has("DownstreamStatus") {
            "traefik"
        } else {
            return None;
        };
        Mapped::from_spec(spec)?.ok()
    }
}

/// The value at `path`; an array stands for its first element.
fn lookup<'a>(v: &'a Value, path: &[String]) -> Option<&'a Value> {
    let mut v = v;
    for key in path {
        v = first(v).as_object()?.get(key)?;
    }
    let v = first(v);
    (!v.is_null()).then_some(v)
}

fn first(v: &Value) -> &Value {
    match v {
        Value::Array(a) => a.first().unwrap_or(&Value::Null),
        v => v,
    }
}

fn pick<'a>(v: &'a Value, alternatives: &[Vec<String>]) -> Option<&'a Value> {
    alternatives.iter().find_map(|p| lookup(v, p))
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn int(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64().or_else(|| n.as_f64().map(|f| f as i64)),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// Seconds since the epoch (a number), or an ISO 8601 or CLF text. A number
/// of 10^11 or more is in milli-, micro- or nanoseconds (Caddy's
/// `time_format unix_milli_float`, `unix_nano`), by its size: 10^11 seconds
/// is the year 5138, and such a log's days were 56015-07-01.
fn time(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => {
            if let Some(i) = n
                .as_i64()
                .filter(|i| i.unsigned_abs() >= 100_000_000_000_000_000)
            {
                return Some(i.div_euclid(1000));
            }
            let s = n.as_f64()?;
            let micros_per = match s.abs() {
                a if a < 1e11 => 1e6,
                a if a < 1e14 => 1e3,
                a if a < 1e17 => 1.0,
                _ => 1e-3,
            };
            let us = (s * micros_per).round();
            (us.is_finite() && us.abs() < 9.2e18).then_some(us as i64)
        }
        Value::String(s) => wf_formats::time::parse_any(s.as_bytes()),
        _ => None,
    }
}

impl Format for Mapped {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn fields(&self) -> &[Field] {
        &self.fields
    }

    fn parser(&self, projection: &[usize]) -> Box<dyn Parser> {
        Box::new(MappedParser {
            format: self.clone(),
            projection: projection.to_vec(),
        })
    }
}

struct MappedParser {
    format: Mapped,
    projection: Vec<usize>,
}

impl MappedParser {
    /// The request line: mapped whole, or `method uri protocol`.
    fn request(&self, v: &Value, field: usize) -> Option<String> {
        let Some(parts) = &self.format.parts else {
            return pick(v, &self.format.paths[field]).map(text);
        };
        let texts: Vec<String> = parts.iter().filter_map(|p| pick(v, p).map(text)).collect();
        (!texts.is_empty()).then(|| texts.join(" "))
    }
}

impl Parser for MappedParser {
    fn parse(&mut self, record: &[u8], out: &mut Columns) -> bool {
        let Ok(v) = serde_json::from_slice::<Value>(record) else {
            return false;
        };
        if !v.is_object() {
            return false;
        }
        for (col, &f) in self.projection.iter().enumerate() {
            let field = &self.format.fields[f];
            let value = pick(&v, &self.format.paths[f]);
            match (field.name.as_str(), field.kind) {
                ("request", _) => match self.request(&v, f) {
                    Some(r) => out.str(col, r.as_bytes()),
                    None => out.null(col),
                },
                (_, Kind::Time) => out.time(col, value.and_then(time)),
                (_, Kind::Int) => out.int(col, value.and_then(int)),
                _ => match value {
                    Some(x) => out.str(col, text(x).as_bytes()),
                    None => out.null(col),
                },
            }
        }
        out.end_row();
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Caddy's numeric `ts` in seconds, milli-, micro- or nanoseconds is
    /// one instant (read as seconds, milliseconds were the year 56015).
    #[test]
    fn epoch_numbers_in_any_unit_are_one_instant() {
        let want = Some(1_705_511_132_500_000);
        for v in [
            serde_json::json!(1_705_511_132.5),
            serde_json::json!(1_705_511_132_500.0),
            serde_json::json!(1_705_511_132_500_i64),
            serde_json::json!(1_705_511_132_500_000_i64),
            serde_json::json!(1_705_511_132_500_000_000_i64),
        ] {
            assert_eq!(time(&v), want, "{v}");
        }
        assert_eq!(time(&serde_json::json!(0.25)), Some(250_000));
        assert_eq!(time(&serde_json::json!(1e300)), None);
    }

    #[test]
    fn mappings_parse_and_say_what_is_wrong() {
        let c = Mapped::from_spec("caddy").unwrap().unwrap();
        let names: Vec<&str> = c.fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "client",
                "time",
                "request",
                "status",
                "bytes",
                "referrer",
                "user_agent",
                "vhost"
            ]
        );
        assert!(Mapped::from_spec("combined").is_none());
        let bad = |s: &str| Mapped::from_spec(s).unwrap().unwrap_err();
        assert_eq!(
            bad("json:client=a,status=b"),
            MappingError::Missing("request")
        );
        assert_eq!(bad("json:client=a,foo=b"), MappingError::Name("foo".into()));
        assert_eq!(bad("json:client"), MappingError::Entry("client".into()));
    }

    #[test]
    fn caddy_and_traefik_lines_are_recognised() {
        let caddy = br#"{"level":"info","ts":1700000000.5,"request":{"remote_ip":"1.2.3.4","method":"GET","uri":"/a","proto":"HTTP/2.0","headers":{"User-Agent":["curl/8"]}},"status":200,"size":5}"#;
        assert_eq!(
            Mapped::detect(caddy).unwrap().name.split(':').next(),
            Some("caddy")
        );
        let traefik = br#"{"ClientHost":"1.2.3.4","DownstreamStatus":200,"RequestPath":"/","RequestMethod":"GET"}"#;
        let t = Mapped::detect(traefik).unwrap();
        assert!(t.name.starts_with("traefik:"));
        assert!(Mapped::detect(b"1.2.3.4 - - [x]").is_none());
    }
}
