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
    if let Some(m) = mapped::Mapped::from_spec(spec) {
        return Ok(Arc::new(m.map_err(SetupError::Mapping)?));
    }
    if spec == "auto" {
        if let Some(m) = mapped::Mapped::detect(sample) {
            return Ok(Arc::new(m));
        }
    }
    wf_formats::from_spec(spec, &wf_formats::FormatOptions::default(), sample)
        .map_err(SetupError::Format)
}
