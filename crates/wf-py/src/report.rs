//! `widefinder.report`: the report of `wf report --json`, made by the same
//! library call as the CLI's (`wf_report::run::run`: the format chosen from
//! the first input, the scan, the report), so the dict is the CLI's JSON;
//! `resolve=True` names the hosts as `--resolve` does.

use std::path::PathBuf;

use pyo3::prelude::*;
use wf_report::resolve::Resolver;
use wf_report::run::{run, Settings};
use wf_report::BotMode;

use crate::{collect, raise_input_errors, scan_options, value_error};

/// `wf report --json` over `paths`.
#[pyfunction]
#[pyo3(signature = (paths, format="auto".to_string(), bots="include".to_string(), max_rows=1000, threads=None, chunk_size=None, resolve=false))]
#[allow(clippy::too_many_arguments)] // Python's keyword arguments, one each
pub(crate) fn report(
    py: Python<'_>,
    paths: Vec<PathBuf>,
    format: String,
    bots: String,
    max_rows: usize,
    threads: Option<usize>,
    chunk_size: Option<u64>,
    resolve: bool,
) -> PyResult<String> {
    let bots = match bots.as_str() {
        "include" => BotMode::Include,
        "exclude" => BotMode::Exclude,
        "only" => BotMode::Only,
        other => {
            return Err(value_error(format!(
                "bots must be include, exclude or only, not {other:?}"
            )))
        }
    };
    let settings = Settings {
        format,
        bots,
        max_rows,
    };
    let inputs = collect(paths)?;
    let opts = scan_options(threads, chunk_size)?;
    let mut done = py
        .detach(|| run(inputs, &settings, &opts, None))
        .map_err(value_error)?;
    raise_input_errors(&done.errors)?;
    // An input with no line read in the format: `wf report` exits 2, this
    // raises.
    if let Some(e) = done.unread().first() {
        return Err(value_error(e.to_string()));
    }
    if resolve {
        // As `wf report --resolve --json`: the hosts' rows kept get names.
        let hosts = &mut done.report.hosts;
        py.detach(|| Resolver::default().fill(hosts, usize::MAX));
    }
    Ok(py.detach(|| wf_report::report::json(&done.report)))
}
