//! One file per command, as cargo-nextest keeps them: each runs its own front half (what to run,
//! and running it) and hands its results to the shared tail in [`crate::finish`].

pub mod ab;
pub mod kube;
pub mod merge;
pub mod report;
pub mod url;
pub mod workspace;
