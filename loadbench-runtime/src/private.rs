//! Items used by the code that `#[scenario]` generates. Not public API and not covered by semver.

pub use crate::config::{Load, ScenarioConfig};
pub use crate::registry::ScenarioEntry;
pub use crate::threshold::{Metric, Op, Threshold};
pub use crate::vu::{VirtualUser, VuFuture, vu_future};
pub use inventory;
