//! A server the bench binary starts as a child process of its own
//! ([`Harness::default_target_process`](crate::Harness::default_target_process)), so that its CPU
//! and memory are its own and not the load generator's.

use std::io::{BufRead, BufReader};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// How long the server may take to print its URL: long enough to fill a database in a debug
/// build.
const URL_TIMEOUT: Duration = Duration::from_secs(60);

/// A running server process; killed when dropped.
#[derive(Debug)]
pub(crate) struct ServerProcess {
    child: Child,
    // Held, never written: the server's standard input closes when this process exits, however
    // it exits, so a server that stops at the end of its input cannot outlive the bench.
    _stdin: Option<ChildStdin>,
    url: String,
}

impl ServerProcess {
    /// Starts `command` and waits for the first line of its standard output, its base URL. The
    /// rest of its output is discarded; its standard error is the bench's.
    pub(crate) fn start(mut command: Command) -> std::io::Result<ServerProcess> {
        let program = command.get_program().to_string_lossy().into_owned();
        // A process group of its own, so that the Ctrl-C meant for the bench (which then finishes
        // its in-flight requests and reports) does not stop the server under them.
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| std::io::Error::new(e.kind(), format!("cannot start `{program}`: {e}")))?;
        let stdin = child.stdin.take();
        let Some(stdout) = child.stdout.take() else {
            kill(&mut child);
            return Err(std::io::Error::other(format!("`{program}` has no standard output")));
        };
        let (sender, receiver) = mpsc::channel();
        let reader = std::thread::Builder::new().name("loadbench-server-stdout".into()).spawn(move || {
            let mut stdout = BufReader::new(stdout);
            let mut line = String::new();
            let first = stdout.read_line(&mut line).map(|_| line);
            let _ = sender.send(first);
            // Kept draining, so that a server that logs to stdout never blocks on a full pipe.
            let _ = std::io::copy(&mut stdout, &mut std::io::sink());
        });
        if let Err(err) = reader {
            kill(&mut child);
            return Err(err);
        }
        let url = match receiver.recv_timeout(URL_TIMEOUT) {
            Ok(Ok(line)) if !line.trim().is_empty() => Ok(line.trim().to_owned()),
            Ok(Ok(_)) => Err(format!("`{program}` exited without printing its URL")),
            Ok(Err(err)) => Err(format!("cannot read the URL `{program}` prints: {err}")),
            Err(_) => Err(format!("`{program}` printed no URL within {} s", URL_TIMEOUT.as_secs())),
        }
        .map_err(|message| {
            kill(&mut child);
            std::io::Error::other(message)
        })?;
        Ok(ServerProcess { child, _stdin: stdin, url })
    }

    /// Its process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The base URL it printed.
    pub(crate) fn url(&self) -> &str {
        &self.url
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        kill(&mut self.child);
    }
}

fn kill(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}
