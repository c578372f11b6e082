//! widefinder: read big text as fast as the disk or the page cache delivers it,
//! on every core, and combine the results.
//!
//! Layout (a picture of the design): [`scan`] reads bytes (inputs, chunk plan,
//! threads, I/O); [`jobs`] decide what to compute on whole records, in per-thread
//! state; [`feed`] sends the same chunk plan to worker processes; [`report`] prints
//! finished states; [`bench`] measures runs; [`gen`] makes test data.

/// The Arrow crate `wf`'s batches are made with (for the Python package).
pub use datafusion::arrow;

pub mod bench;
pub mod feed;
pub mod formats;
pub mod gen;
pub mod jobs;
pub mod report;
pub mod scan;
pub mod sql;
