//! `wf gen`: synthetic test data. The same seed and size give the same bytes on
//! any machine, at any thread count: `blocks` cuts the output into fixed blocks
//! made on worker threads and written in order, `random` draws with integer-only
//! helpers, `strs` keeps many strings in one buffer; `wf2` makes Wide Finder 2
//! logs with them; `onebrc` makes One Billion Row Challenge rows (serial: it
//! is test data for `wf sql`, 75 million rows in a few seconds).

mod blocks;
pub mod onebrc;
mod random;
mod strs;
mod wf2;

pub use wf2::{wf2, wf2_days};
