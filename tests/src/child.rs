//! `cargo loadbench` as a child process the test watches while it runs: its peak memory, the
//! signals a user or a CI runner sends it, and a deadline after which it is killed, so a run
//! that hangs fails its test instead of the whole suite.

// A broken test environment (the binary does not build, a file cannot be written) should fail
// loudly.
#![allow(clippy::expect_used)]

use std::ffi::OsStr;
use std::fs::File;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::cli::cargo_loadbench_path;

/// How often the child's memory is sampled.
const POLL: Duration = Duration::from_millis(10);

/// A running `cargo loadbench` child.
#[derive(Debug)]
pub struct Running {
    child: std::process::Child,
    started: Instant,
    peak_rss_kib: u64,
    stdout: File,
    stderr: File,
}

/// What a finished child did.
#[derive(Debug)]
pub struct Finished {
    /// The exit code; `None` when killed by a signal.
    pub code: Option<i32>,
    /// Everything on stdout.
    pub stdout: String,
    /// Everything on stderr.
    pub stderr: String,
    /// From the start to the exit.
    pub wall: Duration,
    /// The highest resident set size seen (`VmHWM`, in KiB), sampled every 10 ms.
    pub peak_rss_kib: u64,
}

impl Running {
    /// Starts `cargo loadbench ARGS…` in `dir` (outside any Cargo workspace, as the suite runs
    /// `url` so that no `cargo metadata` child shares the measurement). `shell`, when given, is
    /// run by `sh` first in the same process (`ulimit -n 256`, `umask 022`), which then `exec`s
    /// the binary: the child's pid stays the generator's.
    pub fn start(dir: &Path, shell: Option<&str>, args: &[&str]) -> Running {
        Running::start_with_env(dir, shell, args, &[])
    }

    /// [`Running::start`] with extra environment variables.
    pub fn start_with_env(dir: &Path, shell: Option<&str>, args: &[&str], env: &[(&str, &OsStr)]) -> Running {
        let binary = cargo_loadbench_path();
        let mut command = match shell {
            Some(line) => {
                let mut c = Command::new("sh");
                c.arg("-c").arg(format!("{line} && exec \"$0\" \"$@\"")).arg(binary);
                c
            }
            None => Command::new(binary),
        };
        command.arg("loadbench").args(crate::cli::judged_args(args, false));
        Running::spawn(command, dir, env)
    }

    /// Starts `program ARGS…` (a bench binary run directly, as `cargo bench` runs it) in `dir`,
    /// with extra environment variables, watched as [`Running::start`]'s child is.
    pub fn start_program(program: &Path, dir: &Path, args: &[&str], env: &[(&str, &OsStr)]) -> Running {
        let mut command = Command::new(program);
        command.args(args);
        Running::spawn(command, dir, env)
    }

    /// Runs `command` in `dir` with `env`, its output into files, without the variables that
    /// would make it a bench binary run for `cargo loadbench` or write a step summary.
    fn spawn(mut command: Command, dir: &Path, env: &[(&str, &OsStr)]) -> Running {
        // Files, not pipes: a child that fills a pipe nobody reads while the test polls would block.
        let stdout = tempfile::tempfile().expect("stdout file");
        let stderr = tempfile::tempfile().expect("stderr file");
        command
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(stdout.try_clone().expect("clone stdout file"))
            .stderr(stderr.try_clone().expect("clone stderr file"))
            .env_remove(loadbench::cli::TARGET_ENV)
            .env_remove(loadbench::cli::OUTPUT_ENV)
            .env_remove("GITHUB_STEP_SUMMARY");
        for (key, value) in env {
            command.env(key, value);
        }
        let child = command.spawn().expect("start the child");
        Running { child, started: Instant::now(), peak_rss_kib: 0, stdout, stderr }
    }

    /// The highest resident set size seen so far (`VmHWM`, in KiB).
    pub fn peak_rss_kib(&self) -> u64 {
        self.peak_rss_kib
    }

    /// Whether the child has exited.
    pub fn exited(&mut self) -> bool {
        self.child.try_wait().expect("poll the child").is_some()
    }

    /// The child's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends `signal` (`INT`, `TERM`, …) to the child, as `kill -SIGNAL PID` does.
    pub fn signal(&self, signal: &str) {
        let status = Command::new("kill").arg(format!("-{signal}")).arg(self.pid().to_string()).status();
        assert!(status.is_ok_and(|s| s.success()), "kill -{signal} {}", self.pid());
    }

    /// Samples the child until `done` holds, it exits, or `limit` passes (from now); whether
    /// `done` held.
    pub fn wait_for(&mut self, limit: Duration, done: impl Fn() -> bool) -> bool {
        let started = Instant::now();
        loop {
            if done() {
                return true;
            }
            self.sample();
            if self.child.try_wait().expect("poll the child").is_some() || started.elapsed() > limit {
                return done();
            }
            std::thread::sleep(POLL);
        }
    }

    /// Waits for the child to exit, sampling its memory; kills it (and panics, with what it
    /// printed) if it is still running `deadline` after its start.
    pub fn finish(mut self, deadline: Duration) -> Finished {
        let status = loop {
            self.sample();
            if let Some(status) = self.child.try_wait().expect("poll the child") {
                break status;
            }
            if self.started.elapsed() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!("cargo loadbench still ran after {deadline:?}; killed. {:#?}", self.output(None));
            }
            std::thread::sleep(POLL);
        };
        self.output(status.code())
    }

    /// Kills the child if it still runs, and returns what it printed.
    pub fn stop(&mut self) -> Finished {
        let _ = self.child.kill();
        let status = self.child.wait().expect("wait for the child");
        self.output(status.code())
    }

    fn output(&mut self, code: Option<i32>) -> Finished {
        Finished {
            code,
            stdout: read_all(&mut self.stdout),
            stderr: read_all(&mut self.stderr),
            wall: self.started.elapsed(),
            peak_rss_kib: self.peak_rss_kib,
        }
    }

    /// Reads `VmHWM`, the kernel's own high-water mark of the process's resident memory, so
    /// a peak between two samples is not missed. A process that has just exited has none.
    fn sample(&mut self) {
        let Ok(status) = std::fs::read_to_string(format!("/proc/{}/status", self.pid())) else { return };
        let hwm = status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
        if let Some(kib) = hwm {
            self.peak_rss_kib = self.peak_rss_kib.max(kib);
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        // A test that panicked before `finish` must not leave a generator loading a server.
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn read_all(file: &mut File) -> String {
    use std::io::{Read, Seek};
    let mut text = String::new();
    let _ = file.rewind().and_then(|_| file.read_to_string(&mut text));
    text
}

/// Whether process `pid` handles `signal` (a number: 15 for SIGTERM), from the caught-signal
/// mask in /proc/PID/status: once it does, the signal stops it the way the program decided, not
/// by the default action.
pub fn handles(pid: u32, signal: u32) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else { return false };
    let mask =
        status.lines().find_map(|l| l.strip_prefix("SigCgt:")).and_then(|m| u64::from_str_radix(m.trim(), 16).ok());
    mask.is_some_and(|m| (1..=64).contains(&signal) && m & (1 << (signal - 1)) != 0)
}
