//! `cargo loadbench ab BASE_REV`: two commits of one repository measured on one machine, in
//! interleaved rounds, and compared by paired ratios ([`crate::compare::compare_paired`]).
//!
//! The command's flow is in [`crate::dispatch::ab`]; its parts are here:
//!
//! - [`git`]: the repository, its commits, and the worktree a side is checked out in;
//! - [`locate`]: which bench crate is measured, and where it is in each checkout;
//! - [`side`]: a side's checkout, built and asked for its scenarios;
//! - [`serve`]: `--serve CMD`, each side's service, from start to stop;
//! - [`plan`]: what a round runs on each side;
//! - [`schedule`]: the rounds, in alternating order.

pub mod git;
pub mod locate;
pub mod plan;
pub mod schedule;
pub mod serve;
pub mod side;
