//! Items used by the code that `#[scenario]` generates. Not public API and not covered by semver.

pub use crate::config::{CookieMode, Load, Protocol, Rate, RateStage, ScenarioConfig, Stage, ThinkTime, Transport};
pub use crate::engine::registry::ScenarioEntry;
pub use crate::engine::vu::{Hook, HookFuture, VirtualUser, VuFuture, hook_future, vu_future};
pub use crate::feed::{FeedConfig, FeedEnd, FeedMode};
pub use crate::http::Ctx;
pub use inventory;
pub use loadbench_grammar::{Metric, Op, Percentile, RowThreshold, Threshold};
