//! `cargo loadbench`: builds the bench targets that use loadbench, runs their scenarios, checks
//! their thresholds, compares them with a baseline and writes the results.
//!
//! `main` only parses the command line and maps the outcome to an exit code; the pipeline is in
//! [`app`], and that of `cargo loadbench url` in [`oneshot`].

mod app;
mod baseline;
mod build;
mod cli;
mod compare;
mod discover;
mod error;
mod gate;
mod merge;
mod oneshot;
mod output;
mod run;
mod settings;
mod targets;
mod versioned;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli::Cargo::Loadbench(args) = match cli::Cargo::try_parse() {
        Ok(cli) => cli,
        Err(err) => return loadbench::cli::report_usage_error(&err),
    };
    let outcome = match &args.command {
        Some(cli::Command::Url(url)) => oneshot::run(&args, url),
        None => app::run(&args),
    };
    match outcome {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::from(err.exit_code())
        }
    }
}
