//! Running kubectl: the one way `cargo loadbench kube` talks to a cluster, so that whatever
//! kubectl is set up for (contexts, credentials, plugins) works, and no Kubernetes client crate
//! is built for two commands.

use std::ffi::OsString;
use std::io::Write as _;
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::error::Error;

/// Environment variable naming the kubectl to run instead of `kubectl` from PATH (a wrapper, a
/// pinned version; the tests' stand-in).
pub const KUBECTL_ENV: &str = "LOADBENCH_KUBECTL";

/// kubectl, pointed at a namespace or at its context's.
#[derive(Debug, Clone)]
pub struct Kubectl {
    program: OsString,
    namespace: Option<String>,
}

impl Kubectl {
    /// The kubectl of [`KUBECTL_ENV`] or PATH, for `namespace` (`None`: the context's).
    pub fn new(namespace: Option<&str>) -> Kubectl {
        let program = std::env::var_os(KUBECTL_ENV).filter(|p| !p.is_empty()).unwrap_or_else(|| "kubectl".into());
        Kubectl { program, namespace: namespace.map(str::to_owned) }
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(&self.program);
        command.args(args);
        if let Some(namespace) = &self.namespace {
            command.args(["--namespace", namespace]);
        }
        command
    }

    /// `kubectl ARGS…` as a message shows it.
    fn shown(&self, args: &[&str]) -> String {
        let namespace = self.namespace.as_deref().map(|ns| format!(" --namespace {ns}")).unwrap_or_default();
        format!("kubectl {}{namespace}", args.join(" "))
    }

    fn spawn_error(&self, err: std::io::Error) -> Error {
        let program = self.program.to_string_lossy().into_owned();
        if err.kind() == std::io::ErrorKind::NotFound {
            Error::KubectlMissing { program }
        } else {
            Error::Spawn { program, source: err }
        }
    }

    /// What `kubectl ARGS…` printed on stdout; its stderr, when it fails, is the error's message.
    pub fn output(&self, args: &[&str]) -> Result<String, Error> {
        let output = self.command(args).stdin(Stdio::null()).output().map_err(|e| self.spawn_error(e))?;
        if !output.status.success() {
            return Err(Error::Kubectl { command: self.shown(args), message: failure(&output.stderr, output.status) });
        }
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    }

    /// `kubectl ARGS… -o json`, parsed.
    pub fn json(&self, args: &[&str]) -> Result<Value, Error> {
        let all: Vec<&str> = args.iter().copied().chain(["-o", "json"]).collect();
        let text = self.output(&all)?;
        serde_json::from_str(&text)
            .map_err(|e| Error::Kubectl { command: self.shown(&all), message: format!("printed no JSON: {e}") })
    }

    /// `kubectl apply -f -` with `manifest` on its stdin; kubectl's own lines (`job.batch/NAME
    /// created`) go to the user as they come.
    pub fn apply(&self, manifest: &str) -> Result<(), Error> {
        let args = ["apply", "-f", "-"];
        let mut child = self
            .command(&args)
            .stdin(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| self.spawn_error(e))?;
        if let Some(mut stdin) = child.stdin.take() {
            // A kubectl that exits early closes the pipe: its stderr then says why.
            let _ = stdin.write_all(manifest.as_bytes());
        }
        let output = child.wait_with_output().map_err(|e| self.spawn_error(e))?;
        if !output.status.success() {
            return Err(Error::Kubectl { command: self.shown(&args), message: failure(&output.stderr, output.status) });
        }
        Ok(())
    }
}

/// kubectl's reason for a failure, on one line: its last non-empty stderr line (`Error from
/// server (NotFound): jobs.batch "x" not found`), or its exit status.
fn failure(stderr: &[u8], status: std::process::ExitStatus) -> String {
    let text = String::from_utf8_lossy(stderr);
    text.lines().map(str::trim).rfind(|l| !l.is_empty()).map_or_else(|| status.to_string(), str::to_owned)
}
