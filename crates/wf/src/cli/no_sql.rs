//! `wf sql` in a build without the `sql` feature (`cargo build --release
//! --no-default-features`, the quick first build: no DataFusion to compile). The
//! command is still known, so that `wf sql ...` says how to get it rather than
//! "unrecognized subcommand".

use std::process::ExitCode;

use clap::Args;

pub(crate) const SQL_ABOUT: &str = "SQL over logs and delimited files (Apache DataFusion). \
This wf was built without it: build with the default features (`cargo build --release`).";

pub(crate) const SQL_EXIT: &str = "Exit status: 2 (this build has no SQL).";

#[derive(Args)]
pub(crate) struct SqlArgs {
    /// The query and its arguments (ignored in this build).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    rest: Vec<String>,
}

pub(crate) fn run(_: &SqlArgs) -> ExitCode {
    wf_core::warn!(
        "wf sql: this wf was built without SQL (the `sql` feature, Apache DataFusion); \
         build it with `cargo build --release`"
    );
    ExitCode::from(2)
}
