//! report: turns finished states and run measurements into text, JSON or plots.
//!
//! Kept apart from the jobs so a job's hot loop never formats anything and the same
//! state can be printed for people (`text`) or machines (`--json`).

pub mod count;
pub mod pangram;
pub mod stats;
pub mod visible;
pub mod warn;
pub mod wf2;
