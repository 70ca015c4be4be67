//! `cargo loadbench ab --serve CMD`: each side's service, started from that side's checkout.
//!
//! The command runs under `sh -c`, in the checkout's root, in a process group of its own, with a
//! free port handed to it as `$PORT` (and as `{port}` in the command). It is ready when the port
//! accepts a connection, on 127.0.0.1 or [::1]; it gets a bounded time for that, and a service
//! that exits first or never listens is a clear error with the last lines it wrote. At the end,
//! and on Ctrl-C or SIGTERM, the whole group is stopped (SIGTERM, then SIGKILL after a grace),
//! so that `npm start`'s node or `cargo run`'s server go with the shell that started them.
//!
//! Each group is written down (`services` in the ab directory) while it runs: a run killed
//! outright (SIGKILL, a lost machine) leaves it there, and the next run stops what is left of
//! it, after checking that the process is one of ours (it carries [`MARK_ENV`] naming that
//! directory), before measuring anything.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use loadbench::cli::interrupt;
use loadbench::console::err;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

/// How long a service may take to accept connections when `--serve-timeout` is not given: long
/// enough for `cargo run --release` to build a small server on a cold CI cache.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

/// How long a stopped service may take to exit after SIGTERM before it gets SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// How many of a failed service's last lines an error shows.
const TAIL_LINES: usize = 20;

/// The variable every service gets, naming the ab directory: how a later run tells a leftover
/// service of its own from a process that happens to have the same id now.
pub const MARK_ENV: &str = "LOADBENCH_AB_DIR";

/// The variable a service gets saying which side it is: `base` or `head`.
pub const SIDE_ENV: &str = "LOADBENCH_SIDE";

/// What to start and where to write down what was started.
#[derive(Debug, Clone)]
pub struct Launch<'a> {
    /// The command as given to `--serve`.
    pub command: &'a str,
    /// The ab directory: the list of running groups, the logs, and [`MARK_ENV`].
    pub ab_dir: &'a Path,
    /// `--serve-timeout`.
    pub timeout: Duration,
    /// `--quiet`: no line while waiting.
    pub quiet: bool,
}

/// A running service.
#[derive(Debug)]
pub struct Service {
    side: &'static str,
    child: Child,
    group: u32,
    url: String,
    log: PathBuf,
    list: PathBuf,
}

impl Service {
    /// Starts `launch.command` in `dir` as `side`'s service and waits until it accepts
    /// connections. The error says why it is not serving, with its last lines.
    pub fn start(side: &'static str, dir: &Path, launch: &Launch) -> Result<Service, String> {
        let port = free_port().map_err(|e| format!("cannot find a free port for the service: {e}"))?;
        let log = launch.ab_dir.join(format!("{side}.log"));
        let out = File::create(&log).map_err(|e| format!("cannot create {}: {e}", log.display()))?;
        let err = out.try_clone().map_err(|e| format!("cannot open {}: {e}", log.display()))?;
        let command = launch.command.replace("{port}", &port.to_string());
        let mut shell = Command::new("sh");
        shell
            .arg("-c")
            .arg(&command)
            .current_dir(dir)
            .env("PORT", port.to_string())
            .env(SIDE_ENV, side)
            .env(MARK_ENV, launch.ab_dir)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .process_group(0);
        let child = shell.spawn().map_err(|e| format!("cannot start `sh -c {command}`: {e}"))?;
        let group = child.id();
        interrupt::guard_group(group);
        let list = launch.ab_dir.join("services");
        remember(&list, group);
        let mut service = Service { side, child, group, url: String::new(), log, list };
        match service.wait_ready(port, launch) {
            Ok(url) => {
                service.url = url;
                Ok(service)
            }
            Err(reason) => {
                service.stop();
                Err(format!("the service `{}` {reason}{}", launch.command, service.tail()))
            }
        }
    }

