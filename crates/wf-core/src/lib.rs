//! widefinder's floor without Arrow: read big text as fast as the disk or the
//! page cache delivers it, on every core, and combine the results.
//!
//! Layout (a picture of the design): [`scan`] reads bytes (inputs, chunk plan,
//! threads, I/O); [`jobs`] decide what to compute on whole records, in per-thread
//! state; [`feed`] sends the same chunk plan to worker processes; [`report`] prints
//! finished states; [`bench`] measures runs; [`gen`] makes test data.
//!
//! Why a crate of its own: these jobs, their tests and fuzz targets build in
//! seconds; the parsers to Arrow columns are `wf-formats`, the query engine is
//! `wf-sql`, and nothing here may use either (the compiler now keeps the floors).

pub mod bench;
pub mod cleanup;
pub mod feed;
pub mod gen;
pub mod jobs;
pub mod report;
pub mod scan;
