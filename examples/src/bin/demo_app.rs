//! The demo application as a process of its own, so that its CPU and memory can be measured
//! apart from the load generator's: the journey bench starts it
//! (`Harness::default_target_process`), and it can serve the other examples too
//! (`--target URL`).
//!
//! Serves every route of the demo server (see the `loadbench_examples` crate) on 127.0.0.1 and
//! an ephemeral port, with both databases filled, then prints its base URL on stdout. It runs
//! until its standard input closes (or Ctrl-C): started by a bench, it ends with the bench.

use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let url = match loadbench_examples::start_demo_app() {
        Ok(url) => url,
        Err(err) => {
            eprintln!("error: demo-app cannot start: {err}");
            return ExitCode::FAILURE;
        }
    };
    let mut stdout = std::io::stdout();
    if writeln!(stdout, "{url}").and_then(|()| stdout.flush()).is_err() {
        return ExitCode::FAILURE;
    }
    // The server runs on threads of its own; this one only waits for the end of the input.
    let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
    ExitCode::SUCCESS
}
