//! `cargo loadbench`: builds the bench targets that use loadbench, runs their scenarios and
//! prints one table of results.
//!
//! `main` only parses the command line and maps the outcome to an exit code; the pipeline is in
//! [`app`].

mod app;
mod build;
mod cli;
mod discover;
mod error;
mod run;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // Bad flags exit here with clap's message and code 2 (the documented usage-error code).
    let cli::Cargo::Loadbench(args) = cli::Cargo::parse();
    match app::run(&args) {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::from(err.exit_code())
        }
    }
}
