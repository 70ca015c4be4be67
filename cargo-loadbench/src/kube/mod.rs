//! `cargo loadbench kube`: a distributed run on Kubernetes, as data and pure functions. The
//! commands themselves (flags, kubectl, files) are in `dispatch/kube.rs`.
//!
//! A run is an Indexed Job (`manifest.rs`): pod I runs the bench binary with `--shard I/N`
//! (Kubernetes puts I in `JOB_COMPLETION_INDEX`) and `--start-at T`, through a small `sh` wrapper
//! that prints the binary's JSON to the pod's log between two marker lines. The log is the only
//! way out of a pod that needs no volume, no object store and no credentials; the wrapper needs no
//! change in the runtime, whose `--json FILE` writes atomically (a temporary file renamed over it,
//! which `/dev/stdout` is not fit for). `logs.rs` reads the markers back, `status.rs` the Job's
//! and its pods' state from `kubectl … -o json`, `kubectl.rs` runs kubectl.

pub mod kubectl;
pub mod logs;
pub mod manifest;
pub mod status;

/// The label on the Job and its pods that names the run: the pods' anti-affinity spreads them
/// by it, and `kube collect` finds them by it.
pub const RUN_LABEL: &str = "loadbench.dev/run";

/// The line before a shard's results in its pod's log.
pub const BEGIN_MARKER: &str = "--- loadbench results begin ---";

/// The line after a shard's results in its pod's log.
pub const END_MARKER: &str = "--- loadbench results end ---";

/// The name of the container running the bench binary, for `kubectl logs -c`.
pub const CONTAINER: &str = "bench";

/// The annotation in which Kubernetes gives each pod of an Indexed Job its index.
pub const INDEX_ANNOTATION: &str = "batch.kubernetes.io/job-completion-index";