    /// Waits until `port` accepts a connection, the child exits, the timeout passes or a signal
    /// comes; returns the base URL it answers at.
    fn wait_ready(&mut self, port: u16, launch: &Launch) -> Result<String, String> {
        let started = Instant::now();
        let mut next_note = Duration::from_secs(10);
        let candidates = [
            (SocketAddr::from((Ipv4Addr::LOCALHOST, port)), format!("http://127.0.0.1:{port}")),
            (SocketAddr::from((Ipv6Addr::LOCALHOST, port)), format!("http://[::1]:{port}")),
        ];
        loop {
            for (address, url) in &candidates {
                if TcpStream::connect_timeout(address, Duration::from_millis(200)).is_ok() {
                    return Ok(url.clone());
                }
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("exited ({status}) before accepting connections on port {port} ($PORT)"));
            }
            if interrupt::interrupted() {
                return Err("was stopped by a signal before it accepted connections".to_owned());
            }
            let waited = started.elapsed();
            if waited >= launch.timeout {
                return Err(format!(
                    "did not accept connections on port {port} within {} s: does it listen on $PORT (or {{port}})? (--serve-timeout)",
                    launch.timeout.as_secs()
                ));
            }
            if waited >= next_note {
                if !launch.quiet {
                    err!(
                        "     Waiting for the {} service on port {port} ({} s of {} s; its output: {})",
                        self.side,
                        waited.as_secs(),
                        launch.timeout.as_secs(),
                        self.log.display()
                    );
                }
                next_note += Duration::from_secs(30);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The base URL it answers at.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// `Ok` while the service runs; once it has exited, why (it exited `during`, such as `round 3
    /// of 6`), with its last lines.
    pub fn check(&mut self, during: &str) -> Result<(), String> {
        match self.child.try_wait() {
            Ok(None) => Ok(()),
            Ok(Some(status)) => Err(format!("the service exited ({status}) during {during}{}", self.tail())),
            Err(e) => Err(format!("the service cannot be waited for: {e}")),
        }
    }

    /// Stops the whole process group: SIGTERM, then SIGKILL to what is left after a grace.
    pub fn stop(&mut self) {
        stop_group(self.group, Some(&mut self.child));
        interrupt::release_group(self.group);
        forget(&self.list, self.group);
    }

    /// `; its last lines (log):` and the lines, indented, or nothing when it wrote none.
    fn tail(&self) -> String {
        let lines = last_lines(&self.log, TAIL_LINES);
        if lines.is_empty() {
            return format!("; it wrote nothing (log: {})", self.log.display());
        }
        let mut out = format!("; its last lines ({}):", self.log.display());
        for line in lines {
            out.push_str("\n  | ");
            out.push_str(&line);
        }
        out
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A port nobody listens on now. Another process could take it before the service does; the
/// service then fails to bind and says so in its log.
fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?.local_addr()?.port())
}

/// Whether any process of `group` is still running. One that has exited but is not reaped yet
/// (a zombie: an orphan waits for the machine's init to reap it, which can take a second) does
/// not count, where the kernel says which (Linux's `/proc`).
fn group_alive(group: u32) -> bool {
    let signalled = i32::try_from(group).is_ok_and(|g| killpg(Pid::from_raw(g), None).is_ok());
    signalled && running_in(group).unwrap_or(true)
}

/// Whether a process of `group` that is not a zombie is listed in `/proc`; `None` where there is
/// no `/proc` to ask.
fn running_in(group: u32) -> Option<bool> {
    let entries = std::fs::read_dir("/proc").ok()?;
    let running = entries.flatten().any(|entry| {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            return false;
        };
        // `pid (comm) state ppid pgrp …`: the command may hold spaces and parentheses, so the
        // fields are read after the last `)`.
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let mut fields = stat.rsplit_once(')').map(|(_, rest)| rest).unwrap_or("").split_whitespace();
        let (state, _ppid, pgrp) = (fields.next(), fields.next(), fields.next());
        pgrp.and_then(|g| g.parse::<u32>().ok()) == Some(group) && state.is_some_and(|s| s != "Z")
    });
    Some(running)
}

fn signal_group(group: u32, signal: Signal) {
    if let Ok(group) = i32::try_from(group) {
        let _ = killpg(Pid::from_raw(group), signal);
    }
}

/// SIGTERM to `group`, SIGKILL to what is left of it after [`STOP_GRACE`]; `child`, the group's
/// leader when it is ours, is reaped on the way.
fn stop_group(group: u32, mut child: Option<&mut Child>) {
    signal_group(group, Signal::SIGTERM);
    let deadline = Instant::now() + STOP_GRACE;
    loop {
        if let Some(child) = child.as_deref_mut() {
            let _ = child.try_wait();
        }
        if !group_alive(group) {
            return;
        }
        if Instant::now() >= deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    signal_group(group, Signal::SIGKILL);
    if let Some(child) = child {
        let _ = child.wait();
    }
}

/// The last `n` lines of `path` (its last 64 KiB at most), each cut to 300 characters.
fn last_lines(path: &Path, n: usize) -> Vec<String> {
    let mut text = Vec::new();
    if let Ok(mut file) = File::open(path) {
        let len = file.metadata().map(|m| m.len()).unwrap_or(0);
        let _ = file.seek(SeekFrom::Start(len.saturating_sub(64 * 1024)));
        let _ = file.read_to_end(&mut text);
    }
    let text = String::from_utf8_lossy(&text);
    let lines: Vec<String> = text
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.is_empty())
        .map(|l| if l.chars().count() > 300 { l.chars().take(300).chain(['…']).collect() } else { l.to_owned() })
        .collect();
    lines[lines.len().saturating_sub(n)..].to_vec()
}

/// Adds `group` to the list of running services.
fn remember(list: &Path, group: u32) {
    let mut groups = read_list(list);
    groups.push(group);
    write_list(list, &groups);
}

/// Takes `group` off the list of running services.
fn forget(list: &Path, group: u32) {
    let mut groups = read_list(list);
    groups.retain(|&g| g != group);
    write_list(list, &groups);
}

fn read_list(list: &Path) -> Vec<u32> {
    std::fs::read_to_string(list).unwrap_or_default().lines().filter_map(|l| l.trim().parse().ok()).collect()
}

fn write_list(list: &Path, groups: &[u32]) {
    let text: String = groups.iter().map(|g| format!("{g}\n")).collect();
    // Best effort: the list only helps a later run clean up after a killed one.
    let _ = std::fs::write(list, text);
}

/// Stops the services an earlier run under `ab_dir` left running (it was killed before it could),
/// each only after checking that its process still carries [`MARK_ENV`] set to `ab_dir`. Returns
/// how many were stopped.
pub fn stop_leftovers(ab_dir: &Path) -> usize {
    let list = ab_dir.join("services");
    let mark = format!("{MARK_ENV}={}", ab_dir.display());
    let mut stopped = 0;
    for group in read_list(&list) {
        let environ = std::fs::read(format!("/proc/{group}/environ")).unwrap_or_default();
        if environ.split(|&b| b == 0).any(|entry| entry == mark.as_bytes()) {
            stop_group(group, None);
            stopped += 1;
        }
    }
    let _ = std::fs::remove_file(&list);
    stopped
}

#[cfg(test)]
// A broken test environment (no sh) should fail loudly.
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    fn launch<'a>(command: &'a str, dir: &'a Path, timeout: Duration) -> Launch<'a> {
        Launch { command, ab_dir: dir, timeout, quiet: true }
    }

