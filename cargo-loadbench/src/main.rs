//! `cargo loadbench`: builds the bench targets that use loadbench, runs their scenarios, checks
//! their thresholds, compares them with a baseline and writes the results.
//!
//! `main` only parses the command line and maps the outcome to an exit code. Each command's front
//! half is in [`dispatch`] (the workspace's scenarios, `url`, `report`); all end in [`finish`],
//! the shared tail. The JSON document they write is the `cargo_loadbench` library's contract.

// `println!` and `eprintln!` panic when the stream cannot be written: every line goes through
// `loadbench::console` instead.
#![warn(clippy::print_stdout, clippy::print_stderr)]

mod ab;
mod baseline;
mod build;
mod cli;
mod compare;
mod discover;
mod dispatch;
mod error;
mod finish;
mod gate;
mod kube;
mod merge;
mod mistakes;
mod output;
mod plausible;
#[cfg(test)]
mod readers_fuzz;
mod rounds;
mod run;
mod scenarios;
mod settings;
mod targets;
mod toolchain;
mod versioned;

use std::process::ExitCode;

use clap::Parser;
use loadbench::console::err;

fn main() -> ExitCode {
    let cli::Cargo::Loadbench(args) = match cli::Cargo::try_parse() {
        Ok(cli) => cli,
        Err(err) => return cli::report_usage_error(&err),
    };
    let outcome = match &args.command {
        Some(cli::Command::Ab(ab)) => dispatch::ab::run(&args, ab),
        Some(cli::Command::Url(url)) => dispatch::url::run(&args, url),
        Some(cli::Command::Report(report)) => dispatch::report::run(&args, report),
        Some(cli::Command::Merge(merge)) => dispatch::merge::run(&args, merge),
        Some(cli::Command::Kube(kube)) => dispatch::kube::run(&args, kube),
        None => dispatch::workspace::run(&args),
    };
    let code = match outcome {
        Ok(code) => code,
        Err(err) => {
            err!("error: {err}");
            err.exit_code()
        }
    };
    // A stdout or stderr that could not be written fails the run, whatever it measured.
    ExitCode::from(loadbench::console::exit_code(code))
}
