//! Where each scenario's requests go: `--target`, then `LOADBENCH_TARGET`, then the attribute's
//! `target = "…"`, then the harness's default target, started only if some scenario needs it.
//! Every URL is decided and checked before any scenario runs, so that a configuration mistake
//! costs no load-test time.

use std::process::Command;

use super::HarnessError;
use super::process::ServerProcess;
use super::watch::Watch;
use crate::cli::TARGET_ENV;
use crate::engine::registry::ScenarioEntry;
use crate::http::Target;

/// Where the default target comes from.
pub(super) enum DefaultTarget {
    /// A function that starts a server (in this process, say) and returns its URL.
    Start(Box<dyn FnOnce() -> std::io::Result<String>>),
    /// A server process to start, watch as `name` and stop at the end.
    Process { name: String, command: Box<Command> },
}

/// The URLs of `selected`, in order, and the default target's server process when one was
/// started (it must live until the run ends, and is then stopped), with the process to watch.
pub(super) struct Resolved {
    pub(super) urls: Vec<String>,
    pub(super) server: Option<(ServerProcess, Watch)>,
    /// The URL of the default target when it was started in this process
    /// ([`DefaultTarget::Start`]), whose sockets share this process's open-file limit.
    pub(super) started_here: Option<String>,
}

/// Decides the URL of every selected scenario: `given` (`--target` or [`super::Harness::target`])
/// over `LOADBENCH_TARGET` over the attribute over `default`.
pub(super) fn resolve(
    selected: &[&'static ScenarioEntry],
    given: Option<&str>,
    default: Option<DefaultTarget>,
) -> Result<Resolved, HarnessError> {
    let env = std::env::var(TARGET_ENV).ok().filter(|t| !t.is_empty());
    let mut default = default;
    let mut fallback: Option<String> = None;
    let mut server = None;
    let mut started_here = None;
    let mut urls = Vec::with_capacity(selected.len());
    for entry in selected {
        let url = match (given.or(env.as_deref()), entry.config.target) {
            (Some(url), _) | (None, Some(url)) => url.to_owned(),
            (None, None) => match (&fallback, default.take()) {
                (Some(url), _) => url.clone(),
                (None, Some(DefaultTarget::Start(start))) => {
                    let url = start().map_err(HarnessError::DefaultTarget)?;
                    started_here = Some(url.clone());
                    fallback.insert(url).clone()
                }
                (None, Some(DefaultTarget::Process { name, command })) => {
                    let process = ServerProcess::start(*command).map_err(HarnessError::DefaultTarget)?;
                    let url = process.url().to_owned();
                    let watch = Watch { name, pid: process.pid() };
                    server = Some((process, watch));
                    fallback.insert(url).clone()
                }
                (None, None) => return Err(HarnessError::NoTarget { scenario: entry.name.to_owned() }),
            },
        };
        Target::check_syntax(&url)?;
        urls.push(url);
    }
    Ok(Resolved { urls, server, started_here })
}
