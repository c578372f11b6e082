//! `wf report`'s parts that do not depend on the scan: what a user agent is
//! (`agent`, `bots`) and the self-contained HTML page (`html`).
//!
//! Issue 38 asks for GoAccess's dashboard on wf's scan. `DESIGN.md` beside
//! this crate's `Cargo.toml` holds what was measured of GoAccess 1.7 (its
//! panels, its unique-visitor rule, its JSON's field names, its speed) and
//! where this crate's answers will differ from it. The data and code of
//! others (uap-core's regexes, the crawler list, uPlot) are vendored under
//! `assets/` with their licences, versions and checksums (`assets/README.md`),
//! and compiled in: the build downloads nothing and the page requests nothing.

pub mod agent;
pub mod bots;
pub mod html;