    /// A service in shell: listens on $PORT with a one-line Python server, and runs a child of
    /// its own (`sleep`) in the background, as `npm start` runs node.
    const PYTHON: &str = "sleep 300 & exec python3 -c \"import os,socket,time; s=socket.socket(); \
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(('127.0.0.1', int(os.environ['PORT']))); \
        s.listen(); print('listening', flush=True); time.sleep(300)\"";

    #[test]
    fn a_service_gets_its_port_is_awaited_and_its_whole_group_is_stopped() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut service = Service::start("base", dir.path(), &launch(PYTHON, dir.path(), Duration::from_secs(30)))
            .expect("the service starts");
        assert!(service.url().starts_with("http://127.0.0.1:"), "{}", service.url());
        assert!(service.check("round 1 of 6").is_ok());
        let group = service.group;
        assert_eq!(read_list(&dir.path().join("services")), [group], "written down while it runs");
        assert!(group_alive(group));
        service.stop();
        assert!(!group_alive(group), "the shell's background child is gone too");
        assert!(read_list(&dir.path().join("services")).is_empty());
    }

    #[test]
    fn a_service_that_exits_or_never_listens_is_an_error_with_its_last_lines() {
        let dir = tempfile::tempdir().expect("tempdir");
        let failing = "echo starting; echo 'Error: no module named flask' >&2; exit 3";
        let err = Service::start("head", dir.path(), &launch(failing, dir.path(), Duration::from_secs(30)))
            .expect_err("it exits");
        assert!(err.starts_with("the service `echo starting; "), "{err}");
        assert!(err.contains("exited (exit status: 3) before accepting connections on port "), "{err}");
        assert!(err.ends_with("\n  | starting\n  | Error: no module named flask"), "{err}");

        let started = Instant::now();
        let err = Service::start("head", dir.path(), &launch("sleep 60", dir.path(), Duration::from_millis(500)))
            .expect_err("never listens");
        assert!(err.contains("did not accept connections on port "), "{err}");
        assert!(err.contains("; it wrote nothing"), "{err}");
        assert!(started.elapsed() < Duration::from_secs(20), "bounded: {:?}", started.elapsed());
    }

    #[test]
    fn a_service_that_exits_mid_run_says_when_and_why() {
        let dir = tempfile::tempdir().expect("tempdir");
        let command = PYTHON.replace(
            "print('listening', flush=True); time.sleep(300)",
            "print('out of memory', flush=True); time.sleep(0.5); raise SystemExit(7)",
        );
        let mut service =
            Service::start("head", dir.path(), &launch(&command, dir.path(), Duration::from_secs(30))).expect("starts");
        let deadline = Instant::now() + Duration::from_secs(20);
        let err = loop {
            match service.check("round 2 of 6") {
                Err(err) => break err,
                Ok(()) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(50)),
                Ok(()) => panic!("the service did not exit"),
            }
        };
        assert!(err.starts_with("the service exited (exit status: 7) during round 2 of 6; its last lines ("), "{err}");
        assert!(err.ends_with("\n  | out of memory"), "{err}");
    }

    #[test]
    fn the_port_is_in_the_command_too() {
        let dir = tempfile::tempdir().expect("tempdir");
        let command = PYTHON.replace("int(os.environ['PORT'])", "{port}");
        let mut service =
            Service::start("head", dir.path(), &launch(&command, dir.path(), Duration::from_secs(30))).expect("starts");
        service.stop();
    }

    #[test]
    fn a_leftover_service_of_ours_is_stopped_and_another_process_is_not() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut ours = Command::new("sh");
        ours.args(["-c", "sleep 300"]).env(MARK_ENV, dir.path()).process_group(0);
        let mut ours = ours.spawn().expect("spawn");
        let mut stranger = Command::new("sh");
        stranger.args(["-c", "sleep 300"]).process_group(0);
        let mut stranger = stranger.spawn().expect("spawn");
        write_list(&dir.path().join("services"), &[ours.id(), stranger.id()]);
        // Until it has exec'd, a child's /proc environ is still its parent's, without the mark.
        let mark = format!("{MARK_ENV}={}", dir.path().display());
        let deadline = Instant::now() + Duration::from_secs(10);
        while !std::fs::read(format!("/proc/{}/environ", ours.id()))
            .is_ok_and(|env| env.split(|&b| b == 0).any(|e| e == mark.as_bytes()))
        {
            assert!(Instant::now() < deadline, "the child never ran");
            std::thread::sleep(Duration::from_millis(10));
        }

        assert_eq!(stop_leftovers(dir.path()), 1);
        assert!(ours.wait().is_ok_and(|s| !s.success()), "killed");
        assert!(stranger.try_wait().is_ok_and(|s| s.is_none()), "left alone");
        let _ = stranger.kill();
        let _ = stranger.wait();
        assert!(!dir.path().join("services").exists());
    }
}
