//! Items used by the code that `#[scenario]` generates. Not public API and not covered by semver.

pub use crate::config::{Load, Rate, RateStage, ScenarioConfig, Stage, ThinkTime};
pub use crate::ctx::Ctx;
pub use crate::registry::ScenarioEntry;
pub use crate::threshold::{Metric, Op, Threshold};
pub use crate::vu::{Hook, HookFuture, VirtualUser, VuFuture, hook_future, vu_future};
pub use inventory;
