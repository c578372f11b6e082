//! `wf report`: the web-log dashboard (issue 38). `job` is the scan job
//! (records parsed by wf-formats, counted per thread into `acc`, by GoAccess's
//! `rules`), `report` the finished report (GoAccess's JSON shape), `output`
//! its text and page; what a user agent is (`agent`, `bots`) and the
//! self-contained HTML page (`html`) do not depend on the scan.
//!
//! Issue 38 asks for GoAccess's dashboard on wf's scan. `DESIGN.md` beside
//! this crate's `Cargo.toml` holds what was measured of GoAccess 1.7 (its
//! panels, its unique-visitor rule, its JSON's field names, its speed) and
//! where this crate's answers will differ from it. The data and code of
//! others (uap-core's regexes, the crawler list, uPlot) are vendored under
//! `assets/` with their licences, versions and checksums (`assets/README.md`),
//! and compiled in: the build downloads nothing and the page requests nothing.

pub mod acc;
pub mod agent;
pub mod bots;
mod codec;
pub mod combine;
pub mod html;
pub mod intern;
pub mod job;
pub mod mapped;
pub mod needs;
pub mod output;
pub mod pairs;
pub mod partial;
pub mod report;
pub mod resolve;
pub mod rules;
pub mod run;
pub mod spill;
pub mod tally;

use std::sync::Arc;

pub use job::{BotMode, FormatError, ReportJob};
pub use report::Report;
pub use run::SetupError;
/// The named web log formats (`wf_formats::clf::NAMED`), for the `wf`
/// built without sql, which reaches wf-formats only through this crate
/// (`--since`'s `--format` names them).
pub use wf_formats::clf::NAMED as NAMED_FORMATS;

/// The format of `--format` (`auto` reads `sample`, the start of the first
/// input): `wf sql`'s formats, and JSON lines with a field mapping
/// (`caddy`, `traefik`, `json:name=path,...`: `mapped`).
pub fn format(spec: &str, sample: &[u8]) -> Result<Arc<dyn wf_formats::Format>, SetupError> {
    let spec = goaccess_format(spec).unwrap_or(spec);
    if let Some(m) = mapped::Mapped::from_spec(spec) {
        return Ok(Arc::new(m.map_err(SetupError::Mapping)?));
    }
    if spec == "auto" {
        if let Some(m) = mapped::Mapped::detect(sample) {
            return Ok(Arc::new(m));
        }
    }
    match wf_formats::from_spec(spec, &wf_formats::FormatOptions::default(), sample) {
        Err(wf_formats::FormatError::Unknown(s)) => Err(SetupError::Unknown(s)),
        r => r.map_err(SetupError::Format),
    }
}

/// GoAccess's predefined log formats written out as its `goaccess.conf`
/// writes them, with the format wf reads them as: a user's `--log-format`
/// copied from GoAccess's settings. Its other specifiers (`%^`, `%d:%t`
/// with `--date-format`) are not read: another GoAccess format string is an
/// unknown format, whose message says how to write it
/// ([`SetupError::Unknown`]).
const GOACCESS: [(&str, &str); 4] = [
    (r#"%h %^[%d:%t %^] "%r" %s %b "%R" "%u""#, "combined"),
    (r#"%v:%^ %h %^[%d:%t %^] "%r" %s %b "%R" "%u""#, "vcombined"),
    (r#"%h %^[%d:%t %^] "%r" %s %b"#, "common"),
    (r#"%v:%^ %h %^[%d:%t %^] "%r" %s %b"#, "vcommon"),
];

/// The format wf reads GoAccess's `spec` as, if it is one of [`GOACCESS`].
fn goaccess_format(spec: &str) -> Option<&'static str> {
    let spec = spec.trim();
    let is = |(g, _): &&(&str, &str)| g.eq_ignore_ascii_case(spec);
    GOACCESS.iter().find(is).map(|(_, wf)| *wf)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// GoAccess's predefined formats, by name or written out as its
    /// goaccess.conf writes them, are wf's; another GoAccess format string,
    /// or a server's format without its prefix, is refused saying how to
    /// write it.
    #[test]
    fn goaccess_formats_are_read_or_explained() {
        let read = |spec: &str| format(spec, b"").map(|f| f.name());
        assert_eq!(
            read(r#"%h %^[%d:%t %^] "%r" %s %b "%R" "%u""#).unwrap(),
            "combined"
        );
        assert_eq!(read(r#" %h %^[%d:%t %^] "%r" %s %b "#).unwrap(), "common");
        let vcombined = r#"%v:%^ %h %^[%d:%t %^] "%r" %s %b "%R" "%u""#;
        assert_eq!(read(vcombined).unwrap(), "vcombined");
        assert_eq!(
            read(r#"%v:%^ %h %^[%d:%t %^] "%r" %s %b"#).unwrap(),
            "vcommon"
        );
        assert_eq!(read("VCOMMON").unwrap(), "vcommon");
        let said = |spec: &str| format(spec, b"").err().unwrap().to_string();
        let other = said(r#"%h %^[%d:%t %^] "%r" %s %b "%R" "%u" %T"#);
        assert!(
            other.contains("GoAccess's log-format specifiers are not read"),
            "{other}"
        );
        assert!(other.contains("caddy, traefik"), "{other}");
        let apache = said(r#"%h %l %u %t "%r" %>s %b"#);
        assert!(
            apache.ends_with(r#"apache:'%h %l %u %t "%r" %>s %b'"#),
            "{apache}"
        );
        let nginx = said("$remote_addr [$time_local]");
        assert!(
            nginx.ends_with("nginx:'$remote_addr [$time_local]'"),
            "{nginx}"
        );
        assert!(said("bogus").ends_with("json:NAME=PATH,...)"));
    }
}
